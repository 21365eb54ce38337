# baton: one command runs every test (`make test`).
CARGO ?= cargo

.PHONY: all build test lint fmt bench
all: build

build:
	$(CARGO) build --release --locked

# The integration tests mostly wait (timeouts, kill graces, peers that
# sleep, gates): on 2 cores libtest's default of one thread per core left
# half the CPU idle (127 s; 80 s with 4 threads, docs/testing.md). Twice the
# cores, unless RUST_TEST_THREADS says otherwise.
TEST_THREADS ?= $(shell n=$$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2); echo $$((n * 2)))

test:
	RUST_TEST_THREADS=$${RUST_TEST_THREADS:-$(TEST_THREADS)} $(CARGO) test --locked --all-targets

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

bench:
	bench/run.sh

-include mk/*.mk
