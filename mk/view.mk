# Watching peers: `make bench-view` prints the figures quoted in
# docs/benchmarks.md (Watching): CPU of `watch` (TUI) and `serve` with 50
# running peers, `serve --all` over 20 repositories, event-to-screen latency,
# `watch --once` over 10,000 jobs (PARTS="tui serve all once" picks parts).
.PHONY: bench-view
bench-view:
	bench/view.sh

# The browser tab's memory over 30 minutes of streaming: `make bench-tab`
# prints the figures quoted in docs/benchmarks.md (Watching): JS heap, DOM
# nodes, listeners and renderer RSS of the page while 50 peers stream.
.PHONY: bench-tab
bench-tab:
	bench/tab-memory.sh

# The view across repositories: `make bench-all-repos` prints the figures
# quoted in docs/benchmarks.md (Across repositories): `watch --all --once`
# over 20 repositories × 10,000 jobs, `watch --all` CPU and latency with 50 peers.
.PHONY: bench-all-repos
bench-all-repos:
	bench/all-repos.sh
