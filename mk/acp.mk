# The ACP transport: `make bench-acp` prints the overhead figures quoted in
# docs/benchmarks.md (ACP): what baton adds per run over ACP and headless.
.PHONY: bench-acp
bench-acp:
	bench/acp.sh
