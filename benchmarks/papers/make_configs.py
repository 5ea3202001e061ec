"""Derive the trimmed copies of config/experiments/*.yaml that the H200 runs used: the 2026-11-24 run
(``config/experiments/trimmed/``, CHANGES) and the native-launch re-run of 2026-11-25/26
(``config/experiments/native/``, NATIVE; run with ``--native``), with issue 39's rerun (ISSUE39, the r39* copies
beside them).

The lent H200 gave this run about 13 minutes of device time for ten experiments, so each config was copied
(never edited in place) with the changes listed in CHANGES: jobs run in the bench process (in_process, no child
start-up per job; the call's own `timeout` bounds each experiment), trials / warm-up cut where one run takes
tens of seconds, and jobs whose estimated time would not fit left out (each one named in the header of the copy
and in benchmarks/papers/README.md). Run from the repository root: `python benchmarks/papers/make_configs.py
[--native] [--out DIR]` (DIR: another folder than the committed copies', e.g. to compare).

The copies are the record of what ran: they are not regenerated when an original changes. The 2026-11-24 mode
derives from the originals as they were at 24aefd0 (paper001-table1 has since renamed powerlaw-4096 to
powerlaw-4677, so that mode stops with a KeyError on today's files: `git show 24aefd0:config/experiments/...`);
``--native`` still derives its copies from today's originals.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path

import yaml

SRC = Path("config/experiments")
DST = {False: SRC / "trimmed", True: SRC / "native"}  # the committed copies, by --native


def drop(solvers, name, **match):
    return [s for s in solvers if not (s["name"] == name and all(s.get("params", {}).get(k) == v for k, v in match.items()))]


def p000t1(c):
    s = [x for x in c["solvers"] if x["name"] != "bellmanford_cpu"]
    fixed = [x for x in s if x.get("params", {}).get("rounds") == "fixed"]
    rest = [x for x in s if x not in fixed]
    c["solvers"] = rest + fixed  # cheap jobs first; fixed-round kernels then come compiled
    return ["in_process: true", "bellmanford_cpu (|V|-1 rounds on the CPU, 1.9e11 relaxations; 22 min in the paper) left out",
            "order: references and early-exit jobs first, then the paper's fixed-round jobs"]


def p000t2(c):
    c["solvers"] = [{"name": "dijkstra_cpu"},
                    {"name": "scipy_apsp", "trials": 1, "warmup": 0},
                    {"name": "dijkstra_gpunaive", "trials": 1, "warmup": 0},
                    {"name": "dijkstra_gpunaive", "params": {"block": 1024}, "trials": 1, "warmup": 0}]
    return ["in_process: true", "scipy_apsp and both dijkstra_gpunaive jobs: 1 trial, no warm-up (a run takes 30 s or more)",
            "order: dijkstra_gpunaive block 1024 (the paper's, the longest) last"]


def p000t2b(c):
    c["solvers"] = [{"name": "dijkstra_gpunaive", "params": {"block": 1024}, "trials": 1, "warmup": 0}]
    return ["in_process: true", "only dijkstra_gpunaive block 1024, 1 trial, no warm-up: run in a later call when the "
            "first call's p000t2 ran out of time before it"]


def p000t3(c):
    g04, g25 = "p2p-Gnutella04", "p2p-Gnutella25"
    c["solvers"] = [{"name": "floydwarshall_tiledshared", "params": {"tile": 32}},
                    {"name": "floydwarshall_tiledglobal", "params": {"tile": 32}, "graphs": [g04, g25]},
                    {"name": "floydwarshall_supernaiveshared", "params": {"block": 1024}, "graphs": [g04, g25]},
                    {"name": "floydwarshall_supernaive", "params": {"tile": 32}, "graphs": [g04, g25]},
                    {"name": "floydwarshall_naive", "params": {"block": 1024}, "graphs": [g04]}]
    return ["in_process: true",
            "floydwarshall_cpu left out (1.3e12 relaxations; '>1hr' in the paper); scipy_apsp left out (the same job is in paper000-table2)",
            "Gnutella30: tiledshared only (naive, supernaive, supernaiveshared, tiledglobal estimated 110-830 s each); Gnutella25: no naive (~200 s)",
            "run per graph (--graphs), Gnutella04, then Gnutella30, then Gnutella25"]


def p001t1(c):
    order = ["random-4677", "powerlaw-4096", "ring-4677", "complete-4677"]
    c["graphs"] = {k: c["graphs"][k] for k in order}
    n1 = {"sources_per_launch": 1, "groups_per_block": 32}
    n32 = {"sources_per_launch": 32, "groups_per_block": 4}
    nonring = ["random-4677", "powerlaw-4096", "complete-4677"]
    c["solvers"] = [{"name": "nsssp_global", "params": n32, "graphs": nonring},
                    {"name": "nsssp_shared", "params": n32, "graphs": nonring},
                    {"name": "nsssp_global", "params": n32, "graphs": ["ring-4677"], "warmup": 0},
                    {"name": "nsssp_shared", "params": n32, "graphs": ["ring-4677"], "warmup": 0},
                    {"name": "scipy_apsp", "graphs": ["random-4677", "powerlaw-4096", "ring-4677"]},
                    {"name": "nsssp_global", "params": n1, "graphs": ["random-4677", "powerlaw-4096", "complete-4677"]}]
    return ["in_process: true",
            "N = 1 (Harish) on the ring left out: 4677 x 4677 host-driven rounds, estimated 650 s",
            "scipy_apsp on the complete graph left out (21.9M arcs from every source: minutes; 158 s in the paper)",
            "ring jobs without warm-up (one run is tens of seconds); graphs in the order random, power law, ring, complete"]


def p002fig4(c):
    for s in c["solvers"]:
        if s["name"] == "blockedfw_v10":
            s["graphs"] = ["random-80", "random-160", "random-240", "random-320", "random-480"]
            s.pop("time_budget_s", None)
    c["trials"] = 3
    return ["in_process: true", "3 trials instead of 5",
            "blockedfw_v10 (left out of the paper's plots as too slow) on n <= 480 only (B = 8 at n = 1200: ~90 s a run)"]


def plain(c):
    return ["in_process: true"]


CPU_APSP = ("scipy_apsp", "dijkstra_cputhreads")  # paper 001's CPU column: SciPy in 4 processes, the paper's own


def one_trial(c):
    c["trials"] = 1
    return ["in_process: true", "1 trial (and 1 warm-up) instead of 3"]


def p001sec52(c):
    c["trials"] = 1
    c["graphs"] = {k: v for k, v in c["graphs"].items() if k == "random-n4096-k4-w4096"}
    c["solvers"] = drop(c["solvers"], "nsssp_global", sources_per_launch=1)
    return ["in_process: true", "1 trial (and 1 warm-up) instead of 3", "|V| = 4K only (16K: 31 jobs of seconds each)",
            "Harish's N = 1 left out (11-17 s a run at 4K; measured in paper001-fig12/13)"]


def p001fig10(c):
    small = [g for g in c["graphs"] if int(g.split("-")[1][1:]) <= 2048]
    apsp = [g for g in c["graphs"] if int(g.split("-")[1][1:]) <= 8192]
    for sv in c["solvers"]:
        if sv["name"] == "nsssp_global" and sv.get("params", {}).get("sources_per_launch") == 1:
            sv["graphs"] = small
        elif sv["name"] in CPU_APSP:
            sv["graphs"] = list(apsp)
    return ["in_process: true", "Harish's N = 1 APSP on |V| <= 2K only (11-17 s at 4K, growing as |V|^2)",
            "scipy_apsp and dijkstra_cputhreads on |V| <= 8K only (16K: about a minute on one core)"]


CHANGES = {"p000t1": ("paper000-table1", p000t1), "p000t2": ("paper000-table2", p000t2),
           "p000t2b": ("paper000-table2", p000t2b), "p000t3": ("paper000-table3", p000t3),
           "p001t1": ("paper001-table1", p001t1), "p004transfer": ("paper004-transfer", plain),
           "p004fig2": ("paper004-fig2-pull-push", plain), "p004fig1": ("paper004-fig1-edges-per-thread", plain),
           "p001fig12": ("paper001-fig12", one_trial), "p001fig13": ("paper001-fig13", one_trial),
           "p002fig4": ("paper002-fig4", p002fig4),
           "p004minplus": ("paper004-apsp-minplus", plain), "p004allsrc": ("paper004-apsp-allsources", one_trial),
           "p001fig14": ("paper001-fig14", one_trial), "p001sec52": ("paper001-sec52-n-b", p001sec52),
           "p001fig10": ("paper001-fig10", p001fig10)}


def local_graphs(c, keep=None):
    """Only the graphs of the offline mirror or generated (and of ``keep`` when given)."""
    c["graphs"] = {k: v for k, v in c["graphs"].items() if (keep is None or k in keep)
                   and ("generate" in v or v.get("dataset") in MIRROR)}
    for s in c["solvers"]:
        if "graphs" in s:
            s["graphs"] = [g for g in s["graphs"] if g in c["graphs"]]
    c["solvers"] = [s for s in c["solvers"] if s.get("graphs", True)]


MIRROR = {"USA-road-d.NY", "USA-road-d.BAY", "p2p-Gnutella04", "p2p-Gnutella25", "p2p-Gnutella30", "email-Enron"}  # .devdata


def n000t1(c):
    local_graphs(c)
    c["solvers"] = [s for s in c["solvers"] if s["name"] != "bellmanford_cpu"]
    return ["in_process: true", "the graphs of the offline mirror only (NY, BAY)",
            "bellmanford_cpu left out (|V|-1 CPU rounds: 22 min in the paper)"]


def n000t3(c):
    local_graphs(c, keep={"p2p-Gnutella04"})
    c["solvers"] = [s for s in c["solvers"] if s["name"] != "floydwarshall_cpu"]
    return ["in_process: true", "p2p-Gnutella04 only (the others take minutes per job)",
            "floydwarshall_cpu left out (1.3e12 relaxations; '>1hr' in the paper)"]


def n001t1(c):
    n1 = {"sources_per_launch": 1, "groups_per_block": 32, "paths": False}
    cpu = [s for s in c["solvers"] if s["name"] in CPU_APSP]
    c["solvers"] = [s for s in c["solvers"] if s["name"] not in CPU_APSP] + [
        {**s, "graphs": ["random-4677", "powerlaw-4677", "ring-4677"]} for s in cpu]
    for s in c["solvers"]:
        if s.get("params") == n1:
            s["graphs"] = ["random-4677", "powerlaw-4677", "complete-4677"]
    return ["in_process: true", "Harish's N = 1 on the ring left out (4677 x 4677 host-driven rounds)",
            "scipy_apsp and dijkstra_cputhreads on the complete graph left out (21.9M arcs from every source: minutes)"]


def n004transfer(c):
    c["graphs"] = {k: v for k, v in c["graphs"].items() if v["params"]["n"] <= 8192}
    return ["in_process: true", "n <= 8192 (a complete graph of 16384 or 20480 vertices is 268M / 419M arcs to "
            "generate and convert on the device's host: minutes of the call)"]


def n000t2(c):
    c["solvers"] = [s for s in c["solvers"] if s["name"] != "dijkstra_cpumatrix"]
    for s in c["solvers"]:
        if s["name"] in ("dijkstra_gpunaive", "scipy_apsp"):
            s.update(trials=1, warmup=0)
    return ["in_process: true", "dijkstra_gpunaive and scipy_apsp: 1 trial, no warm-up (a run takes 14-52 s)",
            "dijkstra_cpumatrix estimated from 1,024 seeded sources by cpu_sampled.py instead (the whole run: "
            "about 10 min on one core)"]


def n000t3b(c):
    local_graphs(c, keep={"p2p-Gnutella25", "p2p-Gnutella30"})
    g25, g30 = "p2p-Gnutella25", "p2p-Gnutella30"
    c["solvers"] = [{"name": "floydwarshall_tiledshared", "params": {"tile": 32}, "graphs": [g25, g30]},
                    {"name": "floydwarshall_supernaiveshared", "params": {"block": 1024}, "graphs": [g25, g30]},
                    {"name": "floydwarshall_tiledglobal", "params": {"tile": 32}, "graphs": [g25]},
                    {"name": "floydwarshall_supernaive", "params": {"tile": 32}, "graphs": [g25]}]
    return ["in_process: true", "Gnutella25 and Gnutella30 only (Gnutella04 is in n000t3)",
            "no end-to-end runs (kernel time dominates: within 1.1x of the trial on Gnutella04)",
            "Gnutella30: tiled shared and supernaive shared only (the others estimated 2-20 min a job from Gnutella04 "
            "x (36,682 / 10,876)^3); floydwarshall_naive left out (30 s on Gnutella04: 4.6 min on Gnutella25)",
            "floydwarshall_cpu left out (run on the development machine's CPU instead)"]


def n001t1c(c):
    c["graphs"] = {"complete-4677": c["graphs"]["complete-4677"]}
    gpu = [s for s in c["solvers"] if s["name"] not in CPU_APSP]
    harish = [s for s in gpu if s["params"]["sources_per_launch"] == 1]
    c["solvers"] = [s for s in gpu if s not in harish] + harish
    for s in c["solvers"]:
        s.pop("graphs", None)
    for s in harish:
        s.update(warmup=0)
    c["trials"] = 1
    return ["in_process: true", "complete-4677 only (the other graphs are in n001t1)",
            "1 trial; Harish's N = 1 last and without warm-up (it ran past 150 s through Numba's launch path)",
            "scipy_apsp left out (21.9M arcs from every source: minutes)"]


def n004transferbig(c):
    c["graphs"] = {k: v for k, v in c["graphs"].items() if v["params"]["n"] >= 16384}
    c["trials"] = 1
    return ["in_process: true", "n = 16384 and 20480 only (to 8192: n004transfer), 1 trial (and 1 warm-up)"]


NATIVE = {"n000t1": ("paper000-table1", n000t1), "n000t3": ("paper000-table3", n000t3),
          "n000t2": ("paper000-table2", n000t2), "n000t3b": ("paper000-table3", n000t3b),
          "n001t1c": ("paper001-table1", n001t1c), "n001fig10": ("paper001-fig10", p001fig10),
          "n004minplus": ("paper004-apsp-minplus", plain),
          "n001t1": ("paper001-table1", n001t1), "n002fig4": ("paper002-fig4", p002fig4),
          "n004fig1": ("paper004-fig1-edges-per-thread", plain), "n004fig2": ("paper004-fig2-pull-push", plain),
          "n004transfer": ("paper004-transfer", n004transfer), "n004allsrc": ("paper004-apsp-allsources", one_trial),
          "n001fig14": ("paper001-fig14", one_trial), "n001fig12": ("paper001-fig12", one_trial),
          "n001fig13": ("paper001-fig13", one_trial), "n001sec52": ("paper001-sec52-n-b", p001sec52),
          "n004transferbig": ("paper004-transfer", n004transferbig)}


# --- issue 39's rerun (benchmarks/papers/native/README.md, its last section): >= 5 trials after a warm-up that
# holds the first-use compile, the papers' own timing windows beside device time, sampled sources where a whole
# APSP does not fit a device call
FIVE = "5 trials after 1 warm-up (the warm-up holds the first-use compile)"
HARISH = {"sources_per_launch": 1, "groups_per_block": 32, "paths": False}
PROPOSED = {"sources_per_launch": 32, "groups_per_block": 4, "paths": False}


def five(c):
    c["trials"], c["warmup"] = 5, 1
    for s in c["solvers"]:
        for key in ("trials", "warmup", "time_budget_s"):
            s.pop(key, None)


def r39ring(c):
    c["graphs"] = {k: c["graphs"][k] for k in ("random-4677", "ring-4677")}
    five(c)
    ring = ["ring-4677"]
    c["solvers"] = [{"name": "nsssp_global", "params": HARISH, "graphs": ["random-4677"]},
                    {"name": "nsssp_global", "params": {**HARISH, "sample_groups": 16}, "graphs": ring},
                    *({"name": name, "params": PROPOSED, "graphs": ["random-4677"]}
                      for name in ("nsssp_global", "nsssp_shared")),
                    *({"name": name, "params": {**PROPOSED, "sample_groups": 4}, "graphs": ring}
                      for name in ("nsssp_global", "nsssp_shared")),
                    {"name": "scipy_apsp", "params": {"workers": 4}}]
    return ["in_process: true", FIVE, "random-4677 and ring-4677 only",
            "on the ring a seeded sample of source groups (sample_groups): Harish 16 of 4677 sources, the proposed "
            "method 4 of 147 groups of 32; every ring source takes |V| rounds, so the sample x groups / sample is the "
            "whole APSP", "dijkstra_cputhreads left out (SciPy on 4 workers is the CPU column here)"]


def r39fig10(c):
    five(c)
    sizes = {g: int(g.split("-")[1][1:]) for g in c["graphs"]}
    whole = [g for g, n in sizes.items() if n <= 16384]
    big = [g for g, n in sizes.items() if n > 16384]
    c["max_apsp_n"] = max(sizes.values())  # above 16K only sampled groups run: K x n rows, not n x n
    c["solvers"] = [{"name": "nsssp_global", "params": HARISH, "graphs": whole[:2]},
                    {"name": "nsssp_global", "params": {**HARISH, "sample_groups": 256}, "graphs": list(sizes)[2:]},
                    *({"name": name, "params": PROPOSED, "graphs": whole} for name in ("nsssp_global", "nsssp_shared")),
                    *({"name": name, "params": {**PROPOSED, "sample_groups": 8}, "graphs": big}
                      for name in ("nsssp_global", "nsssp_shared")),
                    *({"name": name, "params": p, "graphs": whole[:3]}
                      for name, p in (("scipy_apsp", {"workers": 4}), ("dijkstra_cputhreads", {"threads": 4})))]
    return ["in_process: true", FIVE, "max_apsp_n: the largest graph (above 16K only sampled groups run)",
            "Harish's N = 1: the whole APSP at 1K and 2K, 256 sampled sources from 4K to 1M",
            "the proposed method (N = 32): the whole APSP to 16K, 8 sampled groups of 32 above",
            "scipy_apsp and dijkstra_cputhreads to 4K; the SSSP side (harish_scattercheck, scipy_dijkstra, "
            "dijkstra_cpu) left out"]


def r39minplus(c):
    five(c)
    c["solvers"] = [s for s in c["solvers"] if s["name"] in ("minplus_naive", "minplus_tiled",
                                                             "floydwarshall_supernaive")]
    return ["in_process: true", FIVE, "the squarings (untiled and tiled: finding 3.1's comparison) and the basic "
            "Floyd-Warshall only (SciPy and tiled-shared FW left out)"]


def r39fig4(c):
    five(c)
    sizes = {g: v["params"]["n"] for g, v in c["graphs"].items()}
    solvers = []
    for s in c["solvers"]:
        if s["name"] == "scipy_apsp":
            continue
        for b in s["params"]["block_size"]:
            graphs = [g for g, n in sizes.items() if n % b == 0 and (s["name"] != "blockedfw_v10" or n <= 480)]
            solvers.append({**s, "params": {**s["params"], "block_size": b}, "graphs": graphs, "end_to_end": True})
    c["solvers"] = solvers
    return ["in_process: true", FIVE, "only the thesis's own (n, B): B divides n (section 4's preamble)",
            "every blocked version with end_to_end (5 runs): the thesis's chrono window, copies and graph building "
            "included, beside the CUDA events", "blockedfw_v10 on n <= 480 only; scipy_apsp left out"]


# r39fig4 again, in parts that each fit a device step (r39fig4 itself, 231 configurations at about 7 s each, was cut
# at its cap): the configurations paper 002's rows of findings.yaml name, all at the thesis's own (n, B), filled in
# order of n. A step's cost on the H200 (call b1 of 2026-11-29, r39fig4's log): about 7 s a configuration (its solve's
# and its validation's process start-up), its runs (a warm-up, 5 trials and 5 end-to-end runs at paper002-fig4's
# medians), 1.5 s a graph, 20 s for the call's set-up, the DAG and the tables.
FINDINGS = Path("benchmarks/papers/findings.yaml")
FIG4_MEDIANS = Path("benchmarks/papers/native/paper002-fig4/summary.csv")
FIG4_CONFIG_S, FIG4_GRAPH_S, FIG4_FIXED_S, FIG4_STEP_S, FIG4_RUNS = 7.0, 1.5, 20.0, 200.0, 11
FIG4_PARTS = "abcdefgh"


def fig4_configurations() -> list[tuple[int, str, str, str]]:
    """(n, graph, solver, params label) of every configuration paper 002's measured rows judge, in order of n."""
    from gpusp.report.findings import cell_specs, expand_cells

    named = set()
    for item in yaml.safe_load(FINDINGS.read_text())["findings"]:
        if str(item["paper"]) == "002" and item["kind"] == "measured" and "not_run" not in item:
            for cell in expand_cells(item["test"]):
                named |= {tuple(s.partition(" *")[0].split("|")) for s in cell_specs(cell) if "not_run" not in cell}
    return sorted((int(graph.split("-")[1]), graph, solver, label) for graph, solver, label in named)


