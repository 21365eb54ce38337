# Harbor's own task loader over `baton bench export --format harbor`
# (tests/bench_export.rs, harbors_own_loader_reads_every_exported_task).
#
#   make harbor-venv    target/harbor-venv: a Python 3.12 venv with the pinned
#                       `harbor` from PyPI (about 70 s the first time)
#   make harbor-test    the export tests, the loader one included
#
# The test reads BATON_HARBOR_PYTHON; without it it skips with a note, and
# fails when CI is set (.ci/run installs the venv before `make test`).
HARBOR_VERSION ?= 0.26.0
HARBOR_PYENV ?= 3.12.1
HARBOR_VENV ?= $(CURDIR)/target/harbor-venv
HARBOR_STAMP := $(HARBOR_VENV)/.harbor-$(HARBOR_VERSION)

.PHONY: harbor-venv harbor-test
harbor-venv: $(HARBOR_STAMP)

$(HARBOR_STAMP):
	rm -rf "$(HARBOR_VENV)"
	PYENV_VERSION=$(HARBOR_PYENV) python -m venv "$(HARBOR_VENV)"
	"$(HARBOR_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check "harbor==$(HARBOR_VERSION)"
	"$(HARBOR_VENV)/bin/python" -c "import harbor.models.task.task"
	touch "$@"

harbor-test: harbor-venv
	BATON_HARBOR_PYTHON="$(HARBOR_VENV)/bin/python" $(CARGO) test --locked --test integration bench_export
