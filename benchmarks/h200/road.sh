#!/usr/bin/env bash
# Issue 26 on the lent GPU: config/h200-sssp-road.yaml through `gpusp bench` (benchmarks/h200/run.sh), a few graphs
# per device call, and the grid stand-in's defaults against its sweep (road_sweep.py: the grid built and its SciPy
# reference computed once per weight seed instead of once per job).
# usage (device, repo root): GPUSP_COMMIT=<sha> benchmarks/h200/road.sh bench NAME GRAPH...   (leaves $OUT/NAME-*)
#                            GPUSP_COMMIT=<sha> [GRID_SEEDS="1 2 3 4"] benchmarks/h200/road.sh grid
# The committed run: bench road-many1 NY-1024src BAY-1024src; bench road-one Gnutella30-1024src Enron-1024src
# USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron; grid (benchmarks/sssp-road-h200.md).
set -u
part=$1
shift
O=${OUT:-/tmp/out}
case $part in
    bench) name=$1
           shift
           OUT=$O benchmarks/h200/run.sh config/h200-sssp-road.yaml "$name" "$@" > /dev/null 2>&1
           echo "bench $name exit $?"
           grep -h "validation:" "$O/$name-log.txt" | sed 's/(.*//' | sort | uniq -c | sort -rn | head -5
           grep -h "error\|Error\|skipped" "$O/$name-log.txt" | grep -v "Warn\|warn(" | head -10 ;;
    grid) . benchmarks/h200/env.sh
          python3 benchmarks/h200/road_sweep.py grid --seeds ${GRID_SEEDS:-1 2 3 4} --sources 8 --deltas 2 4 \
              --lanes 4 32 --out "$O/road-grid.csv" 2>&1 | tee "$O/road-grid-log.txt" ;;
    *) echo "unknown part $part"; exit 2 ;;
esac
