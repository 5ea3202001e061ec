#!/usr/bin/env bash
# calls.sh calls side by side on a machine of several GPUs (nvidia-h200-x2). Lane i sees only GPU i
# (CUDA_VISIBLE_DEVICES) and its own share of the host's cores (taskset: lane i of L gets cores [i, i + 1) x nproc / L,
# so GAPBS's 16 threads on a 32-core host of two lanes run as on the 16-core one-GPU host); it has its own Numba cache
# and workflow folders (/tmp/laneI, run.sh's BENCH_ROOT) and writes under $OUT/laneI (log.txt, res.tar.gz). Device
# time counts the machine's held time, so two lanes do two GPUs' work in one call's time; the lanes still share the
# host's memory bandwidth, which the write-ups say beside figures timed on host threads.
# usage (on the device, repo root):
#   GPUSP_COMMIT=<sha> [CAP_...=S] benchmarks/h200/lanes.sh "[VAR=VALUE ...] CALL DEADLINE STEP ..." ...
# (a lane's leading VAR=VALUE words are that lane's own environment, e.g. SCALE_GRAPHS=kron-22,urand-22)
set -u
. benchmarks/h200/env.sh
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
share=$(($(nproc) / $#)) pin="taskset -c "
command -v taskset >/dev/null || { echo "no taskset: the lanes share every core"; pin="env LANE_CORES="; }
i=0
for lane in "$@"; do
    mkdir -p "$OUT/lane$i" "/tmp/lane$i"
    read -ra words <<< "$lane"
    envs=()
    while [ "${#words[@]}" -gt 0 ] && [[ ${words[0]} == *=* ]]; do envs+=("${words[0]}"); words=("${words[@]:1}"); done
    # shellcheck disable=SC2086  # $pin is the command and its option, split on purpose
    (OUT=$OUT/lane$i CUDA_VISIBLE_DEVICES=$i NUMBA_CACHE_DIR=/tmp/numba-cache-$i BENCH_ROOT=/tmp/lane$i \
        OMP_NUM_THREADS=$share NUMBA_NUM_THREADS=$share $pin$((i * share))-$(((i + 1) * share - 1)) \
        env "${envs[@]}" benchmarks/h200/calls.sh "${words[@]}" > "$OUT/lane$i/log.txt" 2>&1) &
    i=$((i + 1))
done
wait
for f in "$OUT"/lane*/log.txt; do echo "=== $f"; tail -n 15 "$f"; done
