# `baton mcp`: `make bench-mcp` prints the figures quoted in docs/benchmarks.md
# (MCP): start-up to tools/list, idle CPU, and what a `run` through MCP adds.
.PHONY: bench-mcp
bench-mcp:
	$(CARGO) build --release --locked
	bench/mcp.py target/release/baton
