#!/usr/bin/env bash
# The H200 runs of 2026-11-24 in a few device calls: issues 11 and 9 (benchmarks/papers/README.md), issue 10
# (benchmarks/apsp-sparse-h200.md). Step msold runs the tree unpacked in old/ (git archive <sha> src | tar -x -C old).
# usage (on the device, repo root): GPUSP_COMMIT=<sha> benchmarks/h200/calls.sh CALL DEADLINE_S STEP ...
# Each STEP runs under `timeout` with min(its cap, the time left before DEADLINE_S); a step that would get less
# than its minimum is skipped and logged. Everything goes to /tmp/o/CALL, packed after every step into
# $OUT/res.tar.gz, so a call that is killed still returns what was done.
set -u
call=$1 deadline=$2
shift 2
T0=$(date +%s)
O=/tmp/o/$call
mkdir -p "$O"
export GPUSP_COMMIT=${GPUSP_COMMIT:-unknown}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src NUMBA_ENABLE_CUDASIM=0 PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/numba-cache
pack() { tar czf "$OUT/res.tar.gz" -C "$O" .; }
step() {  # name cap min command-string
    local name=$1 cap=$2 min=$3 cmd=$4 left t s rc
    left=$((deadline - ($(date +%s) - T0) - 12))
    t=$((cap < left ? cap : left))
    if [ "$t" -lt "$min" ]; then
        printf '%s\tskipped\t0\t%s\n' "$name" "$t" | tee -a "$O/steps.tsv"
        return
    fi
    echo "=== step $name (limit $t s, $(( $(date +%s) - T0 )) s into the call)"
    s=$(date +%s)
    STEP_T=$t timeout -k 5 "$t" bash -c "$cmd"
    rc=$?
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - s ))" "$t" | tee -a "$O/steps.tsv"
    if [ -d "/tmp/bench-$name/runs" ] && [ ! -f "$O/$name-records.tar.gz" ]; then  # killed: keep what it wrote
        tar czf "$O/$name-partial-records.tar.gz" -C "/tmp/bench-$name" runs
        cp "/tmp/bench-$name/graphs/"*.sources.txt "$O/" 2>/dev/null
    fi
    pack
}
bench() {  # name config [graphs...]
    local name=$1 cfg=$2
    shift 2
    echo "OUT=$O benchmarks/h200/run.sh $cfg $name $*"
}
C=benchmarks/papers/configs
for st in "$@"; do
    case $st in
        t3g04) step p000t3-g04 150 30 "$(bench p000t3-g04 $C/p000t3.yaml p2p-Gnutella04)" ;;
        t1) step p000t1 300 60 "$(bench p000t1 $C/p000t1.yaml USA-road-d.NY USA-road-d.BAY)" ;;
        p1t1) step p001t1 260 60 "$(bench p001t1 $C/p001t1.yaml)" ;;
        t2) step p000t2 330 60 "$(bench p000t2 $C/p000t2.yaml)" ;;
        t2b) if ls /tmp/bench-p000t2/runs/p2p-Gnutella04/dijkstra_gpunaive/block-1024*.json >/dev/null 2>&1; then
                 echo "p000t2b: block 1024 already measured"; else step p000t2b 240 60 "$(bench p000t2b $C/p000t2b.yaml)"; fi ;;
        tr) step p004transfer 180 40 "$(bench p004transfer $C/p004transfer.yaml)" ;;
        p3) step paper003 90 20 "mkdir -p $O/paper003 && python3 -m gpusp.cli paper003 --size 256 --seed 1 --png $O/paper003/paper003-n256.png --record $O/paper003/paper003-n256.json 2>&1 | tee $O/paper003/paper003-n256-log.txt" ;;
        t3g30) step p000t3-g30 120 50 "$(bench p000t3-g30 $C/p000t3.yaml p2p-Gnutella30)" ;;
        t3g25) step p000t3-g25 200 60 "$(bench p000t3-g25 $C/p000t3.yaml p2p-Gnutella25)" ;;
        f2) step p004fig2 200 60 "$(bench p004fig2 $C/p004fig2.yaml)" ;;
        f1) step p004fig1 200 60 "$(bench p004fig1 $C/p004fig1.yaml)" ;;
        f12) step p001fig12 200 60 "$(bench p001fig12 $C/p001fig12.yaml)" ;;
        f12b) step p001fig12b 200 60 "$(bench p001fig12b $C/p001fig12.yaml random-n4096-k32-w4096 random-n4096-k64-w4096)" ;;
        p1t1c) step p001t1c 200 60 "$(bench p001t1c $C/p001t1.yaml complete-4677)" ;;
        f13) step p001fig13 200 60 "$(bench p001fig13 $C/p001fig13.yaml)" ;;
        f4) step p002fig4 200 60 "$(bench p002fig4 $C/p002fig4.yaml)" ;;
        mp) step p004minplus 150 40 "$(bench p004minplus $C/p004minplus.yaml)" ;;
        as) step p004allsrc 150 40 "$(bench p004allsrc $C/p004allsrc.yaml)" ;;
        f14) step p001fig14 120 40 "$(bench p001fig14 $C/p001fig14.yaml)" ;;
        s52) step p001sec52 150 40 "$(bench p001sec52 $C/p001sec52.yaml)" ;;
        f10) step p001fig10 420 60 "$(bench p001fig10 $C/p001fig10.yaml)" ;;
        g30fast) step apsp-fast-g30 330 60 "$(bench apsp-fast-g30 benchmarks/h200/apsp-fast-gnutella30.yaml)" ;;
        g30var) step apsp-fast-g30var 300 120 "$(bench apsp-fast-g30var benchmarks/h200/apsp-fast-gnutella30-variants.yaml)" ;;
        focus) step apsp-fast-focus 280 80 "mkdir -p $O/fw && python3 benchmarks/h200/apsp_fast.py --out $O/fw --focus --sizes 8192 4096 1200 2048 --budget-s \$((STEP_T - 45)) 2>&1 | tee $O/fw/apsp-fast-focus-log.txt" ;;
        sparse) step apsp-sparse 420 60 "mkdir -p $O/sparse && python3 benchmarks/h200/apsp_sparse.py --data .devdata --out $O/sparse 2>&1 | tee $O/sparse/apsp-sparse-log.txt" ;;
        sparseq) step apsp-sparse-quick 240 60 "mkdir -p $O/sparseq && python3 benchmarks/h200/apsp_sparse.py --data .devdata --out $O/sparseq --quick --no-checks 2>&1 | tee $O/sparseq/apsp-sparse-log.txt" ;;
        fuse) step sssp-fuse 330 90 "mkdir -p $O/fuse && python3 benchmarks/h200/sssp_fast.py --data .devdata --out $O/fuse --only-fuse --tag=-fuse --graphs USA-road-d.NY USA-road-d.BAY grid-4096 2>&1 | tee $O/fuse/sssp-fast-fuse-log.txt" ;;
        msold) step apsp-sparse-old 120 30 "mkdir -p $O/msold && PYTHONPATH=/tmp/site:$PWD/old/src python3 benchmarks/h200/apsp_sparse.py --data .devdata --out $O/msold --baseline --no-checks 2>&1 | tee $O/msold/apsp-sparse-log.txt" ;;
        msnew) step apsp-sparse-new 480 60 "mkdir -p $O/msnew && python3 benchmarks/h200/apsp_sparse.py --data .devdata --out $O/msnew --quick 2>&1 | tee $O/msnew/apsp-sparse-log.txt" ;;
        msprof) step apsp-sparse-ncu 200 60 "mkdir -p $O/msprof && python3 benchmarks/h200/apsp_sparse.py --profile-run --out $O/msprof --graphs p2p-Gnutella04 > $O/msprof/run-log.txt 2>&1; ncu --clock-control none --kernel-name regex:batches --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis python3 benchmarks/h200/apsp_sparse.py --profile-run --out $O/msprof --graphs p2p-Gnutella04 > $O/msprof/ncu.txt 2>&1; tail -120 $O/msprof/ncu.txt" ;;
        sparsecfg) step apsp-sparse-cfg 480 60 "$(bench apsp-sparse-cfg config/h200-apsp-sparse.yaml)" ;;
        fwlaunch) step apsp-fast-launches 300 60 "mkdir -p $O/fwl && python3 benchmarks/h200/apsp_fast.py --out $O/fwl --launches --sizes 1200 2048 4096 8192 --budget-s \$((STEP_T - 40)) 2>&1 | tee $O/fwl/apsp-fast-launches-log.txt" ;;
        g04) step apsp-sparse-g04 150 40 "$(bench apsp-sparse-g04 benchmarks/h200/apsp-sparse-g04.yaml)" ;;
        f14paths) step p001fig14-paths 240 60 "GPUSP_SET=in_process=true $(bench p001fig14-paths config/experiments/paper001-fig14.yaml)" ;;
        async) step sssp-async 400 90 "mkdir -p $O/async && python3 benchmarks/h200/sssp_fast.py --data .devdata --out $O/async --only-async --tag=-async --graphs USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron grid-4096 2>&1 | tee $O/async/sssp-fast-async-log.txt" ;;
        async4) step sssp-async4 300 90 "mkdir -p $O/async && python3 benchmarks/h200/sssp_fast.py --data .devdata --out $O/async --only-async --tag=-async --graphs USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron 2>&1 | tee $O/async/sssp-fast-async-log.txt" ;;
        barrier) step barrier 60 20 "mkdir -p $O/barrier && python3 benchmarks/h200/barrier.py 2>&1 | tee $O/barrier/barrier-log.txt" ;;
        async5) step sssp-async5 300 90 "mkdir -p $O/async && python3 benchmarks/h200/sssp_fast.py --data .devdata --out $O/async --only-async --tag=-async --graphs ring-4096 USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron 2>&1 | tee $O/async/sssp-fast-async-log.txt" ;;
        fwsmall) step apsp-fast-small 150 40 "mkdir -p $O/fws && python3 benchmarks/h200/apsp_fast.py --out $O/fws --small --sizes 1200 2048 --budget-s \$((STEP_T - 30)) 2>&1 | tee $O/fws/apsp-fast-small-log.txt" ;;
        snap) step sssp-snap 240 90 "mkdir -p $O/snap && python3 benchmarks/h200/sssp_fast.py --data .devdata --out $O/snap --only-snap --tag=-snap --graphs ring-4096 p2p-Gnutella30 email-Enron USA-road-d.NY USA-road-d.BAY 2>&1 | tee $O/snap/sssp-fast-snap-log.txt" ;;
        dtest) step device-tests 420 60 "mkdir -p $O/dtest && python3 -m pytest -x -q $DTESTS > $O/dtest/pytest-log.txt 2>&1; tail -30 $O/dtest/pytest-log.txt" ;;
        ssspprof) step sssp-ncu 240 60 "mkdir -p $O/prof && cd benchmarks/h200 && for cfg in 'lanes=8 split=16 grid=264' 'lanes=32'; do echo \"== \$cfg\"; ncu --clock-control none --kernel-name regex:nearfar --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis python3 sssp_profile.py --data ../../.devdata --param \$cfg; done > $O/prof/ncu-enron.txt 2>&1; tail -150 $O/prof/ncu-enron.txt" ;;
        fwphase2) step apsp-fast-phase2 300 60 "mkdir -p $O/fwp2 && python3 benchmarks/h200/apsp_fast.py --out $O/fwp2 --phase2 --sizes 1200 2048 4096 8192 --budget-s \$((STEP_T - 40)) 2>&1 | tee $O/fwp2/apsp-fast-phase2-log.txt" ;;
        final) step sssp-final 420 120 "mkdir -p $O/final && python3 benchmarks/h200/sssp_fast.py --data .devdata --out $O/final --only-snap --tag=-final --graphs ring-4096 p2p-Gnutella30 email-Enron USA-road-d.NY USA-road-d.BAY grid-4096 2>&1 | tee $O/final/sssp-fast-final-log.txt" ;;
        *) echo "unknown step $st" ;;
    esac
done
echo "=== call $call done in $(( $(date +%s) - T0 )) s"
cat "$O/steps.tsv"
pack
