"""Derive the trimmed copies of config/experiments/*.yaml that the 2026-11-24 H200 run used.

The lent H200 gave this run about 13 minutes of device time for ten experiments, so each config was copied
(never edited in place) with the changes listed in CHANGES: jobs run in the bench process (in_process, no child
start-up per job; the call's own `timeout` bounds each experiment), trials / warm-up cut where one run takes
tens of seconds, and jobs whose estimated time would not fit left out (each one named in the header of the copy
and in benchmarks/papers/README.md). Run from the repository root: `python benchmarks/papers/make_configs.py`.
"""

from __future__ import annotations

from pathlib import Path

import yaml

SRC, DST = Path("config/experiments"), Path("benchmarks/papers/configs")


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
        elif sv["name"] == "scipy_apsp":
            sv["graphs"] = apsp
    return ["in_process: true", "Harish's N = 1 APSP on |V| <= 2K only (11-17 s at 4K, growing as |V|^2)",
            "scipy_apsp on |V| <= 8K only (16K: about a minute on one core)"]


CHANGES = {"p000t1": ("paper000-table1", p000t1), "p000t2": ("paper000-table2", p000t2),
           "p000t2b": ("paper000-table2", p000t2b), "p000t3": ("paper000-table3", p000t3),
           "p001t1": ("paper001-table1", p001t1), "p004transfer": ("paper004-transfer", plain),
           "p004fig2": ("paper004-fig2-pull-push", plain), "p004fig1": ("paper004-fig1-edges-per-thread", plain),
           "p001fig12": ("paper001-fig12", one_trial), "p001fig13": ("paper001-fig13", one_trial),
           "p002fig4": ("paper002-fig4", p002fig4),
           "p004minplus": ("paper004-apsp-minplus", plain), "p004allsrc": ("paper004-apsp-allsources", one_trial),
           "p001fig14": ("paper001-fig14", one_trial), "p001sec52": ("paper001-sec52-n-b", p001sec52),
           "p001fig10": ("paper001-fig10", p001fig10)}


def main():
    DST.mkdir(parents=True, exist_ok=True)
    for short, (exp, fn) in CHANGES.items():
        c = yaml.safe_load((SRC / f"{exp}.yaml").read_text())
        notes = fn(c)
        c["in_process"] = True
        head = [f"# Derived from config/experiments/{exp}.yaml by benchmarks/papers/make_configs.py for the",
                "# 2026-11-24 H200 run (see benchmarks/papers/README.md); the original's header says what it reproduces.",
                "# Changes:"] + [f"#  - {n}" for n in notes]
        (DST / f"{short}.yaml").write_text("\n".join(head) + "\n" + yaml.safe_dump(c, sort_keys=False, width=120))
        print(short, exp)


if __name__ == "__main__":
    main()
