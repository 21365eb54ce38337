# The browser test of `baton serve`: headless Chromium (Debian's package)
# driven by a pinned playwright-core (tests/browser/serve.mjs; serve_all.mjs:
# `serve --all` over three projects, one deleted), then the page
# of `baton bench report --html` opened offline (tests/browser/bench.mjs).
# Installs both on first use (scripts/e2e-browser-install.sh); the
# screenshots land in target/e2e-browser/ (serve.png, serve-all.png, bench-report.png).
# Runs inside a loopback-only network namespace when it can (as `make e2e`),
# so the page can reach nothing but 127.0.0.1.
.PHONY: e2e-browser
e2e-browser:
	$(CARGO) build --locked
	@dir=$$(scripts/e2e-browser-install.sh) || { echo "make e2e-browser: installing chromium/playwright-core failed (see above)" >&2; exit 1; }; \
	export BATON_E2E_BROWSER_DIR="$$dir" BATON="$(CURDIR)/target/debug/baton" BATON_E2E_BROWSER_OUT="$(CURDIR)/target/e2e-browser"; \
	run="node tests/browser/serve.mjs && node tests/browser/serve_all.mjs && node tests/browser/bench.mjs"; \
	if unshare -n true 2>/dev/null; then \
		echo "make e2e-browser: running inside a loopback-only network namespace (unshare -n)"; \
		unshare -n sh -c "ip link set lo up && $$run"; \
	elif unshare -rn true 2>/dev/null; then \
		echo "make e2e-browser: running inside a loopback-only user+network namespace (unshare -rn)"; \
		unshare -rn sh -c "ip link set lo up && $$run"; \
	else \
		echo "make e2e-browser: WARNING: cannot create a network namespace here; running in the host namespace" >&2; \
		sh -c "$$run"; \
	fi
