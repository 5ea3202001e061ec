#!/usr/bin/env bash
# Issue 26 on the lent GPU: config/h200-sssp-road.yaml through `gpusp bench` (benchmarks/h200/run.sh), in parts that
# fit a device call, and the grid stand-in's defaults against its sweep (road_sweep.py: the grid built and its SciPy
# reference computed once per seed).
# usage (device, repo root): GPUSP_COMMIT=<sha> benchmarks/h200/road.sh PART; leaves $OUT/road-PART-*
#   one:   the 16-source graphs (NY, BAY, Gnutella30, Enron): deltastep_gpu, GAPBS 1 and 16 threads, SciPy,
#          multisource_sssp, phast_gpu
#   many:  the 1,024-source graphs: multisource_sssp, phast_gpu, GAPBS 16 threads source after source
#   grid:  road_sweep.py grid over weight seeds (GRID_SEEDS, default 1 2 3 4), 8 sources each
set -u
part=$1
O=${OUT:-/tmp/out}
case $part in
    one) OUT=$O benchmarks/h200/run.sh config/h200-sssp-road.yaml road-one USA-road-d.NY USA-road-d.BAY \
             p2p-Gnutella30 email-Enron > /dev/null 2>&1 ;;
    many) OUT=$O benchmarks/h200/run.sh config/h200-sssp-road.yaml road-many NY-1024src BAY-1024src \
              Gnutella30-1024src Enron-1024src > /dev/null 2>&1 ;;
    grid) . benchmarks/h200/env.sh
          python3 benchmarks/h200/road_sweep.py grid --seeds ${GRID_SEEDS:-1 2 3 4} --sources 8 --deltas 2 4 \
              --lanes 4 32 --out "$O/road-grid.csv" 2>&1 | tee "$O/road-grid-log.txt" ;;
    *) echo "unknown part $part"; exit 2 ;;
esac
echo "part $part exit $?"
ls "$O"
grep -h "validation:" "$O"/road-*-log.txt 2>/dev/null | sort | uniq -c | sort -rn | head -5
