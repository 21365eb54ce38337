# Watching peers: `make bench-view` prints the figures quoted in
# docs/benchmarks.md (Watching): CPU of `watch` (TUI) and `serve` with 50
# running peers, event-to-screen latency, `watch --once` over 10,000 jobs.
.PHONY: bench-view
bench-view:
	bench/view.sh