def fig4_cost(configs, medians: dict) -> float:
    """Estimated seconds of a step that runs these configurations."""
    return (FIG4_FIXED_S + FIG4_GRAPH_S * len({c[1] for c in configs})
            + sum(FIG4_CONFIG_S + FIG4_RUNS * medians[c[1:]] / 1000 for c in configs))


def fig4_parts() -> tuple[list[list[tuple[int, str, str, str]]], dict]:
    """The configurations in parts of at most FIG4_STEP_S estimated seconds each, and the medians they used."""
    with FIG4_MEDIANS.open() as fh:
        medians = {(r["graph"], r["solver"], r["params"]): float(r["median_ms"]) for r in csv.DictReader(fh)}
    parts = [[]]
    for config in fig4_configurations():
        if parts[-1] and fig4_cost(parts[-1] + [config], medians) > FIG4_STEP_S:
            parts.append([])
        parts[-1].append(config)
    if len(parts) > len(FIG4_PARTS):
        raise SystemExit(f"r39fig4 needs {len(parts)} parts, more than the {len(FIG4_PARTS)} named in FIG4_PARTS")
    return parts, medians


def label_params(label: str) -> dict:
    """A configuration's path label back into its parameters: 'block_size-16+capture-per-run+paths-false'."""
    params = {}
    for pair in label.split("+"):
        key, _, value = pair.partition("-")
        params[key] = int(value) if value.isdigit() else {"true": True, "false": False}.get(value, value)
    return params


