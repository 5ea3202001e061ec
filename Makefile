# Two commands on a fresh machine:   make run   (the workflow on the embedded default)   make test
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[cu13,workflow,test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/snakemake --cores 2

# One pytest-xdist worker per core (xdist comes with the test extra); where xdist does not import, one process.
# --dist loadfile: a test file runs whole in one worker, the compile gate's kernels one by one (tests/conftest.py).
test: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python -m pytest \
	  $$($(BIN)/python -c 'import xdist' 2>/dev/null && echo '--dist loadfile -n auto')

.PHONY: install run test
