# Two commands on a fresh machine:   make run   (the workflow on the embedded default)   make test
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
# STAMP: everything (the workflow, the tests, the CUDA 13 wheels of the offline sm_90 gate); STAMP_RUN: what
# `make run` needs, the workflow, with the CUDA wheels only where there is a GPU (nvidia-smi answers)
STAMP = $(VENV)/.installed
STAMP_RUN = $(VENV)/.installed-run
RUN_EXTRAS = workflow$(shell command -v nvidia-smi >/dev/null 2>&1 && echo ,cu13)

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[cu13,workflow,test]"
	touch $(STAMP) $(STAMP_RUN)

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[$(RUN_EXTRAS)]"
	touch $(STAMP_RUN)

install: $(STAMP)

run: $(STAMP_RUN)
	$(BIN)/python -m compileall -q src >/dev/null
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/snakemake --cores 2

# Snakemake's HTML report of the last `make run` (report.html)
report: $(STAMP_RUN)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/snakemake --cores 2 --report report.html

# One pytest-xdist worker per core (xdist comes with the test extra); where xdist does not import, one process.
# --dist loadfile: a test file runs whole in one worker, the compile gate's kernels one by one (tests/conftest.py).
# Bytecode written first: where PYTHONDONTWRITEBYTECODE is set, every gpusp process of the tests (a workflow's jobs)
# would otherwise compile the package's sources again, about a second each.
test: $(STAMP)
	$(BIN)/python -m compileall -q src tests >/dev/null
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python -m pytest \
	  $$($(BIN)/python -c 'import xdist' 2>/dev/null && echo '--dist loadfile -n auto')

.PHONY: install run report test
