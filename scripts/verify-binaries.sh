#!/bin/sh
# Check the committed plugin binaries (plugin/bin/<target>/baton):
#   1. SHA256SUMS matches, and lists exactly the four targets;
#   2. each file's format and architecture (`file`), size <= 8 MiB, and for
#      macOS the minimum OS version and (arm64) a valid ad-hoc signature;
#   3. each reports Cargo.toml's version and BUILDINFO's commit: linux-amd64
#      run natively, linux-arm64 under qemu-user, darwin read from the file;
#   4. linux-amd64 rebuilt from the commit BUILDINFO records, in a fresh
#      worktree with that commit's own build script, is byte-identical to the
#      committed one (if the toolchain here differs from BUILDINFO's, it says
#      so and compares everything but the bytes);
#   5. how far the source has moved since that commit.
# Usage: scripts/verify-binaries.sh [--no-rebuild]
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
BIN=$ROOT/plugin/bin
ALL="linux-amd64 linux-arm64 darwin-amd64 darwin-arm64"
MAX_BYTES=$((8 * 1024 * 1024))
rebuild=1
case ${1-} in
--no-rebuild) rebuild=0 ;;
"") ;;
*) echo "usage: verify-binaries.sh [--no-rebuild]" >&2; exit 2 ;;
esac

failures=0
say() { printf 'verify-binaries: %s\n' "$*" >&2; }
ok() { say "ok    $*"; }
bad() { say "FAIL  $*"; failures=$((failures + 1)); }
info() { say "info  $*"; }

[ -f "$BIN/BUILDINFO" ] || { bad "no $BIN/BUILDINFO: build the binaries with \`make binaries\`"; exit 1; }
get() { sed -n "s/^$1=//p" "$BIN/BUILDINFO" | head -n 1; }
commit=$(get source_commit)
short=$(printf '%s' "$commit" | cut -c1-12)
built_version=$(get version)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)

triple_of() {
    case $1 in
    linux-amd64) echo x86_64-unknown-linux-musl ;;
    linux-arm64) echo aarch64-unknown-linux-musl ;;
    darwin-amd64) echo x86_64-apple-darwin ;;
    darwin-arm64) echo aarch64-apple-darwin ;;
    esac
}

# 1. checksums
if (cd "$BIN" && sha256sum --check --quiet SHA256SUMS >/dev/null 2>&1); then
    ok "SHA256SUMS matches"
else
    bad "SHA256SUMS does not match the binaries: $(cd "$BIN" && sha256sum --check --quiet SHA256SUMS 2>&1 | tr '\n' ' ')"
fi
listed=$(awk '{print $2}' "$BIN/SHA256SUMS" | sed 's|/baton$||' | tr '\n' ' ' | sed 's/ $//')
[ "$listed" = "$ALL" ] || bad "SHA256SUMS lists '$listed', expected '$ALL'"

if [ "$built_version" = "$version" ]; then
    ok "BUILDINFO version $built_version = Cargo.toml"
else
    bad "the binaries were built for $built_version but Cargo.toml says $version: run \`make binaries\` and commit"
fi

setup_env() {
    if [ -z "${env_sh-}" ]; then
        env_sh=$("$ROOT/scripts/setup-cross.sh")
    fi
}

# 2 + 3. format, size, version per binary
for t in $ALL; do
    f=$BIN/$t/baton
    triple=$(triple_of "$t")
    if [ ! -f "$f" ]; then
        bad "$t: missing"
        continue
    fi
    [ -x "$f" ] || bad "$t: not executable (mode lost?)"
    desc=$(file -b "$f")
    case $t in
    linux-amd64) want='ELF 64-bit LSB executable, x86-64*statically linked*' ;;
    linux-arm64) want='ELF 64-bit LSB executable, ARM aarch64*statically linked*' ;;
    darwin-amd64) want='Mach-O 64-bit x86_64 executable*' ;;
    darwin-arm64) want='Mach-O 64-bit arm64 executable*' ;;
    esac
    # shellcheck disable=SC2254 # the pattern is meant to match
    case $desc in
    $want) ok "$t: $desc" ;;
    *) bad "$t: \`file\` says '$desc', expected '$want'" ;;
    esac
    size=$(wc -c <"$f" | tr -d ' ')
    if [ "$size" -le "$MAX_BYTES" ]; then
        ok "$t: $size bytes (limit $MAX_BYTES)"
    else
        bad "$t: $size bytes, over the $MAX_BYTES limit"
    fi
    # The version string is a literal in every binary, runnable here or not.
    embedded=$(LC_ALL=C grep -a -o "[0-9][0-9A-Za-z.+-]* ($triple, commit [0-9a-f]*)" "$f" | head -n 1 || true)
    expect="$version ($triple, commit $short)"
    if [ "$embedded" = "$expect" ]; then
        ok "$t: embeds \"$embedded\""
    else
        bad "$t: embeds \"${embedded:-no version string}\", expected \"$expect\""
    fi
    case $t in
    linux-amd64 | linux-arm64)
        run=
        if [ "$t" = linux-amd64 ] && [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]; then
            run=$("$f" --version 2>&1 || true)
        elif [ "$t" = linux-arm64 ]; then
            setup_env
            qemu=$(sed -n 's/^export BATON_CROSS_QEMU="\(.*\)"$/\1/p' "$env_sh")
            run=$("$qemu" "$f" --version 2>&1 || true)
        fi
        if [ -n "$run" ]; then
            if [ "$run" = "baton $expect" ]; then
                ok "$t: runs: $run"
            else
                bad "$t: \`baton --version\` printed '$run', expected 'baton $expect'"
            fi
        else
            info "$t: cannot run here; checked the embedded string only"
        fi
        ;;
    darwin-amd64 | darwin-arm64)
        case $t in
        darwin-amd64) arch=x86_64 minos=10.12 ;;
        *) arch=arm64 minos=11.0 ;;
        esac
        if report=$(python3 "$ROOT/scripts/check-macho.py" --arch "$arch" --max-minos "$minos" "$f" 2>&1); then
            ok "$t: Mach-O $arch, minimum macOS <= $minos$(printf '%s' "$report" | grep -q VALID && echo ', ad-hoc signature valid')"
        else
            bad "$t: Mach-O check failed: $(printf '%s' "$report" | tr '\n' ' ')"
        fi
        ;;
    esac
