#!/bin/sh
# Build baton for linux/darwin x amd64/arm64 from one git commit, reproducibly.
#
# The source is exported from the commit with `git archive` (so the binaries
# are exactly that commit, whatever the work tree holds) and built with the
# registry-only cross toolchain of scripts/setup-cross.sh:
#   linux-*  : static musl executables (-Zbuild-std, zig links musl's crt)
#   darwin-* : Mach-O with an explicit MACOSX_DEPLOYMENT_TARGET (zig's
#              libSystem stubs; the arm64 one carries the ad-hoc signature)
# Reproducible: every absolute build path is remapped (source dir, CARGO_HOME,
# the toolchain cache, the target dir), SOURCE_DATE_EPOCH is the commit time,
# and the commit id baked into `baton --version` comes from the commit itself.
#
# Usage: scripts/build-binaries.sh [--commit REV] [--out DIR] [--build-dir DIR] [TARGET...]
#   TARGET: linux-amd64 linux-arm64 darwin-amd64 darwin-arm64 (default: all four)
#   --out       where <target>/baton, SHA256SUMS and BUILDINFO go (default: plugin/bin)
#   --build-dir where the exported source and the cargo target dir live
#               (default: <cross cache>/build; reused between runs for speed)
set -eu

say() { printf 'build-binaries: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
ALL="linux-amd64 linux-arm64 darwin-amd64 darwin-arm64"
commit=HEAD out='' build='' targets=''
while [ $# -gt 0 ]; do
    case $1 in
    --commit) commit=${2:?--commit needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --build-dir) build=${2:?--build-dir needs a value}; shift 2 ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) targets="${targets:+$targets }$1"; shift ;;
    esac
done
targets=${targets:-$ALL}

triple_of() {
    case $1 in
    linux-amd64) echo x86_64-unknown-linux-musl ;;
    linux-arm64) echo aarch64-unknown-linux-musl ;;
    darwin-amd64) echo x86_64-apple-darwin ;;
    darwin-arm64) echo aarch64-apple-darwin ;;
    *) return 1 ;;
    esac
}
for t in $targets; do
    triple_of "$t" >/dev/null || die "unknown target $t (known: $ALL)"
done
if [ -z "$out" ]; then
    out=$ROOT/plugin/bin
    # The committed set must come from one build of one commit.
    [ "$targets" = "$ALL" ] || die "building a subset into plugin/bin would mix builds; pass --out DIR"
fi

full=$(git -C "$ROOT" rev-parse --verify "$commit^{commit}") || die "no commit $commit"
short=$(git -C "$ROOT" rev-parse --short=12 "$full")
epoch=$(git -C "$ROOT" log -1 --format=%ct "$full")
if [ "$commit" = HEAD ] && [ -n "$(git -C "$ROOT" status --porcelain -- src build.rs Cargo.toml Cargo.lock)" ]; then
    say "warning: uncommitted changes in src/, build.rs or Cargo.*; building the commit $short, not the work tree"
fi

env_sh=$("$ROOT/scripts/setup-cross.sh")
# shellcheck disable=SC1090
. "$env_sh"
X=$BATON_CROSS_DIR
build=${build:-$X/build}
mkdir -p "$build" "$out"
build=$(cd "$build" && pwd -P)
out=$(cd "$out" && pwd -P)
for p in "$X" "$build" "$CARGO_HOME"; do
    case $p in *[[:space:]]*) die "build paths may not contain white space: $p" ;; esac
done

# One build at a time per build dir (the exported source is shared).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$build/.lock"
    flock 9
fi

src=$build/src
rm -rf "$src"
mkdir -p "$src"
git -C "$ROOT" archive --format=tar "$full" | tar -xf - -C "$src"

# Later remaps win when several match, so the most specific paths come last.
remap="--remap-path-prefix=$X=/baton-cross --remap-path-prefix=$CARGO_HOME=/cargo"
remap="$remap --remap-path-prefix=$build/target=/target --remap-path-prefix=$src=/baton"

