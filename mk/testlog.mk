# A test command's log: `make bench-test-log` prints the figures quoted in
# docs/benchmarks.md (test.log): what test.log keeps of 300 MB of test
# output, and baton's peak memory meanwhile.
.PHONY: bench-test-log
bench-test-log:
	bench/test-log.sh