def r39fig4_part(c, part: int):
    five(c)
    parts, medians = fig4_parts()
    configs = parts[part]
    c["graphs"] = {g: v for g, v in c["graphs"].items() if g in {config[1] for config in configs}}
    solvers = {}
    for _, graph, solver, label in configs:
        solvers.setdefault((solver, label), []).append(graph)
    c["solvers"] = [{"name": solver, "params": label_params(label), "graphs": graphs, "end_to_end": True}
                    for (solver, label), graphs in sorted(solvers.items())]
    return ["in_process: true", FIVE, f"part {FIG4_PARTS[part]} of r39fig4a-{FIG4_PARTS[len(parts) - 1]}: "
            f"{len(configs)} of the {sum(map(len, parts))} configurations paper 002's rows of "
            "benchmarks/papers/findings.yaml judge, all at the thesis's own (n, B) (B divides n); the parts together "
            f"hold them all, filled in order of n to at most {FIG4_STEP_S:.0f} s a step; this one about "
            f"{fig4_cost(configs, medians):.0f} s",
            "every blocked version with end_to_end (5 runs): the thesis's chrono window, copies and graph building "
            "included, beside the CUDA events", "scipy_apsp left out"]


def r39t1(c, graph="NY"):
    local_graphs(c, keep={f"USA-road-d.{graph}"})
    five(c)
    fixed = [s for s in c["solvers"] if s.get("params", {}).get("rounds") == "fixed" and s["name"] != "bellmanford_cpu"]
    for s in fixed:
        s.pop("end_to_end", None)
    waited = [{**s, "params": {**s["params"], "sync": "launch"}, "end_to_end": True, "warmup": 0} for s in fixed]
    c["solvers"] = fixed + waited
    only = "NY only (BAY: r39t1bay)" if graph == "NY" else "BAY only (NY: r39t1)"
    return ["in_process: true", FIVE, f"{only}, the fixed-round GPU rows: device time",
            "then the same kernels with sync: launch (the host waits after every launch, as the paper's loop) and "
            "end_to_end (5 runs): paper 000's window, allocations and copies included; no warm-up there (the rows "
            "before compile the kernels)"]


