# Plugin packaging: prebuilt binaries, manifests, release archives (issue 5).
.PHONY: setup-cross binaries verify-binaries check-version sync-version lint-plugin release

# The cross toolchain (Debian rustc-web + zig from PyPI) in ~/.cache/baton-cross.
setup-cross:
	scripts/setup-cross.sh

# All four plugin binaries from HEAD into plugin/bin (+ SHA256SUMS, BUILDINFO).
binaries:
	scripts/build-binaries.sh

# Rebuild linux-amd64 from BUILDINFO's commit and compare; check all four.
verify-binaries:
	scripts/verify-binaries.sh

# Every manifest's version (and generated field) matches Cargo.toml.
check-version:
	scripts/check-version.sh

sync-version:
	scripts/sync-version.sh $(VERSION)

# shellcheck on the shim and scripts, actionlint on the workflows.
lint-plugin:
	PATH="$$(scripts/dev-tools.sh):$$PATH" && \
	  shellcheck --shell=sh plugin/bin/baton scripts/*.sh && \
	  actionlint

release:
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=x.y.z" >&2; exit 2; }
	scripts/release.sh $(VERSION)