# std's features: cargo's defaults (panic-unwind, backtrace) plus
# backtrace-trace-only, which leaves out std's symbolizer (gimli, addr2line,
# miniz_oxide, rustc-demangle, object: about 165 KB by the symbol
# sizes of a linux-gnu build). The binaries are stripped (no symbol table, no
# debug info), so it had no names to find: with RUST_BACKTRACE a panic listed
# `<unknown>` frames and now lists their addresses; the message is unchanged.
std_features=panic-unwind,backtrace,backtrace-trace-only

export SOURCE_DATE_EPOCH="$epoch" BATON_SOURCE_COMMIT="$short" CARGO_TERM_COLOR=never
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/Cargo.toml" | head -n 1)
say "baton $version from commit $short into $out"

for t in $targets; do
    triple=$(triple_of "$t")
    var=CARGO_TARGET_$(printf '%s' "$triple" | tr 'a-z-' 'A-Z_')_RUSTFLAGS
    flags=$remap
    deploy=
    case $triple in
    # With -Zbuild-std there is no self-contained crt dir; zig supplies musl's.
    # No unwind tables (.eh_frame): baton aborts on panic, so nothing
    # unwinds, and the binaries are stripped, so a RUST_BACKTRACE had no
    # names to show. The panic message and its location are unchanged.
    # linux-amd64: 7,557,768 B with them (966 KB of .eh_frame and
    # .eh_frame_hdr), under the 7 MiB target without.
    *-linux-musl) flags="$flags -C link-self-contained=no -C force-unwind-tables=no" ;;
    # Unset, zig stamps minos 15.0; these match rustc's own defaults.
    aarch64-apple-darwin) deploy=11.0 ;;
    x86_64-apple-darwin) deploy=10.12 ;;
    esac
    start=$(date +%s)
    say "$t ($triple)"
    (
        cd "$src"
        if [ -n "$deploy" ]; then
            MACOSX_DEPLOYMENT_TARGET=$deploy
            export MACOSX_DEPLOYMENT_TARGET
        fi
        env "$var=$flags" cargo zigbuild --quiet --locked --release --target "$triple" \
            -Zbuild-std=std,panic_abort -Zbuild-std-features="$std_features" \
            --target-dir "$build/target"
    ) || die "build of $t failed"
    mkdir -p "$out/$t"
    cp "$build/target/$triple/release/baton" "$out/$t/baton.tmp"
    chmod 0755 "$out/$t/baton.tmp"
    mv "$out/$t/baton.tmp" "$out/$t/baton"
    say "$t: $(wc -c <"$out/$t/baton" | tr -d ' ') bytes in $(($(date +%s) - start)) s"
done

# Checksums of every binary present, in a fixed order.
(
    cd "$out"
    for t in $ALL; do
        if [ -f "$t/baton" ]; then sha256sum "$t/baton"; fi
    done
) >"$out/SHA256SUMS.tmp"
mv "$out/SHA256SUMS.tmp" "$out/SHA256SUMS"

{
    echo "# How the binaries beside this file were built (scripts/build-binaries.sh)."
    echo "# make verify-binaries rebuilds linux-amd64 from source_commit and compares."
    echo "version=$version"
    echo "source_commit=$full"
    echo "source_date_epoch=$epoch"
    echo "rustc=$(rustc --version)"
    echo "cargo=$(cargo --version)"
    echo "zig=$(python3 -m ziglang version)"
    echo "cargo_zigbuild=$(cargo-zigbuild --version)"
    echo "build_std=std,panic_abort"
    echo "build_std_features=$std_features"
    echo "profile=release"
    for t in $ALL; do
        case " $targets " in *" $t "*) echo "target.$t=$(triple_of "$t")" ;; esac
    done
    echo "macosx_deployment_target.darwin-arm64=11.0"
    echo "macosx_deployment_target.darwin-amd64=10.12"
} >"$out/BUILDINFO.tmp"
mv "$out/BUILDINFO.tmp" "$out/BUILDINFO"
say "wrote $out/SHA256SUMS and $out/BUILDINFO"