def r39transfer(c):
    five(c)
    c["graphs"] = {k: v for k, v in c["graphs"].items() if v["params"]["n"] <= 8192}
    for s in c["solvers"]:
        s["end_to_end"] = True
    return ["in_process: true", FIVE, "n <= 8192 (16384 and 20480: r39transferbig)",
            "end_to_end (5 runs) on every row: each run's upload is one more upload sample (end_to_end_h2d_ms)"]


def r39transferbig(c):
    c["graphs"] = {k: v for k, v in c["graphs"].items() if v["params"]["n"] >= 16384}
    five(c)
    c["sources"] = {"count": 1, "seed": 1}
    c["validate"] = {**c.get("validate", {}), "method": "certificate"}
    c["solvers"] = [{**s, "end_to_end": True} for s in c["solvers"] if s["params"]["transfer"] != "streams"]
    return ["in_process: true", FIVE, "n = 16384 and 20480 only, pageable and pinned uploads, one source",
            "end_to_end (5 runs): 6 upload samples a row", "validated by the certificate (O(m), where SciPy took 158 s "
            "a job at 16384)"]


def r39pieces(c):
    five(c)
    c["graphs"] = {k: v for k, v in c["graphs"].items() if v["params"]["n"] <= 4096}
    c["solvers"] = [{"name": "edgebf_dense", "params": {"transfer": "streams", "chunks": [2, 4]}}]
    return ["in_process: true", FIVE, "n <= 4096, the streamed runs with 2 and 4 pieces only (finding 4.3b: their "
            "piece counters, piece_relaxations and piece_improvements); no end_to_end"]