done

# The shim picks the right one here (where a committed binary can run).
if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]; then
    shim_out=$(env -u BATON_BIN -u BATON_TARGET_OVERRIDE "$BIN/baton" --version 2>&1 || true)
    if [ "$shim_out" = "baton $version (x86_64-unknown-linux-musl, commit $short)" ]; then
        ok "the shim starts linux-amd64: $shim_out"
    else
        bad "plugin/bin/baton --version printed '$shim_out'"
    fi
fi

# 5. distance from the recorded commit
if ! git -C "$ROOT" cat-file -e "$commit^{commit}" 2>/dev/null &&
    [ "$(git -C "$ROOT" rev-parse --is-shallow-repository)" = true ]; then
    info "shallow clone: fetching the full history to find $short"
    git -C "$ROOT" fetch --quiet --unshallow || true
fi
if git -C "$ROOT" cat-file -e "$commit^{commit}" 2>/dev/null; then
    moved=$(git -C "$ROOT" rev-list --count "$commit..HEAD")
    changed=$(git -C "$ROOT" diff --name-only "$commit" HEAD -- src build.rs Cargo.toml Cargo.lock | wc -l | tr -d ' ')
    info "the source has moved $moved commit(s) since the binaries' commit $short; $changed file(s) under src/, build.rs, Cargo.* differ (binaries are rebuilt on a version bump, not every commit)"
else
    bad "BUILDINFO's commit $commit is not in this repository (shallow clone?): cannot rebuild"
    rebuild=0
fi

# 4. rebuild linux-amd64 from that commit and compare
if [ "$rebuild" = 1 ]; then
    setup_env
    # shellcheck disable=SC1090
    . "$env_sh"
    here_rustc=$(rustc --version) here_cargo=$(cargo --version)
    here_zig=$(python3 -m ziglang version) here_zigbuild=$(cargo-zigbuild --version)
    same=1
    for pair in "rustc|$here_rustc" "cargo|$here_cargo" "zig|$here_zig" "cargo_zigbuild|$here_zigbuild"; do
        key=${pair%%|*} here=${pair#*|}
        recorded=$(get "$key")
        if [ "$recorded" != "$here" ]; then
            same=0
            info "toolchain differs: BUILDINFO $key is '$recorded', here it is '$here'"
        fi
    done
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/baton-verify.XXXXXX")
    wt=$tmp/src
    cleanup() {
        git -C "$ROOT" worktree remove --force "$wt" >/dev/null 2>&1 || true
        rm -rf "$tmp"
    }
    trap cleanup EXIT INT TERM
    git -C "$ROOT" worktree add --quiet --detach "$wt" "$commit"
    start=$(date +%s)
    say "rebuilding linux-amd64 from $short in a fresh build directory (a few minutes)"
    if sh "$wt/scripts/build-binaries.sh" --commit HEAD --out "$tmp/out" --build-dir "$tmp/build" linux-amd64; then
        rebuilt=$tmp/out/linux-amd64/baton
        info "rebuild took $(($(date +%s) - start)) s"
        if [ "$same" = 1 ]; then
            if cmp -s "$rebuilt" "$BIN/linux-amd64/baton"; then
                ok "linux-amd64 rebuilt from $short is byte-identical ($(sha256sum "$rebuilt" | cut -c1-16)…)"
            else
                bad "linux-amd64 rebuilt from $short differs from the committed binary: $(sha256sum "$rebuilt" | cut -c1-64) vs $(sha256sum "$BIN/linux-amd64/baton" | cut -c1-64)"
            fi
        else
            say "the toolchain here is not the one in BUILDINFO, so identical bytes cannot be expected; comparing everything except the bytes"
            for args in "--version" "--help" "schema"; do
                # shellcheck disable=SC2086 # one or two words on purpose
                a=$("$rebuilt" $args 2>&1 || true)
                # shellcheck disable=SC2086
                b=$("$BIN/linux-amd64/baton" $args 2>&1 || true)
                if [ "$a" = "$b" ]; then ok "rebuilt and committed agree on \`baton $args\`"; else bad "\`baton $args\` differs between the rebuilt and the committed binary"; fi
            done
            if [ "$(file -b "$rebuilt")" = "$(file -b "$BIN/linux-amd64/baton")" ]; then
                ok "same \`file\` description"
            else
                bad "\`file\` descriptions differ"
            fi
        fi
    else
        bad "could not rebuild linux-amd64 from $short"
    fi
fi

if [ "$failures" -gt 0 ]; then
    say "$failures check(s) failed"
    exit 1
fi
say "all checks passed"
