#!/usr/bin/env bash
# Issue 27 through Snakemake on the lent GPU: config/h200-sssp-peers.yaml (GRAPHS: only these of its graphs, in a copy
# under /tmp) run by benchmarks/h200/snakemake.sh (build_gunrock, build_gapbs, a solve and a validate job per
# configuration, the tables and the report), then the workflow tests of tests/solvers/peers/gunrock/test_gunrock_peer.py.
# usage (device, repo root): GPUSP_COMMIT=<sha> [GRAPHS="g1 g2"] benchmarks/h200/peers-workflow.sh; leaves $OUT/peers/.
set -u
. benchmarks/h200/env.sh
C=/tmp/peers-config.yaml
python3 -c "import sys, yaml; c = yaml.safe_load(open('config/h200-sssp-peers.yaml')); keep = sys.argv[1:]
c['graphs'] = {k: v for k, v in c['graphs'].items() if not keep or k in keep}; yaml.safe_dump(c, open('$C', 'w'))" ${GRAPHS:-}
benchmarks/h200/snakemake.sh peers --configfile "$C" --keep-going
PATH=/tmp/bin:$PATH timeout 90 python3 -m pytest -q -p no:cacheprovider tests/solvers/peers/gunrock/test_gunrock_peer.py -k workflow 2>&1 | tail -3
