#!/bin/sh
# Package the committed plugin binaries as release archives:
#   dist/release/baton_<version>_<os>_<arch>.tar.gz  (baton, README.md, LICENSE,
#                                                    man/man1/*.1)
#   dist/release/checksums.txt                      (sha256 of each archive)
# VERSION must be Cargo.toml's version and the binaries must report it (the
# release flow: scripts/sync-version.sh X; commit; make binaries; commit;
# make release VERSION=X). Archives are reproducible: sorted entries, fixed
# mtime (the binaries' source commit time), owner 0:0, normalised modes, and
# gzip without a name or time stamp.
# The man pages come from `baton man --dir` of the committed binary for this
# machine (they are the same on every platform); BATON_MAN_BIN names another
# baton of the same source to run instead (e.g. on a machine none of the four
# targets runs on).
# Usage: scripts/release.sh VERSION [OUT_DIR]   (OUT_DIR: dist/release)
set -eu

say() { printf 'release: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
BIN=$ROOT/plugin/bin
VERSION=${1:-}
OUT=${2:-$ROOT/dist/release}
[ -n "$VERSION" ] || die "usage: release.sh VERSION [OUT_DIR] (e.g. make release VERSION=0.1.0)"
cargo_version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)
[ "$VERSION" = "$cargo_version" ] ||
    die "VERSION=$VERSION but Cargo.toml says $cargo_version: run scripts/sync-version.sh $VERSION, commit, make binaries, commit"
[ -f "$BIN/BUILDINFO" ] || die "no plugin/bin/BUILDINFO: run make binaries first"
(cd "$BIN" && sha256sum --check --quiet SHA256SUMS) || die "plugin/bin/SHA256SUMS does not match the binaries"
epoch=$(sed -n 's/^source_date_epoch=//p' "$BIN/BUILDINFO")
[ -n "$epoch" ] || die "BUILDINFO has no source_date_epoch"

tar --version 2>/dev/null | grep -q 'GNU tar' || die "GNU tar is needed for reproducible archives"
mkdir -p "$OUT"
stage=$(mktemp -d "${TMPDIR:-/tmp}/baton-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT INT TERM

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) host=linux-amd64 ;;
Linux-aarch64 | Linux-arm64) host=linux-arm64 ;;
Darwin-x86_64) host=darwin-amd64 ;;
Darwin-arm64) host=darwin-arm64 ;;
*) host=none ;;
esac
man_bin=${BATON_MAN_BIN:-$BIN/$host/baton}
[ -x "$man_bin" ] || die "no baton to generate the man pages with ($man_bin): set BATON_MAN_BIN"
"$man_bin" man --dir "$stage/man1" >/dev/null ||
    die "$man_bin cannot write the man pages (\`baton man\`): run make binaries"
[ -f "$stage/man1/baton.1" ] || die "$man_bin wrote no baton.1"

for t in linux-amd64 linux-arm64 darwin-amd64 darwin-arm64; do
    os=${t%-*} arch=${t#*-}
    f=$BIN/$t/baton
    [ -f "$f" ] || die "missing $f"
    LC_ALL=C grep -a -q "$VERSION ([a-z0-9_]*-[a-z0-9_-]*, commit [0-9a-f]*)" "$f" ||
        die "$f does not report version $VERSION: run make binaries"
    name=baton_${VERSION}_${os}_${arch}
    d=$stage/$name
    mkdir -p "$d"
    cp "$f" "$d/baton"
    cp "$ROOT/README.md" "$d/README.md"
    cp "$ROOT/LICENSE" "$d/LICENSE"
    chmod 0755 "$d" "$d/baton"
    mkdir -p "$d/man/man1"
    cp "$stage"/man1/*.1 "$d/man/man1/"
    chmod 0755 "$d/man" "$d/man/man1"
    chmod 0644 "$d/README.md" "$d/LICENSE" "$d"/man/man1/*.1
    (cd "$stage" && tar --sort=name --format=gnu --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
        -cf - "$name") | gzip -n -9 >"$OUT/$name.tar.gz.tmp"
    mv "$OUT/$name.tar.gz.tmp" "$OUT/$name.tar.gz"
    say "wrote $OUT/$name.tar.gz"
done
(cd "$OUT" && sha256sum baton_"${VERSION}"_*.tar.gz | LC_ALL=C sort -k2) >"$OUT/checksums.txt.tmp"
mv "$OUT/checksums.txt.tmp" "$OUT/checksums.txt"
say "wrote $OUT/checksums.txt"
cat "$OUT/checksums.txt"
