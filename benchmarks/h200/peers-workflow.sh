#!/usr/bin/env bash
# Issue 27 through Snakemake on the lent GPU: config/h200-sssp-peers.yaml run by the workflow itself (build_gunrock and
# build_gapbs rules, one solve job per configuration, the tables and the report), then the workflow test of
# tests/test_gunrock.py. The device has no `gpusp` entry point: a two-line script on PATH stands in for it.
# usage (device, repo root): GPUSP_COMMIT=<sha> [GRAPHS="g1 g2"] [WF_LIMIT=S] benchmarks/h200/peers-workflow.sh; leaves
# $OUT/wf-* (GRAPHS: only these graphs of the config, in a copy under /tmp).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src NUMBA_ENABLE_CUDASIM=0 PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/numba-cache
export GPUSP_MIRROR=$PWD/.devdata
mkdir -p /tmp/bin && printf '#!/bin/sh\nexec python3 -m gpusp.cli "$@"\n' > /tmp/bin/gpusp && chmod +x /tmp/bin/gpusp
export PATH=/tmp/bin:/tmp/site/bin:$PATH
W=/tmp/wf O=${OUT:-/tmp/out} C=/tmp/peers-config.yaml
python3 -c "import sys, yaml; c = yaml.safe_load(open('config/h200-sssp-peers.yaml')); keep = sys.argv[1:]
c['graphs'] = {k: v for k, v in c['graphs'].items() if not keep or k in keep}; yaml.safe_dump(c, open('$C', 'w'))" ${GRAPHS:-}
sm() { python3 -m snakemake --configfile $C --config results=$W mirror=$PWD/.devdata "$@"; }
timeout "${WF_LIMIT:-420}" bash -c "$(declare -f sm); W=$W C=$C; sm --cores 16 --resources gpu=1 --keep-going" > "$O/wf-log.txt" 2>&1
echo "snakemake exit $?"; grep -E "steps \(|Error|error" "$O/wf-log.txt" | tail -5
sm --cores 1 --report "$O/wf-report.html" > "$O/wf-report-log.txt" 2>&1; echo "report exit $?"
cp $W/tables/summary.csv "$O/wf-summary.csv"; cp $W/tables/landing.rst "$O/wf-landing.rst"
tar czf "$O/wf-records.tar.gz" --exclude='*.npz' -C $W runs logs tables 2>/dev/null
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_gunrock.py -k workflow 2>&1 | tail -3
