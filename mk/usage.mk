# What peers spent: `make bench-usage` prints the figure quoted in
# docs/benchmarks.md (`baton usage` over 10,000 recorded runs; target <= 150 ms).
.PHONY: bench-usage
bench-usage:
	bench/usage.sh
