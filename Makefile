# baton: one command runs every test (`make test`).
CARGO ?= cargo

.PHONY: all build test lint fmt bench
all: build

build:
	$(CARGO) build --release --locked

test:
	$(CARGO) test --locked --all-targets

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

bench:
	bench/run.sh

-include mk/*.mk
