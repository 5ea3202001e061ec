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

test: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python -m pytest

.PHONY: install run test
