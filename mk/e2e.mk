# End-to-end suite: the built baton drives the real, pinned agent CLIs
# (e2e/versions.env) against the suite's own mock model server on 127.0.0.1.
#
#   make e2e                     everything (install/reuse the CLIs, build, run)
#   make e2e E2E_FILTER=codex    only tests whose name contains `codex`
#
# Builds happen outside the network namespace (cargo may need crates.io);
# the tests run inside `unshare -n` with only loopback up, so any attempt
# to reach another host fails loudly. Without the privilege for that, the
# suite says so and runs in the host namespace (the CLIs are still
# configured to talk only to 127.0.0.1).
E2E_THREADS ?= 4
E2E_FILTER ?=
E2E_WORK ?= $(CURDIR)/target/e2e-work

.PHONY: e2e
e2e:
	$(CARGO) test --locked --test e2e --no-run
	@dir=$$(scripts/e2e-install.sh) || { echo "make e2e: installing the agent CLIs failed (see above)" >&2; exit 1; }; \
	rm -rf "$(E2E_WORK)"; mkdir -p "$(E2E_WORK)"; \
	export BATON_E2E_CLI_DIR="$$dir" BATON_E2E_WORK="$(E2E_WORK)"; \
	run="$(CARGO) test --locked --offline --test e2e -- --ignored --test-threads=$(E2E_THREADS) $(E2E_FILTER)"; \
	if unshare -n true 2>/dev/null; then \
		echo "make e2e: running inside a loopback-only network namespace (unshare -n)"; \
		unshare -n sh -c "ip link set lo up && exec $$run"; \
	elif unshare -rn true 2>/dev/null; then \
		echo "make e2e: running inside a loopback-only user+network namespace (unshare -rn)"; \
		unshare -rn sh -c "ip link set lo up && exec $$run"; \
	else \
		echo "make e2e: WARNING: cannot create a network namespace here (needs root or user namespaces); running in the host namespace" >&2; \
		sh -c "$$run"; \
	fi
