#!/usr/bin/env bash
# The sandbox's cost (`make bench-sandbox`): the wall time that confining a
# child adds, measured on `true` so that nothing but the wrapping counts.
#
#   direct    `true`
#   bwrap     the argv baton's bubblewrap backend spawns: bwrap (user, PID,
#             IPC, UTS namespaces, the root read-only, secrets covered, the
#             checkout and tmp writable) → `baton __sandbox-exec` (limits,
#             Landlock scopes, seccomp) → `true`
#   landlock  the argv of the Landlock backend: `baton __sandbox-exec`
#             (limits, Landlock on files, seccomp) → `true`
#
# The argv is the one `Sandbox::wrap` gives a launcher (printed by the
# helper's `wrap` stage with `print`), spawned here with its environment, so
# the figures are what a run pays, not the tool's extra start. Interleaved,
# ROUNDS rounds (default 100), median and spread in ms. Target: <= 10 ms added.
# Knobs: ROUNDS, BATON (default: build target/release/baton first).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-100}
if [ -z "${BATON-}" ]; then
	cargo build --release --locked --quiet
	BATON=$PWD/target/release/baton
fi
TRUE=$(type -P true)

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-bench-sandbox.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/tmp"
git -C "$work/ws" init -q

# The policy a launcher builds for a workspace writer: the standard secrets
# of this home hidden (those that exist), the checkout and tmp writable.
policy() {
	python3 - "$1" "$work" "$HOME" <<'EOF'
import json, os, sys
backend, work, home = sys.argv[1:]
secrets = [".ssh", ".aws", ".config/gh", ".netrc", ".docker", ".kube", ".gnupg"]
print(json.dumps({
    "stage": {"wrap": {"backend": backend, "print": True}},
    "policy": {
        "mode": "workspace",
        "workspace": f"{work}/ws",
        "tmp": f"{work}/tmp",
        "hidden": [os.path.join(home, s) for s in secrets],
    },
}))
EOF
}

# Writes the wrapped argv (NUL-separated) and environment of `true` for a
# backend to $work/<backend>.argv and .env; fails when the kernel refuses it.
prepare() {
	local b=$1
	"$BATON" __sandbox-exec "$(policy "$b")" -- "$TRUE" > "$work/$b.json"
	python3 - "$work/$b" <<'EOF'
import json, sys
w = json.load(open(sys.argv[1] + ".json"))
open(sys.argv[1] + ".argv", "wb").write(b"".join(a.encode() + b"\0" for a in w["argv"]))
open(sys.argv[1] + ".env", "wb").write(b"".join(f"{k}={v}".encode() + b"\0" for k, v in w["env"].items()))
print(json.dumps(w["sandbox"]))
EOF
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
spread() { sort -n | awk '{a[NR]=$1} END {printf "%.2f %.2f %.2f\n", a[1], a[int((NR+3)/4)], a[int((3*NR+3)/4)]}'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f\n", (b-a)*1000}'; }

echo "baton bench-sandbox: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $("$BATON" --version), $(bwrap --version 2>/dev/null || echo 'no bwrap'), $(uname -r)"
backends=()
for b in bwrap landlock; do
	if report=$(prepare "$b" 2> "$work/$b.err"); then
		echo "  $b: $report"
		backends+=("$b")
	else
		echo "  $b: skipped, the kernel refuses it here: $(head -c 300 "$work/$b.err")"
	fi
done

# The argv and environment read once, outside the timed part.
for b in "${backends[@]}"; do
	mapfile -d '' "${b}_argv" < "$work/$b.argv"
	mapfile -d '' "${b}_env" < "$work/$b.env"
done
run() {
	if [ "$1" = direct ]; then
		env -i "PATH=$PATH" "$TRUE"
	else
		local -n argv="${1}_argv" envs="${1}_env"
		env -i "${envs[@]}" "${argv[@]}"
	fi
}

# Warm up, then interleave: each round runs every backend and direct.
for b in direct "${backends[@]}"; do
	: > "$work/$b.t"
	for i in 1 2 3; do run "$b"; done
done
for ((i = 0; i < ROUNDS; i++)); do
	for b in direct "${backends[@]}"; do
		t0=$EPOCHREALTIME; run "$b"; t1=$EPOCHREALTIME
		ms "$t0" "$t1" >> "$work/$b.t"
	done
done

base=$(median < "$work/direct.t")
echo "== wall time of \`true\` ($ROUNDS interleaved rounds, median ms; every row through env -i)"
printf '  direct:   %6.2f ms\n' "$base"
for b in "${backends[@]}"; do
	m=$(median < "$work/$b.t")
	read -r lo q1 q3 < <(spread < "$work/$b.t")
	printf '  %-9s %6.2f ms   added %5.2f ms (min %.2f, p25 %.2f, p75 %.2f)  target <= 10 ms\n' \
		"$b:" "$m" "$(awk -v a="$base" -v b="$m" 'BEGIN {printf "%.2f", b-a}')" "$lo" "$q1" "$q3"
done
