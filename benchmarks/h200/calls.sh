#!/usr/bin/env bash
# The H200 runs of issues 8-11 and 25-26 in a few device calls (each write-up names the calls and steps it ran). A
# sweep is a config run by benchmarks/h200/run.sh (gpusp bench); the microbenchmarks and profiler runs are scripts and
# CLI calls. Steps of the 2026-11-24/25 calls whose scripts are gone (msold, msnew) are in the git history.
# usage (on the device, repo root): GPUSP_COMMIT=<sha> [CAP=S] benchmarks/h200/calls.sh CALL DEADLINE_S STEP ...
# (the n* steps are the native-launch re-run of the papers' experiments, the r39* steps issue 39's rerun, each capped at
# CAP_<step> or CAP seconds, default 240)
# Each STEP runs under `timeout` with min(its cap, the time left before DEADLINE_S); a step that would get less
# than its minimum is skipped and logged. Everything goes to /tmp/o/CALL, packed after every step into
# $OUT/res.tar.gz, so a call that is killed still returns what was done.
set -u
call=$1 deadline=$2
shift 2
T0=$(date +%s)
O=/tmp/o/$call
mkdir -p "$O"
. benchmarks/h200/env.sh
pack() { tar czf "$OUT/res.tar.gz" -C "$O" .; }
step() {  # name cap min command-string
    local name=$1 cap=$2 min=$3 cmd=$4 left t s rc W
    left=$((deadline - ($(date +%s) - T0) - 12))
    t=$((cap < left ? cap : left))
    if [ "$t" -lt "$min" ]; then
        printf '%s\tskipped\t0\t%s\n' "$name" "$t" | tee -a "$O/steps.tsv"
        return
    fi
    echo "=== step $name (limit $t s, $(( $(date +%s) - T0 )) s into the call)"
    s=$(date +%s)
    timeout -k 5 "$t" bash -c "$cmd"
    rc=$?
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - s ))" "$t" | tee -a "$O/steps.tsv"
    W=${BENCH_ROOT:-/tmp}/bench-$name
    if [ -d "$W/runs" ] && [ ! -f "$O/$name-records.tar.gz" ]; then  # killed: keep what it wrote, and its jobs' logs
        tar czf "$O/$name-partial-records.tar.gz" --exclude="*.answer.npz" -C "$W" runs $([ -d "$W/logs" ] && echo logs)
        cp "$W/graphs/"*.sources.txt "$O/" 2>/dev/null
    fi
    pack
}
bench() {  # name config [graphs...]
    local name=$1 cfg=$2
    shift 2
    echo "OUT=$O benchmarks/h200/run.sh $cfg $name $*"
}
compare() {  # dir base_commit config: CONFIG timed with this tree and with .old (BASE_COMMIT's checkout) in one call
    echo "mkdir -p $O/$1 && OUT=$O/$1 BASE_COMMIT=$2 benchmarks/h200/compare.sh $3 .old"
}
snap_npz() {  # name: the command that writes /tmp/NAME.npz, a SNAP graph of .devdata with weights 1..100 (seed 1) added
    echo "$GPUSP weights add .devdata/$1.txt.gz /tmp/$1.npz --min 1 --max 100 --seed 1"
}
GPUSP="python3 -m gpusp.cli"
# finding 1.5b: device-memory (DRAM) and L2 bytes of nsssp's round kernels, global against shared memory
TRAFFIC="dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum" TRAFFIC_N="${TRAFFIC_N:-4096 16384}"
NSSSP_FIG10="--param sources_per_launch=32 --param groups_per_block=4 --param paths=false --param sample_groups=1"
NCU_SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis"
C=config/experiments/trimmed N=config/experiments/native
for st in "$@"; do
    case $st in
        n000t1|n000t2|n000t3|n000t3b|n001t1|n001t1c|n001fig10|n002fig4|n004fig1|n004fig2|n004transfer|n004transferbig|n004allsrc|n004minplus|n001fig14|n001fig12|n001fig13|n001sec52|r39ring|r39fig10|r39minplus|r39fig4|r39fig4a|r39fig4b|r39fig4c|r39fig4d|r39fig4e|r39fig4f|r39fig4g|r39t1|r39t1bay|r39transfer|r39transferbig|r39pieces|r39fwloop|r39t3a|r39t3b|r39fig12|r39fig13|r39fig14|r39t1pc|r39t1heapa|r39t1heapb|r39t1heapc|r39t1heaprest|r39fig1|r39fig1b|r39fig2|r39sec52|r39t2|r39fig10b|r39g30sna|r39g30snb|r39g30snc|r39g30snsa|r39g30snsb|r39g30tga|r39g30tgb|r39g30tsa|r39g25na|r39g25nb|r39g25nc|r39g25nd|r39g25ne)
            capvar="CAP_$st"; step "$st" "${!capvar:-${CAP:-240}}" 30 "$(bench "$st" "$N/$st.yaml")" ;;
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
        g30fast) step apsp-fast-g30 330 60 "$(bench apsp-fast-g30 config/sweeps/apsp-fast-gnutella30.yaml)" ;;
        g30var) step apsp-fast-g30var 300 120 "$(bench apsp-fast-g30var config/sweeps/apsp-fast-gnutella30-variants.yaml)" ;;
        focus) step apsp-fast-focus 280 80 "$(bench apsp-fast-focus config/sweeps/apsp-fast-focus.yaml)" ;;
        sparsechk) step apsp-sparse-checks 240 60 "$(bench apsp-sparse-checks config/sweeps/apsp-sparse-checks.yaml)" ;;
        sparse) step apsp-sparse-sweep 420 60 "$(bench apsp-sparse-sweep config/sweeps/apsp-sparse-sweep.yaml)" ;;
        sparseq) step apsp-sparse-knobs 240 60 "$(bench apsp-sparse-knobs config/sweeps/apsp-sparse-knobs.yaml)" ;;
        fuse) step sssp-fuse 330 90 "$(bench sssp-fuse config/sweeps/sssp-fast-fuse.yaml)" ;;
        msprof) step apsp-sparse-ncu 200 60 "mkdir -p $O/msprof && $(snap_npz p2p-Gnutella04) && $GPUSP solve --graph /tmp/p2p-Gnutella04.npz --solver multisource_fast --trials 1 --warmup 0 > $O/msprof/run-log.txt 2>&1; ncu --clock-control none --kernel-name regex:batches --launch-count 1 $NCU_SECTIONS $GPUSP solve --graph /tmp/p2p-Gnutella04.npz --solver multisource_fast --trials 1 --warmup 0 > $O/msprof/ncu.txt 2>&1; tail -120 $O/msprof/ncu.txt" ;;
        sparsecfg) step apsp-sparse-cfg 480 60 "$(bench apsp-sparse-cfg config/h200-apsp-sparse.yaml)" ;;
        fwlaunch) step apsp-fast-launches 300 60 "$(bench apsp-fast-launches config/sweeps/apsp-fast-launches.yaml)" ;;
        g04) step apsp-sparse-g04 150 40 "$(bench apsp-sparse-g04 config/sweeps/apsp-sparse-g04.yaml)" ;;
        f14paths) step p001fig14-paths 240 60 "GPUSP_SET=in_process=true $(bench p001fig14-paths config/experiments/paper001-fig14.yaml)" ;;
        async) step sssp-async 400 90 "$(bench sssp-async config/sweeps/sssp-fast-async.yaml USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron grid-4096)" ;;
        async4) step sssp-async4 300 90 "$(bench sssp-async4 config/sweeps/sssp-fast-async.yaml USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron)" ;;
        barrier) step barrier 60 20 "mkdir -p $O/barrier && python3 benchmarks/h200/barrier.py 2>&1 | tee $O/barrier/barrier-log.txt" ;;
        async5) step sssp-async5 300 90 "$(bench sssp-async5 config/sweeps/sssp-fast-async.yaml ring-4096 USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron)" ;;
        fwsmall) step apsp-fast-small 150 40 "$(bench apsp-fast-small config/sweeps/apsp-fast-small.yaml)" ;;
        snap) step sssp-snap 240 90 "$(bench sssp-snap config/sweeps/sssp-fast-snap.yaml ring-4096 p2p-Gnutella30 email-Enron USA-road-d.NY USA-road-d.BAY)" ;;
        dtest) step device-tests 420 60 "mkdir -p $O/dtest && python3 -m pytest -x -q $DTESTS > $O/dtest/pytest-log.txt 2>&1; tail -30 $O/dtest/pytest-log.txt" ;;
        ssspprof) step sssp-ncu 240 60 "mkdir -p $O/prof && $(snap_npz email-Enron) && for cfg in 'lanes=8 split=16 grid=264' 'lanes=32'; do echo \"== \$cfg\"; ncu --clock-control none --kernel-name regex:nearfar --launch-skip 1 --launch-count 1 $NCU_SECTIONS $GPUSP solve --graph /tmp/email-Enron.npz --solver deltastep_gpu --num-sources 16 --seed 1 --warmup 1 --trials 1 --param launch=direct \$(printf -- '--param %s ' \$cfg); done > $O/prof/ncu-enron.txt 2>&1; tail -150 $O/prof/ncu-enron.txt" ;;
        r39traffic) step r39traffic ${CAP_r39traffic:-300} 60 "mkdir -p $O/r39traffic && for n in $TRAFFIC_N; do $GPUSP generate random /tmp/r39traffic-\$n.npz n=\$n k=4 wmax=\$n --seed 1 || exit 1; for s in nsssp_global nsssp_shared; do ncu --clock-control none --kernel-name regex:'scatter|check' --launch-count 4000 --csv --print-units base --metrics $TRAFFIC --log-file $O/r39traffic/\$s-\$n.csv $GPUSP solve --graph /tmp/r39traffic-\$n.npz --solver \$s $NSSSP_FIG10 --trials 1 --warmup 0 > $O/r39traffic/\$s-\$n-log.txt 2>&1; done; done; python3 benchmarks/papers/ncu_traffic.py $O/r39traffic/traffic.csv \$(for n in $TRAFFIC_N; do for s in nsssp_global nsssp_shared; do echo \"\$s|random-n\$n-k4-w\$n=$O/r39traffic/\$s-\$n.csv\"; done; done)" ;;
        fwphase2) step apsp-fast-phase2 300 60 "$(bench apsp-fast-phase2 config/sweeps/apsp-fast-phase2.yaml)" ;;
        final) step sssp-final 420 120 "$(bench sssp-final config/sweeps/sssp-fast-snap.yaml)" ;;
        sssp) step sssp-fast 600 120 "$(bench sssp-fast config/sweeps/sssp-fast-all.yaml)" ;;
        fwsweep) step apsp-fast-sweep 600 120 "$(bench apsp-fast-sweep config/sweeps/apsp-fast-sweep.yaml)" ;;
        fwquick) step apsp-fast-quick 330 60 "$(bench apsp-fast-quick config/sweeps/apsp-fast-quick.yaml)" ;;
        ceiling) step addmin-ceiling 60 20 "mkdir -p $O/ceiling && python3 benchmarks/h200/addmin_ceiling.py --out $O/ceiling 2>&1 | tee $O/ceiling/ceiling-log.txt" ;;
        fwres) step fastfw-resources 120 30 "python3 benchmarks/h200/fastfw_resources.py /tmp/bench-apsp-fast-* --out $O/fastfw-resources.csv 2>&1 | tee $O/fastfw-resources-log.txt" ;;
        many) step sssp-many ${CAP_many:-300} 60 "mkdir -p $O/many && python3 benchmarks/h200/road_sweep.py many --sources 1024 --graphs ${MANY_GRAPHS:-USA-road-d.NY USA-road-d.BAY p2p-Gnutella30 email-Enron} --configs ${MANY_CONFIGS:--} --solver ${MANY_SOLVER:-multisource_sssp} --out $O/many/many-${MANY_SOLVER:-multisource_sssp}.csv 2>&1 | tee -a $O/many/many-log.txt" ;;
        phast) step sssp-phast ${CAP_phast:-240} 60 "mkdir -p $O/many && python3 benchmarks/h200/road_sweep.py many --sources 1024 --graphs ${PHAST_GRAPHS:-USA-road-d.NY USA-road-d.BAY p2p-Gnutella30} --configs ${PHAST_CONFIGS:--} --solver phast_gpu --out $O/many/many-phast.csv 2>&1 | tee -a $O/many/phast-log.txt" ;;
        gridsweep) step sssp-grid 300 60 "mkdir -p $O/grid && python3 benchmarks/h200/road_sweep.py grid --seeds 1 2 3 4 --sources 8 ${GRID_ARGS:-} --out $O/grid/grid.csv 2>&1 | tee $O/grid/grid-log.txt" ;;
        msdtest) step ms-device-tests ${CAP_msdtest:-200} 40 "mkdir -p $O/dtest && python3 -m pytest -q -p no:cacheprovider tests/solvers/multisource/test_multisource_sssp.py tests/solvers/phast/test_phast_gpu.py -m 'not slow' > $O/dtest/pytest-log.txt 2>&1; tail -8 $O/dtest/pytest-log.txt" ;;
        usaparse) step usa-parse 240 60 "mkdir -p $O/io && python3 benchmarks/large_graph_io.py --repeats ${IO_REPEATS:-2} --no-general --dir /tmp/io 2>&1 | tee $O/io/usa-parse.txt" ;;
        contract) step phast-contraction ${CAP_contract:-240} 30 "mkdir -p $O/contract && python3 benchmarks/phast_contraction.py ${CONTRACT_GRAPHS:-USA-road-d.NY USA-road-d.BAY} --threads ${CONTRACT_THREADS:-16 4 1} --mirror .devdata 2>&1 | tee -a $O/contract/contraction.jsonl" ;;
        alltrees) step all-trees ${CAP_alltrees:-300} 60 "mkdir -p $O/alltrees && for g in ${ALLTREES_GRAPHS:-USA-road-d.NY USA-road-d.BAY}; do python3 benchmarks/h200/all_trees.py \$g 1 '${ALLTREES_PARAMS:--}' ${ALLTREES_TARGETS:-0} ${ALLTREES_SOLVER:-multisource_sssp} 2>&1 | tee -a $O/alltrees/all-trees.jsonl; done" ;;
        alltreescfg) step all-trees-cfg ${CAP_alltreescfg:-300} 60 "$(bench all-trees-cfg config/h200-all-trees.yaml)" ;;
        atdtest) step all-trees-device-tests ${CAP_atdtest:-200} 40 "mkdir -p $O/dtest && NUMBA_ENABLE_CUDASIM=0 python3 -m pytest -q -p no:cacheprovider tests/measure/test_alltrees.py tests/solvers/phast/test_phast_sweep.py > $O/dtest/alltrees-pytest-log.txt 2>&1; tail -8 $O/dtest/alltrees-pytest-log.txt" ;;
        scalecfg) step ${SCALE_NAME:-sssp-scale-cfg} ${CAP_scalecfg:-540} 60 "$(bench ${SCALE_NAME:-sssp-scale-cfg} config/h200-sssp-scale.yaml ${SCALE_GRAPHS//,/ })" ;;
        # issue 38: the configurations of config/h200-sssp-scale.yaml that no call has measured, beside their baselines
        scalefill) step ${SCALE_NAME:-sssp-scale-fill} ${CAP_scalefill:-540} 60 "$(bench ${SCALE_NAME:-sssp-scale-fill} config/sweeps/sssp-scale-fill.yaml ${SCALE_GRAPHS//,/ })" ;;
        clustersdelta) step clusters-delta ${CAP_clustersdelta:-300} 60 "$(bench clusters-delta config/sweeps/sssp-clusters-delta.yaml)" ;;
        clusterscount) step clusters-count-${COUNT_GRAPHS:-all} ${CAP_clusterscount:-300} 60 "$(bench clusters-count-${COUNT_GRAPHS:-all} config/sweeps/sssp-clusters-count.yaml ${COUNT_GRAPHS:-})" ;;
        scaledelta) step scale-delta ${CAP_scaledelta:-300} 60 "$(bench scale-delta config/sweeps/sssp-scale-delta.yaml)" ;;
        scalehubs) step scale-hubs ${CAP_scalehubs:-300} 60 "$(bench scale-hubs config/sweeps/sssp-scale-hubs.yaml)" ;;
        lean) step scale-lean ${CAP_lean:-360} 60 "$(bench scale-lean config/sweeps/sssp-scale-lean.yaml)" ;;
        leanqueue) step scale-lean-queue ${CAP_leanqueue:-300} 60 "$(bench scale-lean-queue config/sweeps/sssp-scale-lean-queue.yaml)" ;;
        leanroad) step scale-lean-road ${CAP_leanroad:-240} 60 "$(bench scale-lean-road config/sweeps/sssp-scale-lean-road.yaml)" ;;
        leantest) step lean-device-tests ${CAP_leantest:-150} 40 "mkdir -p $O/dtest && NUMBA_ENABLE_CUDASIM=0 python3 -m pytest -q -p no:cacheprovider tests/solvers/deltastep/test_deltastep_lean.py tests/solvers/deltastep/test_deltastep_paths.py -k 'lean or deltastep_gpu' > $O/dtest/lean-pytest-log.txt 2>&1; tail -8 $O/dtest/lean-pytest-log.txt" ;;
        scalepaths) step scale-paths ${CAP_scalepaths:-300} 60 "$(bench scale-paths config/sweeps/sssp-scale-paths.yaml)" ;;
        scaleregs) step scale-registers ${CAP_scaleregs:-240} 60 "$(bench scale-registers config/sweeps/sssp-scale-registers.yaml)" ;;
        # NEARFARPROF_RUNS: one profile a word, [SOLVER:] (deltastep_gpu or deltastep_lean; default deltastep_gpu) then
        # its --param assignments joined by + (e.g. deltastep_lean:paths=false+queue=4194304); NEARFARPROF_GRAPH: KIND-SCALE
        nearfarprof) G=${NEARFARPROF_GRAPH:-kron-22}; step nearfar-ncu ${CAP_nearfarprof:-240} 60 "mkdir -p $O/prof && g=/tmp/$G.npz; [ -f \$g ] || $GPUSP generate ${G%-*} \$g scale=${G##*-} --seed 1 || exit 1; for r in ${NEARFARPROF_RUNS:-paths=true paths=false}; do s=deltastep_gpu p=\$r; case \$r in *:*) s=\${r%%:*} p=\${r#*:} ;; esac; f=$O/prof/ncu-$G-\$s-\${p//[=+]/-}.txt; ncu --clock-control none --kernel-name 'regex:nearfar|^lean' --launch-skip 1 --launch-count 1 $NCU_SECTIONS --section SourceCounters $GPUSP solve --graph \$g --solver \$s --param \${p//+/ --param } --num-sources 1 --seed 1 --warmup 1 --trials 1 > \$f 2>&1; tail -80 \$f; done" ;;
        clusters) step sssp-clusters ${CAP_clusters:-240} 60 "mkdir -p $O/pieces && python3 benchmarks/h200/road_sweep.py many --graphs ${CLUSTERS_GRAPHS:-USA-road-d.NY USA-road-d.BAY grid1024 delaunay-20} --solver ${CLUSTERS_SOLVER:-deltastep_gpu deltastep_pieces deltastep_clusters deltastep_clusterasync} --sources 16 --trials 3 --configs ${CLUSTERS_CONFIGS:--} --out $O/pieces/clusters.csv 2>&1 | tee -a $O/pieces/clusters-log.txt" ;;
        chain) step pieces-chain ${CAP_chain:-150} 30 "mkdir -p $O/pieces && python3 benchmarks/h200/road_sweep.py many --graphs ${CHAIN_GRAPHS:-ring16384} --solver deltastep_clusterasync deltastep_pieces --sources 4 --trials 3 --configs ${CHAIN_CONFIGS:-delta=1000000,stripe=1024 delta=1000000,stripe=1 grid=16,delta=1000000 grid=16,stripe=64,delta=1000000 grid=16,stripe=4,delta=1000000 grid=16,stripe=1,delta=1000000} --out $O/pieces/chain.csv 2>&1 | tee -a $O/pieces/chain-log.txt" ;;
        stripes) step pieces-stripes ${CAP_stripes:-200} 40 "mkdir -p $O/pieces && python3 benchmarks/h200/road_sweep.py many --graphs ${STRIPES_GRAPHS:-USA-road-d.NY grid1024} --solver ${STRIPES_SOLVER:-deltastep_pieces} --sources 16 --trials 3 --configs ${STRIPES_CONFIGS:-grid=16,stripe=256 grid=16,stripe=4096 grid=132,stripe=256} --out $O/pieces/stripes.csv 2>&1 | tee -a $O/pieces/stripes-log.txt" ;;
        phastprof) step phast-ncu ${CAP_phastprof:-200} 60 "mkdir -p $O/prof && ncu --clock-control none --kernel-name regex:sweep_batch --launch-skip 1 --launch-count 1 $NCU_SECTIONS $GPUSP solve --graph .devdata/USA-road-d.NY.gr.gz --solver phast_gpu --num-sources 1024 --seed 1 --warmup 1 --trials 1 > $O/prof/ncu-phast-ny.txt 2>&1; tail -150 $O/prof/ncu-phast-ny.txt" ;;
        clustersprof) step clusters-ncu ${CAP_clustersprof:-240} 60 "mkdir -p $O/prof && for run in ${CLUSTERSPROF_RUNS:-'NY deltastep_clusters clusters_wave_py' 'NY deltastep_clusterasync cluster_wave_py' 'D20 deltastep_clusters clusters_wave_py'}; do set -- \$run; g=.devdata/USA-road-d.NY.gr.gz; if [ \$1 = D20 ]; then g=/tmp/delaunay-20.npz; [ -f \$g ] || $GPUSP generate delaunay \$g scale=20 --seed 1 || exit 1; fi; ncu --clock-control none --kernel-name regex:\$3 --launch-skip 1 --launch-count 1 ${CLUSTERSPROF_NCU:-$NCU_SECTIONS --section ComputeWorkloadAnalysis --section InstructionStats --section SourceCounters} $GPUSP solve --graph \$g --solver \$2 --num-sources 1 --seed 1 --warmup 1 --trials 1 > $O/prof/ncu-\$1-\$2.txt 2>&1; tail -60 $O/prof/ncu-\$1-\$2.txt; done" ;;
        deltascale) step delta-scale ${CAP_deltascale:-300} 60 "mkdir -p $O/deltascale && for k in ${DELTA_KINDS:-kron urand}; do timeout ${DELTA_EACH:-150} python3 benchmarks/h200/delta_scale.py \$k ${DELTA_SCALE:-26} --out $O/deltascale --deltas ${DELTAS:-0 8} --certify ${DELTA_CERTIFY:-8} --variants ${DELTA_VARIANTS:--} 2>&1 | tee -a $O/deltascale/delta-log.txt; done" ;;
        # issue 38: the far pile's bound per block (1e5bb3e) against its baseline c8c172a, carried as .old
        farbound) step far-bound ${CAP_farbound:-330} 120 "$(compare farbound c8c172a config/sweeps/sssp-scale-farbound.yaml)" ;;
        # issue 38: phast_gpu's one-source queries with stall-on-demand (48b107f) against f9b6d0c, carried as .old
        phastone) step phast-one ${CAP_phastone:-330} 120 "$(compare phastone f9b6d0c config/sweeps/sssp-phast-one.yaml)" ;;
        # issue 38: phast_gpu with its core searched on the device (PHASTCORE_GRAPHS: the config's graphs to run; PHASTCORE_CONFIG=-g4096: the grid alone beside deltastep_gpu), and its
        # simulator tests on the real GPU
        phastcore) step phast-core-${PHASTCORE_NAME:-all} ${CAP_phastcore:-540} 60 "$(bench phast-core-${PHASTCORE_NAME:-all} config/sweeps/sssp-phast-core${PHASTCORE_CONFIG:-}.yaml ${PHASTCORE_GRAPHS:-})" ;;
        # paper 002's versions on the GPU: v30's native events, v40 / v41's graphs built node by node (and recorded)
        fwdtest) step blockedfw-device-tests ${CAP_fwdtest:-240} 40 "mkdir -p $O/dtest && NUMBA_ENABLE_CUDASIM=0 python3 -m pytest -q -p no:cacheprovider tests/solvers/common/test_common_launch.py tests/solvers/blockedfw/test_blockedfw_versions.py > $O/dtest/blockedfw-pytest-log.txt 2>&1; tail -8 $O/dtest/blockedfw-pytest-log.txt" ;;
        coretest) step core-device-tests ${CAP_coretest:-150} 40 "mkdir -p $O/dtest && NUMBA_ENABLE_CUDASIM=0 python3 -m pytest -q -p no:cacheprovider tests/solvers/common/test_common_launch.py tests/solvers/phast/test_phast_gpu.py -k 'core or launch' > $O/dtest/core-pytest-log.txt 2>&1; tail -8 $O/dtest/core-pytest-log.txt" ;;
        # issue 38 at GAP scale (PROBE_SCALE, default 26): SCALE26_VARIANTS (default deltastep_gpu with and without its
        # tree; SOLVER:SETTINGS for another solver) beside GAPBS-16t from one .wsg, every answer certified
        scale26) P=${PROBE_SCALE:-26}; step scale-$P ${CAP_scale26:-560} 200 "mkdir -p $O/scale$P && python3 -m gpusp.cli peers build gapbs --mirror .devdata --offline > $O/scale$P/build.txt 2>&1; for k in ${SCALE26_KINDS:-kron urand}; do timeout ${SCALE26_EACH:-280} python3 benchmarks/h200/scale_probe.py \$k $P --out $O/scale$P --threads \$(nproc) --variants ${SCALE26_VARIANTS:-- paths=false} > $O/scale$P/probe-\$k.log 2>&1; echo \"probe \$k exit \$?\"; tail -4 $O/scale$P/probe-\$k.log; done" ;;
        # issue 39: the fixed rounds' device time of paper 000's three Bellman-Ford kernels on NY, ROUNDEV_REPEATS times each
        roundev) step round-device ${CAP_roundev:-150} 40 "mkdir -p $O/roundev && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/roundev/gpu.txt; python3 benchmarks/h200/round_floor.py .devdata/USA-road-d.NY.gr.gz --device-repeats ${ROUNDEV_REPEATS:-5} > $O/roundev/round-device.csv 2> $O/roundev/log.txt; cat $O/roundev/round-device.csv" ;;
        # the delta-stepping family's tree option and deltastep_gpu's tests on the card (the simulator's tests, compiled for real)
        dsdtest) step deltastep-device-tests ${CAP_dsdtest:-200} 40 "mkdir -p $O/dtest && NUMBA_ENABLE_CUDASIM=0 python3 -m pytest -q -p no:cacheprovider tests/solvers/deltastep/test_deltastep_paths.py tests/solvers/deltastep/test_deltastep_gpu.py -m 'not slow' > $O/dtest/deltastep-pytest-log.txt 2>&1; tail -8 $O/dtest/deltastep-pytest-log.txt" ;;
        topo) step topo 60 5 "mkdir -p $O/topo && (nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s; python3 -c 'from cupy.cuda import nccl; print(\"nccl\", nccl.get_version())') > $O/topo/topo.txt 2>&1; cat $O/topo/topo.txt" ;;
        distfw) step dist-fw ${CAP_distfw:-540} 60 "mkdir -p $O/distfw && python3 benchmarks/h200/multi_gpu_fw.py --runs ${DISTFW_RUNS:-fast:16384 dist1:16384 dist2:16384} --trials ${DISTFW_TRIALS:-3} --warmup ${DISTFW_WARMUP:-1} --compare ${DISTFW_COMPARE:-0} 2>&1 | tee -a $O/distfw/dist-fw.jsonl" ;;
        *) echo "unknown step $st" ;;
    esac
done
echo "=== call $call done in $(( $(date +%s) - T0 )) s"
cat "$O/steps.tsv"
pack
