# The sandbox baton owns: `make bench-sandbox` prints the figures quoted in
# docs/benchmarks.md (Sandbox): wall time added by wrapping `true` (bwrap, landlock).
.PHONY: bench-sandbox
bench-sandbox:
	bench/sandbox.sh
