#!/usr/bin/env bash
# The native-launch re-run's owed experiments (issue 25): GPU steps through calls.sh, and beside them, on other
# cores of the host, paper 000's serial CPU columns: Bellman-Ford with |V| - 1 fixed rounds on NY (the whole run)
# and the matrix-scan Dijkstra APSP on Gnutella04 estimated from seeded sources (benchmarks/papers/cpu_sampled.py).
# usage (device, repo root): GPUSP_COMMIT=<sha> benchmarks/h200/native-owed.sh CALL DEADLINE_S [cpu] STEP ...
# ("cpu" starts the CPU jobs; packs everything into $OUT/res.tar.gz)
set -u
call=$1 deadline=$2
shift 2
T0=$(date +%s)
O=/tmp/o/$call
mkdir -p "$O/cpu"
. benchmarks/h200/env.sh
cpu=()
if [ "${1:-}" = cpu ]; then
    shift
    left=$((deadline - 40))
    lscpu > "$O/cpu/lscpu.txt"
    ( python3 -m gpusp.cli convert .devdata/USA-road-d.NY.gr.gz /tmp/ny.npz \
      && timeout -k 5 "$left" python3 -m gpusp.cli solve --graph /tmp/ny.npz --solver bellmanford_cpu \
         --param rounds=fixed --num-sources 1 --seed 1 --trials 1 --warmup 0 --validate \
         --record "$O/cpu/bellmanford_cpu-fixed-ny.json"; echo "exit $?" ) > "$O/cpu/bellmanford_cpu-fixed-ny.log" 2>&1 &
    cpu+=($!)
    ( python3 -m gpusp.cli weights add .devdata/p2p-Gnutella04.txt.gz /tmp/g04.npz --min 1 --max 100 --seed 1 \
      && timeout -k 5 "$left" python3 benchmarks/papers/cpu_sampled.py /tmp/g04.npz --sources 1024 --batches 16 \
         --seed 1 --out "$O/cpu/dijkstra_cpumatrix-g04-sampled.csv"; echo "exit $?" ) > "$O/cpu/dijkstra_cpumatrix-g04.log" 2>&1 &
    cpu+=($!)
fi
left=$((deadline - ($(date +%s) - T0)))
benchmarks/h200/calls.sh "$call" "$left" "$@"
for p in "${cpu[@]}"; do wait "$p"; done
tail -3 "$O"/cpu/*.log
tar czf "$OUT/res.tar.gz" -C "$O" .
echo "=== native-owed $call done in $(( $(date +%s) - T0 )) s"
