#!/usr/bin/env bash
# `baton bench mine` scanning a long history (issue 32's target: 10,000
# commits in <= 5 s before validation).
#
# Builds a 10,000-commit repository with `git fast-import` (a second or
# two): 50 Rust files, each with a `#[cfg(test)]` module, and their tests/
# files. Every 10th commit fixes code with a test (a candidate), every 10th
# + 1 changes only a test module (the `#[cfg(test)]` rule decides), every
# 10th + 2 the README, the others code alone (each also read by the
# `#[cfg(test)]` rule, the costly path). Then times
# `baton bench mine --max 10000 --no-validate` ROUNDS times (default 3),
# beside the bare `git log` it starts from.
# Knobs: COMMITS (default 10000), ROUNDS, BATON (default: build
# target/release/baton first; give a debug build on a busy machine).
set -euo pipefail
cd "$(dirname "$0")/.."

COMMITS=${COMMITS:-10000}
ROUNDS=${ROUNDS:-3}
if [ -z "${BATON-}" ]; then
	cargo build --release --locked --quiet
	BATON=${CARGO_TARGET_DIR:-$PWD/target}/release/baton
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-bench-mine.XXXXXX")
trap 'rm -rf "$work"' EXIT
export BATON_STATE_DIR="$work/state"
repo=$work/repo
git init -q -b main "$repo"

awk -v n="$COMMITS" '
function blob(path, text) {
	printf "M 100644 inline %s\ndata %d\n%s\n", path, length(text), text
}
function src(k, v, t) {
	return sprintf("pub fn f%d() -> u32 {\n    %d\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        assert_eq!(super::f%d(), %d);\n    }\n}\n", k, v, k, t)
}
BEGIN {
	for (i = 1; i <= n; i++) {
		k = i % 50
		kind = i % 10
		msg = sprintf("change %d (kind %d)\n", i, kind)
		printf "commit refs/heads/main\nmark :%d\n", i
		printf "committer Bench <bench@example.com> %d +0000\n", 1700000000 + i
		printf "data %d\n%s", length(msg), msg
		if (i > 1) printf "from :%d\n", i - 1
		if (i == 1) {
			blob("Cargo.toml", "[package]\nname = \"x\"\n")
			blob("README.md", "x\n")
			for (j = 0; j < 50; j++) {
				blob(sprintf("src/m%d.rs", j), src(j, 0, 0))
				blob(sprintf("tests/t%d.rs", j), sprintf("#[test]\nfn t() { assert_eq!(x::f%d(), 0); }\n", j))
			}
		} else if (kind == 0) {
			blob(sprintf("src/m%d.rs", k), src(k, i, i))
			blob(sprintf("tests/t%d.rs", k), sprintf("#[test]\nfn t() { assert_eq!(x::f%d(), %d); }\n", k, i))
		} else if (kind == 1) {
			blob(sprintf("src/m%d.rs", k), src(k, last[k], i))
		} else if (kind == 2) {
			blob("README.md", sprintf("x %d\n", i))
		} else {
			blob(sprintf("src/m%d.rs", k), src(k, i, last[k]))
		}
		if (kind != 1 && kind != 2) last[k] = i
		printf "\n"
	}
}' > "$work/stream"
start=$(date +%s.%N)
git -C "$repo" fast-import --quiet < "$work/stream"
git -C "$repo" reset -q --hard main
made=$(date +%s.%N)
echo "repository: $COMMITS commits in $(echo "$made - $start" | bc) s"

cd "$repo"
for _ in $(seq "$ROUNDS"); do
	t0=$(date +%s.%N)
	git log --first-parent --name-status --no-renames -z --max-count="$COMMITS" > /dev/null
	t1=$(date +%s.%N)
	"$BATON" bench mine --max "$COMMITS" --no-validate > "$work/out.json"
	t2=$(date +%s.%N)
	echo "git log alone: $(echo "$t1 - $t0" | bc) s · baton bench mine --max $COMMITS --no-validate: $(echo "$t2 - $t1" | bc) s"
done
python3 - "$work/out.json" <<'EOF'
import json, sys, collections
r = json.load(open(sys.argv[1]))
c = collections.Counter(x["reason"] for x in r["rejected"])
print(f"scanned {r['scanned']}, candidates {r['candidates']}, rejected {dict(c)}")
EOF
