#!/usr/bin/env bash
# calls.sh calls side by side on a machine of several GPUs (nvidia-h200-x2): lane i sees only GPU i
# (CUDA_VISIBLE_DEVICES), has its own Numba cache, and writes under $OUT/laneI (log.txt, res.tar.gz). Device time counts
# the machine's held time, so two lanes do two GPUs' work in one call's time. Steps timed with host threads (GAPBS,
# contraction) see the other lane's processes on the host's cores: run those where the other lane is a single-process
# sweep, and say so beside their figures.
# usage (on the device, repo root): GPUSP_COMMIT=<sha> [CAP_...=S] benchmarks/h200/lanes.sh "CALL DEADLINE STEP ..." ...
set -u
. benchmarks/h200/env.sh
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
i=0
for lane in "$@"; do
    mkdir -p "$OUT/lane$i"
    # shellcheck disable=SC2086  # a lane is "CALL DEADLINE STEP ...", split into calls.sh's arguments
    (OUT=$OUT/lane$i CUDA_VISIBLE_DEVICES=$i NUMBA_CACHE_DIR=/tmp/numba-cache-$i \
        benchmarks/h200/calls.sh $lane > "$OUT/lane$i/log.txt" 2>&1) &
    i=$((i + 1))
done
wait
for f in "$OUT"/lane*/log.txt; do echo "=== $f"; tail -n 15 "$f"; done
