#!/bin/sh
# Write Cargo.toml's version (the one source of truth) into every plugin
# manifest, and regenerate the files derived from others.
# With an argument, first set Cargo.toml's (and Cargo.lock's) version:
#   scripts/sync-version.sh 0.2.0
set -eu
exec python3 "$(dirname "$0")/manifests.py" sync "$@"
