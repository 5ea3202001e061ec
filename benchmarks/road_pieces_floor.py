"""The floor of a road solver past one cluster (issue 38, item 1), before it is built: the graph cut into P pieces
(vertex ids in stripes as they come, or in reverse Cuthill-McKee order, SciPy's bandwidth-reducing ordering, as a
cheap locality partition), and from seeded sources' shortest-path trees (SciPy's Dijkstra): the hop depth (the
longest chain of dependent relaxations any exact solver must follow), the most piece changes along one tree path
(hand-offs through global memory on that chain), and the share of arcs whose ends lie in different pieces (the
cross-piece traffic of one relaxation per arc). One JSON line per (graph, ordering, P) on stdout.

usage: python benchmarks/road_pieces_floor.py GRAPH [GRAPH ...] [--pieces 1 2 4 8 16 64] [--sources 4] [--mirror DIR]
GRAPH: a DIMACS graph of the mirror (USA-road-d.NY), `gridK` (K x K, weights 1..100, seed 0) or `delaunay-K`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra, reverse_cuthill_mckee


def load(name: str, mirror: Path):
    from gpusp import read_graph
    from gpusp.data.generate import generate

    if name.startswith("grid"):
        side = int(name[4:])
        return generate("grid", rows=side, cols=side, wmin=1, wmax=100, seed=0)
    if name.split("-")[0] in ("delaunay", "kron", "urand"):  # GAP's and the scale configs' generators, seed 1
        kind, scale = name.split("-")
        return generate(kind, scale=int(scale), seed=1)
    return read_graph(next(mirror.glob(f"{name}.gr*")))


def tree_hops(order, pred):
    """Hops from the root along the tree, vertices visited in order of distance (-1: unreachable)."""
    hops = np.full(pred.size, -1, np.int64)
    for v in order:
        hops[v] = hops[pred[v]] + 1 if pred[v] >= 0 else 0
    return hops


def piece_changes(hops, pred, piece):
    """Piece changes from the root along the tree: a hop level at a time, each from the level above."""
    switches = np.zeros(pred.size, np.int64)
    by_level = np.argsort(hops, kind="stable")
    bounds = np.searchsorted(hops[by_level], np.arange(1, hops.max() + 2))
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        v = by_level[lo:hi]
        switches[v] = switches[pred[v]] + (piece[v] != piece[pred[v]])
    return switches


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--pieces", type=int, nargs="+", default=[1, 2, 4, 8, 16, 64])
    ap.add_argument("--sources", type=int, default=4)
    ap.add_argument("--mirror", type=Path, default=Path(os.environ.get("GPUSP_MIRROR", "/work/shared/data")))
    args = ap.parse_args(argv)
    for name in args.graphs:
        t0 = time.perf_counter()
        g = load(name, args.mirror)
        n = g.n
        tails = np.repeat(np.arange(n), np.diff(g.indptr))
        matrix = csr_matrix((g.weights.astype(np.float64) + 0.0, g.indices, g.indptr), shape=(n, n))
        sources = np.random.default_rng(1).choice(n, size=min(n, args.sources), replace=False)
        dist, pred = dijkstra(matrix, indices=sources, return_predecessors=True)
        hops = [tree_hops(np.argsort(d, kind="stable")[:int(np.isfinite(d).sum())], p) for d, p in zip(dist, pred)]
        reach = [h >= 0 for h in hops]
        rcm = reverse_cuthill_mckee(csr_matrix((np.ones(g.m), g.indices, g.indptr), shape=(n, n)),
                                    symmetric_mode=False)
        rank = {"ids": np.arange(n), "rcm": np.empty(n, np.int64)}
        rank["rcm"][rcm] = np.arange(n)
        for ordering, position in rank.items():
            for P in args.pieces:
                piece = position * P // n
                changes = [piece_changes(h, p, piece) for h, p in zip(hops, pred)]
                print(json.dumps({
                    "graph": name, "n": n, "m": int(g.m), "ordering": ordering, "pieces": P,
                    "cut_arc_share": round(float(np.mean(piece[tails] != piece[g.indices])), 5),
                    "hop_depth": int(max(h.max() for h in hops)),
                    "mean_hops": round(float(np.mean([h[r].mean() for h, r in zip(hops, reach)])), 1),
                    "max_piece_changes": int(max(c.max() for c in changes)),
                    "mean_piece_changes": round(float(np.mean([c[r].mean() for c, r in zip(changes, reach)])), 2),
                    "sources": len(sources), "seconds": round(time.perf_counter() - t0, 2)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