# Paper 000's Floyd-Warshall loop beside ours (issue 39's faithful comparators): the one-launch-per-k kernels with
# row_skip true (ours: row i of round k is passed over when d[i][k] is INF) and false (the paper's loop, every j of
# every row), at Table 3's settings. A job's cost on the H200: about 7 s (its process start-up and validation) and its
# runs (a warm-up and 5 trials) at paper000-table3's medians (n000t3, n000t3b: one trial each); the paper's loop is
# assumed to take FW_NOSKIP times the skipping one (no device figure of it yet). (graph, kernel) pairs are taken in
# the original's order while both loops fit FW_STEP_S.
FW_MEDIANS = Path("benchmarks/papers/native/paper000-table3/summary.csv")
FW_KERNELS = ("floydwarshall_naive", "floydwarshall_supernaive", "floydwarshall_supernaiveshared")
FW_JOB_S, FW_RUNS, FW_NOSKIP, FW_STEP_S = 7.0, 6, 2.0, 200.0


def fw_loop_cost(median_ms: float) -> float:
    """Estimated seconds of one kernel on one graph with both loops (row_skip true and false)."""
    return sum(FW_JOB_S + FW_RUNS * median_ms / 1000 * factor for factor in (1.0, FW_NOSKIP))


def r39fwloop(c):
    with FW_MEDIANS.open() as fh:
        medians = {(r["graph"], r["solver"], r["params"]): float(r["median_ms"]) for r in csv.DictReader(fh)}
    local_graphs(c)
    five(c)
    kernels = [s for s in c["solvers"] if s["name"] in FW_KERNELS]
    taken, left, unmeasured, total = {}, [], [], 0.0
    for graph in c["graphs"]:
        for s in kernels:
            label = "+".join(f"{k}-{v}" for k, v in sorted(s["params"].items()))
            if (graph, s["name"], label) not in medians:
                unmeasured.append(f"{s['name']} on {graph}")
            elif total + (cost := fw_loop_cost(medians[graph, s["name"], label])) > FW_STEP_S:
                left.append(f"{s['name']} on {graph} {cost:,.0f} s")
            else:
                taken.setdefault(s["name"], (s["params"], []))[1].append(graph)
                total += cost
    c["solvers"] = [{"name": name, "params": {**params, "row_skip": [True, False]}, "graphs": graphs}
                    for name, (params, graphs) in taken.items()]
    c["graphs"] = {g: v for g, v in c["graphs"].items() if any(g in graphs for _, graphs in taken.values())}
    return ["in_process: true", FIVE, ("the one-launch-per-k kernels at Table 3's tile / block, row_skip true (ours) "
            "and false (paper 000's loop, every j of every row) side by side; no end_to_end (kernel time dominates)"),
            f"about {total:.0f} s: {FW_JOB_S:.0f} s a job and its {FW_RUNS} runs at paper000-table3's medians, the "
            f"paper's loop taken as {FW_NOSKIP:g} x the skipping one; left out (both loops, estimated beyond "
            f"{FW_STEP_S:.0f} s a step): " + ", ".join(left) + "; without a median (not run in paper000-table3): "
            + ", ".join(unmeasured),
            ("floydwarshall_tiledglobal / _tiledshared (no row skip to turn off), floydwarshall_cpu and scipy_apsp "
            "left out")]


