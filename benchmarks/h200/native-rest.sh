#!/usr/bin/env bash
# The native-launch re-run's third call: what the first two calls' time limits cut (paper004-fig1 on complete-4096,
# paper001-table1 on complete-4677, paper004-transfer on complete-8192) and paper001-fig14.
# usage (device, repo root): GPUSP_COMMIT=<sha> benchmarks/h200/native-rest.sh; packs $OUT/res.tar.gz
set -u
O=/tmp/o/c1; mkdir -p "$O"
N=benchmarks/papers/native/configs
one() {  # cap name config [graphs...]
    local cap=$1 name=$2 cfg=$3; shift 3
    OUT=$O timeout -k 5 "$cap" benchmarks/h200/run.sh "$cfg" "$name" "$@" > "$O/$name-out.txt" 2>&1
    echo "$name: exit $?"; tail -2 "$O/$name-out.txt"
    [ -d "/tmp/bench-$name/runs" ] && tar czf "$O/$name-runs.tar.gz" -C "/tmp/bench-$name" runs
    tar czf "$OUT/res.tar.gz" -C "$O" .
}
one 130 n001fig14 $N/n001fig14.yaml
one 120 n001t1c $N/n001t1.yaml complete-4677
one 200 n004fig1c $N/n004fig1.yaml complete-4096
one 100 n004transferc $N/n004transfer.yaml complete-8192
