"""Time phast_gpu's contraction hierarchy build (gpusp.solvers.phast.contraction.build) on the host, one JSON line a
build: seconds (wall, and the process's CPU seconds, which a loaded host inflates less), the hierarchy's size
(shortcuts, sweep levels, arcs, witness searches, rounds), peak memory, threads, Numba's threading layer, the 1-minute
load before it.

usage: python benchmarks/phast_contraction.py GRAPH [GRAPH ...] [--threads 16 4 1] [--mirror DIR] [--core-degree -1]
    [--spaces K] [--core-floor K]
GRAPH: a DIMACS file of the mirror (--mirror, else $GPUSP_MIRROR: USA-road-d.NY), `delaunay-K` or `gridK` (K x K,
weights 1..100). Each build runs in a child process of its own, so that its peak resident memory is its own (the graph
read in the child too; that is the "before" figure); a compile on a 10 x 10 grid comes first in each child and is not
timed. --core-degree: as phast_gpu's parameter; -1 (the default) picks what phast_gpu picks (0, contract
everything, on road-like graphs; a core elsewhere, e.g. on delaunay-K, whose mean out-degree is 6). --spaces K: after
the build, the upward searches of K seeded sources on one thread, plain and with stall-on-demand (the downward arcs):
entries and microseconds a source, what a one-source query pays on the host before its sweep. --core-floor K: where a
core is left, what a query that searched the core on the device instead of the host would pay, from K seeded vertices
(`core_floor`; weights > 0)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import time


def load(name: str, mirror: str | None):
    from gpusp.data.generate import generate

    if name.startswith("grid"):
        side = int(name[4:])
        return generate("grid", rows=side, cols=side, wmin=1, wmax=100, seed=0)
    if name.startswith("delaunay-"):
        return generate("delaunay", scale=int(name.split("-")[1]), seed=1)
    from pathlib import Path

    from gpusp import read_graph

    return read_graph(next(Path(mirror or os.environ.get("GPUSP_MIRROR", "../shared/data")).glob(f"{name}.gr*")))


def spaces(h, n: int, k: int) -> dict:
    """Mean entries and host microseconds a source of k seeded upward searches, plain and stalled (one thread)."""
    import numpy as np

    from gpusp.solvers.phast import contraction

    new = h.position[np.random.default_rng(1).choice(n, size=min(k, n), replace=False)].astype(np.int64)
    out = {}
    for label, down in (("plain", ()), ("stalled", (h.down_ptr, h.down_tail, h.down_w))):
        contraction.upward_spaces(h.up_ptr, h.up_head, h.up_w, new[:1], *down)  # compiles (or loads the cache)
        t0 = time.perf_counter()
        ptr = contraction.upward_spaces(h.up_ptr, h.up_head, h.up_w, new, *down)[0]
        out[f"{label}_us"] = round((time.perf_counter() - t0) * 1e6 / new.size, 1)
        out[f"{label}_entries"] = round(float(ptr[-1]) / new.size, 1)
    return out


def tree_depth(pred, root: int) -> int:
    """Arcs on the longest root path of the shortest-path tree ``pred`` (SciPy's predecessors, -9999: none)."""
    import numpy as np

    children = np.flatnonzero(pred >= 0)
    order = np.argsort(pred[children], kind="stable")
    kids, ptr = children[order], np.searchsorted(pred[children][order], np.arange(pred.size + 1))
    frontier, depth = np.array([root]), 0
    while True:
        frontier = np.concatenate([kids[ptr[v]:ptr[v + 1]] for v in frontier])
        if frontier.size == 0:
            return depth
        depth += 1


def core_floor(graph, h, k: int) -> dict:
    """What a query that searched the core on the device would pay: the core's size and breadth-first depth (the median
    over K seeded core vertices of the most hops to another core vertex) and the sweep's levels outside it; from K
    seeded sources, the upward search up to the core (Dijkstra over the arcs up from vertices outside it) and the
    shortest-path tree of the core search started from its entries (a virtual source with an arc to each, weighted by
    its upward distance), whose depth is the rounds a round-synchronous search needs at least; and, to scale that to
    a solver's rounds, the same tree's depth on the whole graph."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra, shortest_path

    n, c, rng = h.n, h.core, np.random.default_rng(1)
    if graph.m and int(graph.weights.min()) <= 0:
        raise SystemExit("--core-floor needs weights > 0 (SciPy's sparse graphs drop explicit zeros)")
    in_core = h.rank >= n - c
    tails = np.repeat(np.arange(n), np.diff(h.up_ptr))
    both = in_core[tails] & in_core[h.up_head]
    out = {"core_arcs": int(both.sum()), "outside_levels": h.levels - (1 if c else 0)}
    ids = np.cumsum(in_core) - 1  # new id -> index among the core's vertices
    if c:
        core = csr_matrix((np.ones(int(both.sum())), (ids[tails[both]], ids[h.up_head[both]])), shape=(c, c))
        hops = shortest_path(core, unweighted=True, indices=rng.choice(c, size=min(k, c), replace=False))
        out["core_hops"] = float(np.median([row[np.isfinite(row)].max() for row in hops]))
    up = ~in_core[tails]  # the upward search expands no core vertex
    upward = csr_matrix((h.up_w[up].astype(float), (tails[up], h.up_head[up])), shape=(n, n))
    full = csr_matrix((graph.weights.astype(float), graph.indices, graph.indptr), shape=(n, n))
    entries, core_depth, depth = [], [], []
    for s in rng.choice(np.flatnonzero(~in_core), size=min(k, int((~in_core).sum())), replace=False):
        dist = dijkstra(upward, indices=s)
        reach = np.isfinite(dist)
        entries.append(int(reach.sum()))
        depth.append(tree_depth(dijkstra(full, indices=h.order[s], return_predecessors=True)[1], h.order[s]))
        if c:
            enter = np.flatnonzero(reach & in_core)
            virtual = csr_matrix((np.concatenate([h.up_w[both], dist[enter]]),
                                  (np.concatenate([ids[tails[both]], np.full(enter.size, c)]),
                                   np.concatenate([ids[h.up_head[both]], ids[enter]]))), shape=(c + 1, c + 1))
            if virtual.nnz != both.sum() + enter.size:  # SciPy sums parallel arcs: the tree would be wrong
                raise SystemExit("--core-floor: the core has parallel arcs")
            core_depth.append(tree_depth(dijkstra(virtual, indices=c, return_predecessors=True)[1], c))
    out["up_to_core_entries"] = round(float(np.mean(entries)), 1) if entries else 0.0
    out["sp_depth"] = float(np.median(depth)) if depth else 0.0
    if core_depth:
        out["core_sp_depth"] = float(np.median(core_depth))
    return out


def one(name: str, threads: int, mirror: str | None, core_degree: int, k: int, floor: int, queue) -> None:
    import numba

    from gpusp.data.generate import generate
    from gpusp.solvers.phast import contraction
    from gpusp.solvers.phast.solver import auto_core_degree

    numba.set_num_threads(threads)
    graph = load(name, mirror)
    contraction.build(generate("grid", rows=10, cols=10))  # compiles (or loads the cache)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    load_1min = os.getloadavg()[0]
    t0 = time.perf_counter()
    core_degree = auto_core_degree(graph, core_degree)
    h = contraction.build(graph, core_degree=core_degree)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
    queue.put({"graph": name, "n": graph.n, "m": graph.m, "threads": threads, "seconds": round(seconds, 3),
               "cpu_s": round(cpu, 3),
               "shortcuts": h.shortcuts, "levels": h.levels, "up_arcs": int(h.up_head.size),
               "down_arcs": int(h.down_tail.size), "searches": h.searches, "rounds": h.rounds,
               "core_degree": core_degree, "core": h.core,
               "hierarchy_mb": round(h.nbytes / 2**20, 1), "peak_rss_mb": round(after.ru_maxrss / 1024),
               "rss_before_build_mb": round(usage.ru_maxrss / 1024), "load_1min_before": round(load_1min, 2),
               "threading_layer": numba.threading_layer(), **(spaces(h, graph.n, k) if k else {}),
               **(core_floor(graph, h, floor) if floor else {})})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--threads", type=int, nargs="+", default=[multiprocessing.cpu_count()])
    ap.add_argument("--mirror", default=None)
    ap.add_argument("--core-degree", type=int, default=-1)
    ap.add_argument("--spaces", type=int, default=0, help="seeded sources whose upward searches are timed")
    ap.add_argument("--core-floor", type=int, default=0, help="seeded sources of the core's figures (docstring)")
    args = ap.parse_args(argv)
    ctx = multiprocessing.get_context("spawn")
    for name in args.graphs:
        for threads in args.threads:
            queue = ctx.Queue()
            child = ctx.Process(target=one, args=(name, threads, args.mirror, args.core_degree, args.spaces,
                                                  args.core_floor, queue))
            child.start()
            child.join()
            if child.exitcode != 0:
                print(json.dumps({"graph": name, "threads": threads, "error": f"exit {child.exitcode}"}), flush=True)
                continue
            print(json.dumps(queue.get()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