def r39five(c):
    five(c)
    return ["in_process: true", FIVE]


def r39five_no_scipy(c):
    c["solvers"] = [s for s in c["solvers"] if s["name"] != "scipy_dijkstra"]
    return r39five(c) + ["scipy_dijkstra left out (no finding reads it; validation still checks every answer against "
                         "SciPy)"]


def r39fig1b(c):
    """The graphs r39fig1 did not reach before its step's cap (its 2048 and 4096 columns ran whole), pooled with
    them into experiment r39fig1."""
    c["graphs"] = {k: c["graphs"][k] for k in ("complete-512", "complete-1024")}
    return r39five_no_scipy(c) + ["complete-512 and complete-1024 only: r39fig1's step ran out of its 300 s cap "
                                  "after complete-2048 and -4096"]


R39T3 = {"a": {("p2p-Gnutella04", "floydwarshall_naive"), ("p2p-Gnutella04", "floydwarshall_tiledglobal"),
               ("p2p-Gnutella04", "floydwarshall_tiledshared"), ("p2p-Gnutella25", "floydwarshall_tiledglobal"),
               ("p2p-Gnutella25", "floydwarshall_tiledshared")},
         "b": {("p2p-Gnutella25", "floydwarshall_supernaive"), ("p2p-Gnutella25", "floydwarshall_supernaiveshared")}}


def r39t3(c, part):
    """Table 3's GPU kernels at 5 trials in two parts of about 400 s each (paper000-table3's medians x 6 runs), one
    a device lane: G04's naive and tiled kernels with G25's tiled ones, and G25's two super naive kernels."""
    local_graphs(c)
    five(c)
    solvers = []
    for s in c["solvers"]:
        graphs = [g for g in c["graphs"] if (g, s["name"]) in R39T3[part]]
        if graphs:
            solvers.append({**{k: v for k, v in s.items() if k != "end_to_end"}, "graphs": graphs})
    c["solvers"] = solvers
    c["graphs"] = {g: v for g, v in c["graphs"].items() if any(g in s["graphs"] for s in solvers)}
    done = "G04's super naive kernels: r39fwloop" if part == "a" else "the rest: r39t3a"
    return ["in_process: true", FIVE, "only " + ", ".join(f"{n} on {g}" for g, n in sorted(R39T3[part])) + f" ({done})",
            "no end_to_end (kernel time dominates), no CPU column or SciPy row"]


# Issue 39's Gnutella30 cells (rows 0.8, 0.10, 0.12b) and Gnutella25's naive kernel (rows 0.7, 0.9a): Table 3's
# one-launch-per-k kernels at SPLIT_TRIALS trials, each kernel past one device step, so its trials are split into parts
# (each part its own warm-up), one config a part, and the parts' records pooled into one experiment a graph (r39g30,
# r39g25) by `gpusp aggregate` (same card: benchmarks/papers/native/README.md says how).
G30, G25, G04 = "p2p-Gnutella30", "p2p-Gnutella25", "p2p-Gnutella04"
SPLIT = {"r39g30": (G30, {"sn": "floydwarshall_supernaive", "sns": "floydwarshall_supernaiveshared",
                          "tg": "floydwarshall_tiledglobal", "ts": "floydwarshall_tiledshared"}),
         "r39g25": (G25, {"n": "floydwarshall_naive"})}
SPLIT_TRIALS, SPLIT_STEP_S = 5, 540.0
SMALLER = {G30: G25, G25: G04}  # the graph whose 5-trial median a run's estimate scales from
SHORT = {G30: "G30", G25: "G25", G04: "G04"}
R39T3_MEDIANS = [Path(f"benchmarks/papers/native/{e}/summary.csv") for e in ("r39t3a", "r39t3b")]


