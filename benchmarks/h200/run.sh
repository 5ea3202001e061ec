#!/usr/bin/env bash
# Run a gpusp config on the lent H200: `gpusp bench` (the workflow through Snakemake's API) with the project's pins.
# usage (on the device, from the repo root): [GPUSP_SET="KEY=VALUE ..."] benchmarks/h200/run.sh CONFIG NAME [GRAPH ...]
# (GPUSP_SET: top-level config keys overridden, e.g. in_process=true)
# Needs, carried along: .whl/ (numpy 2.4.6 cp312, the project's pin: the image's NumPy 2.5 breaks numba-cuda 0.30.4;
# Snakemake 9 and its dependencies, which the image lacks) and .devdata/ (a copy of the offline mirror of real graphs).
set -euo pipefail
config=$1 name=$2
shift 2
. benchmarks/h200/env.sh  # GPUSP_MIRROR: gapbs_sssp and gunrock_sssp build from the mirror's pinned archives
out=${OUT:-/tmp/out}
work=${BENCH_ROOT:-/tmp}/bench-$name  # BENCH_ROOT: a lane's own folder (lanes.sh)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/$name-gpu.txt"
python3 -c "import numpy, numba, scipy, importlib.metadata as m; print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', m.version('numba-cuda'), 'scipy', scipy.__version__)" | tee -a "$out/$name-gpu.txt"
graphs=()
[ $# -gt 0 ] && graphs=(--graphs "$@")
sets=(--set mirror=.devdata)
for kv in ${GPUSP_SET:-}; do sets+=(--set "$kv"); done
rc=0  # a failed job leaves no tables (the workflow aggregates complete runs only): keep the records of the others
python3 -m gpusp.cli bench --config "$config" --out "$work" "${sets[@]}" "${graphs[@]}" 2>&1 | tee "$out/$name-log.txt" || rc=$?
[ "$rc" -ne 0 ] || cp "$work/tables/summary.csv" "$out/$name-summary.csv"
[ "$rc" -ne 0 ] || cp "$work/tables/samples.csv" "$out/$name-samples.csv"
[ "$rc" -ne 0 ] || cp "$work/report.html" "$out/$name-report.html"
tar czf "$out/$name-records.tar.gz" --exclude="*.answer.npz" -C "$work" runs $(cd "$work" && ls tables/skipped.json 2>/dev/null)
exit "$rc"
