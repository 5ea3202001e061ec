"""How often the scattered distance reads of a near-far search would hit an L2 cache, counted on the host (issue 38):
the search expands vertices as deltastep_gpu and deltastep_lean do (``far_pile_model.near_far``, delta 8), and each
expanded vertex's arcs read their heads' distances in that order through a set-associative LRU cache of 32-byte
sectors. A GPU's L2 sees these reads interleaved across a round's warps, not in this order; within a round the order
matters little to an LRU cache many times the round's reads, so the model reads the graph's locality, not the card's.

The vertex order is the lever it compares: the ids as generated (kron and urand relabel theirs at random), sorted by
falling out-degree (the hubs' distances side by side), or by breadth-first order from the source. ``--cache-mb``
(MiB) scales the cache with the graph: at scale 22 a 3.125 MiB cache stands to the 32 MiB of int64 distances as the
H200's 50 MiB L2 to scale 26's 512 MiB.

usage: python benchmarks/dist_locality_model.py GRAPH [GRAPH ...] [--sources 2] [--cache-mb 3.125 50]
    [--orders generated degree bfs] [--ways 16]
GRAPH as benchmarks/road_pieces_floor.py names them (kron-S, urand-S: GAP's generators, seed 1). One JSON line per
graph, source, order and cache on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numba
import numpy as np
from far_pile_model import near_far
from road_pieces_floor import load

from gpusp.measure.sources import pick_sources

SECTOR = 32  # bytes: the unit an L2 miss fetches from DRAM
DIST_BYTES = 8  # int64 distances, as at GAP's scales


@numba.njit(cache=True)
def replay(indptr, indices, expanded, sets, ways, per_sector):
    """(reads, hits) of the heads' distance reads, ``expanded`` vertices' arcs in order, through an LRU cache of
    ``sets`` x ``ways`` sectors of ``per_sector`` distances each."""
    tags = np.full((sets, ways), -1, np.int64)
    used = np.zeros((sets, ways), np.int64)
    clock = 0
    hits = 0
    reads = 0
    for i in range(expanded.size):
        u = expanded[i]
        for e in range(indptr[u], indptr[u + 1]):
            sector = indices[e] // per_sector
            s = sector % sets
            tag = sector // sets
            clock += 1
            reads += 1
            oldest = 0
            found = False
            for w in range(ways):
                if tags[s, w] == tag:
                    used[s, w] = clock
                    hits += 1
                    found = True
                    break
                if used[s, w] < used[s, oldest]:
                    oldest = w
            if not found:
                tags[s, oldest] = tag
                used[s, oldest] = clock
    return reads, hits


def bfs_order(graph, source: int) -> np.ndarray:
    """new id of each vertex: its place in a breadth-first search from ``source``, the unreached after, as they were."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    arcs = csr_matrix((np.ones(graph.m, np.int8), graph.indices, graph.indptr), shape=(graph.n, graph.n))
    reached = breadth_first_order(arcs, source, return_predecessors=False)
    rest = np.setdiff1d(np.arange(graph.n), reached, assume_unique=True)
    new_id = np.empty(graph.n, np.int64)
    new_id[np.concatenate([reached, rest])] = np.arange(graph.n)
    return new_id


def degree_order(graph) -> np.ndarray:
    """new id of each vertex: its place by falling out-degree (ties by id)."""
    degree = np.diff(graph.indptr)
    new_id = np.empty(graph.n, np.int64)
    new_id[np.argsort(-degree, kind="stable")] = np.arange(graph.n)
    return new_id


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--sources", type=int, default=2)
    ap.add_argument("--cache-mb", type=float, nargs="+", default=[3.125, 50.0])
    ap.add_argument("--orders", nargs="+", default=["generated", "degree", "bfs"],
                    choices=("generated", "degree", "bfs"))
    ap.add_argument("--ways", type=int, default=16)
    ap.add_argument("--delta", type=int, default=8)
    ap.add_argument("--mirror", type=Path, default=Path("../shared/data"))
    args = ap.parse_args(argv)
    for name in args.graphs:
        base = load(name, args.mirror)
        if "degree" in args.orders:  # the same for every source: relabelled once
            degree_id = degree_order(base)
            by_degree = base.relabel(degree_id)
        for source in pick_sources(base, args.sources, seed=1):
            for order in args.orders:
                t0 = time.perf_counter()
                if order == "generated":
                    graph, s = base, int(source)
                elif order == "degree":
                    graph, s = by_degree, int(degree_id[source])
                else:
                    new_id = bfs_order(base, int(source))
                    graph, s = base.relabel(new_id), int(new_id[source])
                _, _, _, relaxed, _, expanded, _ = near_far(graph.indptr, graph.indices, graph.weights, s,
                                                            args.delta, 0)
                for mb in args.cache_mb:
                    sets = max(1, int(mb * 2**20) // SECTOR // args.ways)
                    reads, hits = replay(graph.indptr, graph.indices, expanded, sets, args.ways, SECTOR // DIST_BYTES)
                    print(json.dumps({"graph": name, "n": graph.n, "m": graph.m, "source": int(source),
                                      "order": order, "cache_mb": mb, "ways": args.ways,
                                      "dist_mb": graph.n * DIST_BYTES / 2**20, "reads": int(reads),
                                      "hit_rate": round(hits / reads, 4) if reads else None,
                                      "miss_bytes": int((reads - hits) * SECTOR), "relaxations": int(relaxed),
                                      "seconds": round(time.perf_counter() - t0, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
