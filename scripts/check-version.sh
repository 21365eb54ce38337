#!/bin/sh
# Fail when any plugin manifest's version (or a generated field) differs from
# Cargo.toml; lists each difference. Fix with scripts/sync-version.sh.
set -eu
exec python3 "$(dirname "$0")/manifests.py" check
