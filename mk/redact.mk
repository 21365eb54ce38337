# Redaction: `make bench-redact` prints recall and false positives per family
# on the generated corpus and throughput on a 10 MB packet (docs/redaction.md).
.PHONY: bench-redact
bench-redact:
	$(CARGO) bench --locked --bench redact