def split_run_s(graph: str, solver: str) -> tuple[float, str]:
    """Seconds a run of ``solver`` on ``graph`` and where the figure comes from: paper000-table3's one run where it
    ran, else the smaller graph's 5-trial median of r39t3a/b scaled by Floyd-Warshall's n^3."""
    rows = {(r["graph"], r["solver"]): r for r in csv.DictReader(FW_MEDIANS.open())}
    if (graph, solver) in rows:
        return float(rows[graph, solver]["median_ms"]) / 1000, f"paper000-table3's one {SHORT[graph]} run"
    small = SMALLER[graph]
    (r,) = [r for path in R39T3_MEDIANS for r in csv.DictReader(path.open()) if (r["graph"], r["solver"]) == (small, solver)]
    n = float(rows[graph, "floydwarshall_tiledshared"]["n"])
    return (float(r["median_ms"]) / 1000 * (n / float(r["n"])) ** 3,
            f"{SHORT[small]}'s 5-trial median x (n{graph[-2:]} / n{small[-2:]})^3")


def split_parts() -> dict[str, tuple[str, str, str, int, float, str]]:
    """{config name: (experiment, graph, solver, trials, estimated seconds, how estimated)}: each kernel's
    SPLIT_TRIALS trials in the fewest parts whose job (FW_JOB_S, a warm-up and the part's trials) fits SPLIT_STEP_S,
    as even as they come."""
    parts = {}
    for experiment, (graph, kernels) in SPLIT.items():
        for short, solver in kernels.items():
            run_s, how = split_run_s(graph, solver)
            most = int((SPLIT_STEP_S - FW_JOB_S) // run_s) - 1
            if most < 1:
                raise ValueError(f"{solver} on {graph}: {run_s:.0f} s a run, no trial beside its warm-up fits "
                                 f"{SPLIT_STEP_S} s")
            count = -(-SPLIT_TRIALS // most)
            for i in range(count):
                trials = SPLIT_TRIALS // count + (i < SPLIT_TRIALS % count)
                parts[f"{experiment}{short}{'abcdefgh'[i]}"] = (experiment, graph, solver, trials,
                                                               FW_JOB_S + (1 + trials) * run_s, how)
    return parts


def split_part(c, name: str):
    parts = split_parts()
    experiment, graph, solver, trials, seconds, how = parts[name]
    local_graphs(c, keep={graph})
    c["trials"], c["warmup"] = trials, 1
    c["solvers"] = [{**{k: v for k, v in s.items() if k not in ("end_to_end", "graphs")}, "graphs": [graph]}
                    for s in c["solvers"] if s["name"] == solver]
    siblings = [k for k, v in parts.items() if v[1:3] == (graph, solver)]
    pooled = "the parts of the four kernels" if len(SPLIT[experiment][1]) == 4 else "them"
    return ["in_process: true", f"{trials} of {solver}'s {SPLIT_TRIALS} trials on {graph} after 1 warm-up (the "
            f"warm-up holds the first-use compile), about {seconds:.0f} s ({how})",
            f"part {siblings.index(name) + 1} of {len(siblings)} ({', '.join(siblings)}); experiment {experiment} pools "
            f"{pooled}", "no end_to_end (kernel time dominates), no CPU column or SciPy row"]


def r39t1pc(c):
    c["graphs"] = {k: c["graphs"][k] for k in ("powerlaw-4677", "complete-4677")}
    five(c)
    both = ["powerlaw-4677", "complete-4677"]
    c["solvers"] = [{"name": "nsssp_global", "params": HARISH, "graphs": list(both)},
                    *({"name": name, "params": dict(PROPOSED), "graphs": list(both)}
                      for name in ("nsssp_global", "nsssp_shared")),
                    {"name": "scipy_apsp", "params": {"workers": 4}, "graphs": ["powerlaw-4677"]}]
    return ["in_process: true", FIVE, "powerlaw-4677 and complete-4677 only (random-4677 and the ring: r39ring)",
            "scipy_apsp on the power-law graph only (the complete graph's 21.9M arcs from every source: minutes); "
            "dijkstra_cputhreads left out (SciPy on 4 workers is the CPU column here)"]


# Paper 001's CPU column as the paper ran it, for findings 1.12-1.14.
HEAP = {"name": "dijkstra_cputhreads", "params": {"threads": 4}}
HEAP_NOTE = ("the CPU column as paper 001 ran it: a compiled binary-heap Dijkstra from every source on 4 threads "
             "(dijkstra_cputhreads)")

# 1.12's complete-4677 cell: the heap, 5 trials in parts (each its own warm-up), pooled into experiment r39t1heap by
# `gpusp aggregate` as r39g30 is. Its whole run (6 runs) did not finish in a 420 s step on the device's host (a run
# there takes about 64 s: benchmarks/papers/native/README.md).
T1HEAP_PARTS = {"r39t1heapa": 2, "r39t1heapb": 2, "r39t1heapc": 1}  # {config name: its trials}


def r39t1heap_part(c, name: str):
    c["graphs"] = {"complete-4677": c["graphs"]["complete-4677"]}
    five(c)
    c["trials"] = T1HEAP_PARTS[name]
    c["solvers"] = [HEAP]
    names = list(T1HEAP_PARTS)
    return ["in_process: true", f"{T1HEAP_PARTS[name]} of the 5 trials after 1 warm-up, part {names.index(name) + 1} "
            f"of {len(names)} ({', '.join(names)}), pooled into experiment r39t1heap; the whole step (6 runs) did not "
            "finish in 420 s on the device's host", "complete-4677 only",
            f"{HEAP_NOTE}; SciPy on 4 workers takes about 15 minutes a run on this graph, past a device command"]


def r39t1heaprest(c):
    c["graphs"] = {k: c["graphs"][k] for k in ("random-4677", "powerlaw-4677", "ring-4677")}
    five(c)
    c["solvers"] = [HEAP]
    return ["in_process: true", FIVE, "random-4677, powerlaw-4677 and ring-4677 (complete-4677: r39t1heap)",
            f"{HEAP_NOTE}, beside SciPy on 4 workers (r39ring, r39t1pc)"]


SEC52_ROWS = ((32, 4), (32, 8), (64, 4), (128, 4))  # (N, B): the settings finding 1.22 compares


def r39sec52(c):
    c["graphs"] = {k: v for k, v in c["graphs"].items() if k == "random-n4096-k4-w4096"}
    five(c)
    c["solvers"] = [{"name": "nsssp_shared", "params": {"sources_per_launch": n, "groups_per_block": b,
                                                        "paths": False}} for n, b in SEC52_ROWS]
    return ["in_process: true", FIVE, "|V| = 4K only",
            "nsssp_shared at the four (N, B) that finding 1.22 compares only: " +
            ", ".join(f"N {n} B {b}" for n, b in SEC52_ROWS) + " (every setting at 1 trial: n001sec52)"]


def r39t2(c):
    local_graphs(c)
    five(c)
    c["solvers"] = [{"name": "dijkstra_gpunaive", "params": {"block": 1024}}]
    return ["in_process: true", FIVE, "dijkstra_gpunaive at the paper's block 1024 only (about 53 s a run: 6 runs "
            "fill a device step); no end_to_end (kernel time dominates); the heap's and SciPy's rows: n000t2, the "
            "paper's CPU loop: benchmarks/papers/native/cpu/"]


def r39fig10b(c):
    c["graphs"] = {k: v for k, v in c["graphs"].items() if k == "random-n8192-k4-w8192"}
    five(c)
    c["solvers"] = [{"name": "scipy_apsp", "params": {"workers": 4}},
                    {"name": "nsssp_shared", "params": dict(PROPOSED)}]
    return ["in_process: true", FIVE, "|V| = 8K only: SciPy on 4 workers (r39fig10 runs it to 4K) beside the "
            "proposed method in the same job list (finding 1.4a's |V| = 8K cell)"]


ISSUE39 = {"r39ring": ("paper001-table1", r39ring), "r39fig10": ("paper001-fig10", r39fig10),
           "r39minplus": ("paper004-apsp-minplus", r39minplus), "r39fig4": ("paper002-fig4", r39fig4),
           "r39t1": ("paper000-table1", r39t1), "r39t1bay": ("paper000-table1", functools.partial(r39t1, graph="BAY")),
           "r39transfer": ("paper004-transfer", r39transfer),
           "r39transferbig": ("paper004-transfer", r39transferbig), "r39pieces": ("paper004-transfer", r39pieces),
           "r39fwloop": ("paper000-table3", r39fwloop), "r39t3a": ("paper000-table3", functools.partial(r39t3, part="a")),
           "r39t3b": ("paper000-table3", functools.partial(r39t3, part="b")),
           "r39fig12": ("paper001-fig12", r39five), "r39fig13": ("paper001-fig13", r39five),
           "r39fig14": ("paper001-fig14", r39five), "r39t1pc": ("paper001-table1", r39t1pc),
           "r39t1heaprest": ("paper001-table1", r39t1heaprest),
           "r39fig1": ("paper004-fig1-edges-per-thread", r39five_no_scipy),
           "r39fig1b": ("paper004-fig1-edges-per-thread", r39fig1b),
           "r39fig2": ("paper004-fig2-pull-push", r39five_no_scipy),
           "r39sec52": ("paper001-sec52-n-b", r39sec52), "r39t2": ("paper000-table2", r39t2),
           "r39fig10b": ("paper001-fig10", r39fig10b)}


def issue39() -> dict:
    """ISSUE39 with r39fig4's parts, r39fig4a, r39fig4b, ... (as many as fig4_parts fills), r39t1heap's parts
    (T1HEAP_PARTS) and the split kernels' parts (split_parts)."""
    parts = fig4_parts()[0]
    return {**ISSUE39, **{f"r39fig4{FIG4_PARTS[i]}": ("paper002-fig4", functools.partial(r39fig4_part, part=i))
                          for i in range(len(parts))},
            **{name: ("paper001-table1", functools.partial(r39t1heap_part, name=name)) for name in T1HEAP_PARTS},
            **{name: ("paper000-table3", functools.partial(split_part, name=name)) for name in split_parts()}}


def main(native: bool = False, out: Path | None = None):
    tables = ([(NATIVE, "2026-11-25/26 native-launch"), (issue39(), "issue 39 rerun's")] if native
              else [(CHANGES, "2026-11-24")])
    dst = out or DST[native]
    dst.mkdir(parents=True, exist_ok=True)
    for table, run in tables:
        write_copies(table, run, dst)


def write_copies(table: dict, run: str, dst: Path) -> None:
    for short, (exp, fn) in table.items():
        c = yaml.safe_load((SRC / f"{exp}.yaml").read_text())
        notes = fn(c)
        c["in_process"] = True
        head = [f"# Derived from config/experiments/{exp}.yaml by benchmarks/papers/make_configs.py for the",
                f"# {run} H200 run (see benchmarks/papers/README.md); the original's header says what it reproduces.",
                "# Changes:"] + [f"#  - {n}" for n in notes]
        (dst / f"{short}.yaml").write_text("\n".join(head) + "\n" + yaml.safe_dump(c, sort_keys=False, width=120))
        print(short, exp)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--native", action="store_true", help="the native-launch re-run's copies (NATIVE)")
    ap.add_argument("--out", type=Path, help="write here instead of the committed copies' folder")
    args = ap.parse_args()
    main(native=args.native, out=args.out)
