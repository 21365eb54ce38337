#!/usr/bin/env bash
# Starting a writer (docs/worktree.md, issue 31): the writer's repository of
# its own against the linked worktree baton made before, in a repository of
# FILES files (default 10,000) on WT_DIR (default /dev/shm), median of RUNS
# (default 5), the two kinds alternating so that load hits both alike.
#
# 1. The git work of making one, as baton does it:
#    linked: `git worktree add --no-checkout -b` + `read-tree -u --reset`
#            (baton up to 0.3);
#    own:    `git init --template= -b` + `objects/info/alternates` + the
#            branch's ref file + `read-tree -u --reset` + `update-ref` of
#            the user's branch (now).
#    Target: own ≤ 1.10 × linked.
# 2. What the end of a run adds: importing a one-file commit (a fetch with
#    fsck through baton's git dir, then `update-ref`).
# 3. baton itself, from its start to the peer's start (`run --worktree`
#    with a shell codex that notes the time), BATON (default
#    target/debug/baton, built if missing).
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
FILES=${FILES:-10000}
WT_DIR=${WT_DIR:-/dev/shm}
BATON=${BATON:-target/debug/baton}
if [ ! -x "$BATON" ]; then
    cargo build --locked >/dev/null
fi
BATON=$(realpath "$BATON")

tmp=$(mktemp -d "$WT_DIR/baton-bench-wt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
w="$tmp/repo"
mkdir -p "$w/src"
git -C "$w" init -q -b main
python3 - "$w" "$FILES" <<'EOF'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    sub = os.path.join(d, "src", f"d{i // 500}")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, f"f{i}.txt"), "w") as f:
        f.write(f"line {i}\n" * 20)
EOF
git -C "$w" add -A
git -C "$w" -c user.name=b -c user.email=b@b commit -qm base
base=$(git -C "$w" rev-parse HEAD)
tree=$(git -C "$w" rev-parse "HEAD^{tree}")
common=$(git -C "$w" rev-parse --path-format=absolute --git-common-dir)

ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

linked() { # linked N
    local p="$tmp/wt/linked-$1"
    git -C "$w" worktree add --quiet --no-checkout -b "baton/l$1" "$p" "$base"
    git -C "$p" read-tree -u --reset "$tree"
}

own() { # own N
    local p="$tmp/wt/own-$1"
    git -C "$w" init --quiet --template= -b "baton/o$1" "$p"
    mkdir -p "$p/.git/hooks" "$p/.git/objects/info" "$p/.git/refs/heads/baton"
    echo "$common/objects" >"$p/.git/objects/info/alternates"
    echo "$base" >"$p/.git/refs/heads/baton/o$1"
    GIT_DIR="$p/.git" GIT_WORK_TREE="$p" git -C "$p" read-tree -u --reset "$tree"
    git -C "$w" update-ref "refs/heads/baton/o$1" "$base" ""
}

echo "== 1. making a writer's checkout of $FILES files at $WT_DIR ($(df -T "$tmp" | awk 'NR==2{print $2}')), median of $RUNS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$tmp/wt"
: >"$tmp/linked.ms"
: >"$tmp/own.ms"
for i in $(seq "$RUNS"); do
    s=$(ms); linked "$i"; echo $(( $(ms) - s )) >>"$tmp/linked.ms"
    s=$(ms); own "$i"; echo $(( $(ms) - s )) >>"$tmp/own.ms"
done
l=$(median <"$tmp/linked.ms")
o=$(median <"$tmp/own.ms")
echo "   linked worktree (git worktree add + read-tree): $l ms   [$(tr '\n' ' ' <"$tmp/linked.ms")]"
echo "   own repository  (init + alternates + read-tree): $o ms   [$(tr '\n' ' ' <"$tmp/own.ms")]"
python3 -c "print(f'   own / linked: {$o / $l:.3f} (target: <= 1.10)')"

echo "== 2. importing a one-file commit from the writer's repository (median of $RUNS)"
: >"$tmp/import.ms"
for i in $(seq "$RUNS"); do
    p="$tmp/wt/own-$i"
    echo "change $i" >"$p/src/d0/f0.txt"
    export GIT_DIR="$p/.git" GIT_WORK_TREE="$p"
    git -C "$p" add src/d0/f0.txt
    t=$(git write-tree)
    c=$(git -c user.name=b -c user.email=b@b commit-tree "$t" -p "$base" -m "writer $i")
    unset GIT_DIR GIT_WORK_TREE
    src="$tmp/import-$i"
    mkdir -p "$src/objects/info" "$src/refs/heads"
    printf '[core]\n\trepositoryformatversion = 0\n\tbare = true\n' >"$src/config"
    echo "ref: refs/heads/tip" >"$src/HEAD"
    echo "$c" >"$src/refs/heads/tip"
    echo "$p/.git/objects" >"$src/objects/info/alternates"
    s=$(ms)
    git -C "$w" -c protocol.file.allow=always -c fetch.fsckObjects=true fetch --quiet --no-tags \
        --no-write-fetch-head --no-recurse-submodules "file://$src" refs/heads/tip
    git -C "$w" update-ref "refs/heads/baton/o$i" "$c" "$base"
    echo $(( $(ms) - s )) >>"$tmp/import.ms"
done
echo "   fetch with fsck + update-ref: $(median <"$tmp/import.ms") ms   [$(tr '\n' ' ' <"$tmp/import.ms")]"

echo "== 3. baton run --worktree: from baton's start to the peer's start ($BATON, median of $RUNS)"
mkdir -p "$tmp/bin" "$tmp/fake" "$tmp/state"
cat >"$tmp/bin/codex" <<EOF
#!/bin/sh
date +%s%3N >> "$tmp/fake/starts"
cat >/dev/null
echo '{"type":"thread.started","thread_id":"t"}'
echo '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}'
EOF
chmod +x "$tmp/bin/codex"
: >"$tmp/baton.ms"
for i in $(seq "$RUNS"); do
    rm -f "$tmp/fake/starts"
    s=$(ms)
    (cd "$w" && PATH="$tmp/bin:$PATH" BATON_STATE_DIR="$tmp/state" \
        "$BATON" run --agent codex --worktree "x" >/dev/null) || true
    echo $(( $(head -1 "$tmp/fake/starts") - s )) >>"$tmp/baton.ms"
done
echo "   to the peer's start: $(median <"$tmp/baton.ms") ms   [$(tr '\n' ' ' <"$tmp/baton.ms")]"
