#!/usr/bin/env bash
# `baton usage` over 10,000 recorded runs (issue 22, target <= 150 ms).
#
# One real run against a fake pi writes a real ledger line; the ledgers of
# 20 projects are then filled with copies of it (fresh run ids, agents,
# models, costs and times spread over 60 days; every tenth run has a second
# call that fell back), 10,000 runs in all. Times `usage --json`, `usage --by
# agent`, `--by day` and `--since 7d`: the median and the minimum of RUNS
# runs each.
# Knobs: BATON=path (skip the build), N_RUNS (10000), N_REPOS (20), RUNS (15).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${BATON:-}" ]; then
    cargo build --release --locked --quiet
    BATON="$PWD/target/release/baton"
fi
N_RUNS=${N_RUNS:-10000}
N_REPOS=${N_REPOS:-20}
RUNS=${RUNS:-15}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work" "$tmp/state"
cp tests/fixtures/pi/pi-json-basic.jsonl "$tmp/pi.jsonl"
printf '#!/bin/sh\ncat >/dev/null\ncat "%s"\n' "$tmp/pi.jsonl" > "$tmp/bin/pi"
chmod +x "$tmp/bin/pi"
export BATON_STATE_DIR="$tmp/state" BATON_CONFIG="$tmp/none.toml"
(cd "$tmp/work" && PATH="$tmp/bin:$PATH" "$BATON" --agent pi "say hi" >/dev/null)
ledger=$(ls "$tmp"/state/repos/*/usage.jsonl)

python3 - "$ledger" "$tmp/state/repos" "$N_RUNS" "$N_REPOS" <<'PY'
import json, os, random, sys, time
line, repos, n_runs, n_repos = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
real = json.loads(open(line).read().splitlines()[0])
random.seed(22)
now = int(time.time() * 1000)
agents = [("codex", "gpt-5.4", True), ("claude", "claude-sonnet-4-6", False),
          ("pi", "glm-5.2", False), ("gemini-cli", "gemini-3.1-pro", True)]
kinds = ["rate_limited", "quota_exhausted", "agent_error", "timeout"]
for r in range(n_repos):
    d = os.path.join(repos, f"proj{r}-{r:016x}")
    os.makedirs(d, mode=0o700, exist_ok=True)
    open(os.path.join(d, "root"), "w").write(f"/home/me/proj{r}\n")
    with open(os.path.join(d, "usage.jsonl"), "w") as f:
        for i in range(n_runs // n_repos):
            at = now - random.randrange(60 * 86_400_000)
            run = f"{r:04d}{i:09d}"
            calls = [random.choice(agents)]
            if i % 10 == 0:
                calls.insert(0, agents[0])
            for k, (agent, model, est) in enumerate(calls):
                e = dict(real, at=at + k, run=run, agent=agent, model=model,
                         input=random.randrange(100, 200_000), output=random.randrange(10, 20_000),
                         cached=random.randrange(0, 50_000), cost=round(random.random(), 6), ms=1000)
                last = k == len(calls) - 1
                if last and random.random() < 0.1 or not last:
                    e.update(status="failed", kind=random.choice(kinds))
                else:
                    e.update(status="success", kind=None)
                if est:
                    e["est"] = True
                if k > 0:
                    e["fb"] = True
                f.write(json.dumps(e, separators=(",", ":")) + "\n")
PY
total=$("$BATON" usage | python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print(t["runs"], t["calls"])')
echo "ledgers: $N_REPOS projects, runs and calls: $total, $(du -sh "$tmp/state/repos" | cut -f1) on disk"

time_it() {
    python3 - "$RUNS" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # warm the page cache
ts = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    ts.append((time.perf_counter() - t) * 1000)
print(f"{' '.join(cmd[1:]):<28} median {statistics.median(ts):7.1f} ms  min {min(ts):7.1f} ms")
PY
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
time_it "$BATON" usage
time_it "$BATON" usage --by agent
time_it "$BATON" usage --by day
time_it "$BATON" usage --since 7d --by model
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
