# Background jobs: `make bench-jobs` prints the figures quoted in
# docs/benchmarks.md (Jobs): launch and wake latency, CPU of a wait, listing 10,000 jobs.
.PHONY: bench-jobs
bench-jobs:
	bench/jobs.sh
