# Best of N: `make bench-fanout` prints the figures quoted in
# docs/benchmarks.md (Fan-out): a 3-candidate fan-out against its slowest
# candidate plus the judges, --pick first-green until the others are gone,
# one, two and three worktrees in a 10,000-file repository (on tmpfs, plain
# git beside them), baton's own CPU.
.PHONY: bench-fanout
bench-fanout:
	bench/fanout.sh
