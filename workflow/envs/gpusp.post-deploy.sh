#!/usr/bin/env bash
# Snakemake runs this in the environment of gpusp.yaml once it is created. It installs gpusp from the checkout
# the workflow runs from, GPUSP_WORKFLOW_DIR (the Snakefile sets it to its own folder, which holds pyproject.toml),
# editable, so that the jobs run the checkout's code and a solver's code hash is the one the workflow planned with.
set -euo pipefail
if [ ! -f "${GPUSP_WORKFLOW_DIR:-}/pyproject.toml" ]; then
  echo "gpusp.post-deploy.sh: GPUSP_WORKFLOW_DIR (${GPUSP_WORKFLOW_DIR:-unset}) is not a gpusp checkout" >&2
  exit 1
fi
python -m pip install --no-deps --editable "$GPUSP_WORKFLOW_DIR"
