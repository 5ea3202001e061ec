"""The work of delta-stepping at a bucket width, counted on the host before a GPU run (issue 38): relaxations per arc
from seeded sources when a bucket's vertices are expanded in rounds (every vertex marked in a round expanded, then
the next round), in rounds whose expansions all read the distances of the round's start (``snapshot``: a round's
threads run at once, as deltastep_gpu's near-far), or in arrival order (a FIFO worklist, the limit of one owner that
expands whatever it finds at once), and the buckets each needs. The measured counters of the solvers say which order
they come closest to.

usage: python benchmarks/bucket_work_model.py GRAPH [GRAPH ...] --widths 16 32 64 128 256 [--sources 4] [--mirror DIR]
GRAPH as benchmarks/road_pieces_floor.py names them; a width is in Davidson's units (Graph.default_delta(width)).
One JSON line per (graph, width, order) on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numba
import numpy as np
from road_pieces_floor import load

from gpusp.measure.sources import pick_sources


ORDERS = {"rounds": 1, "snapshot": 2, "fifo": 0}


@numba.njit(cache=True)
def bucket_work(indptr, indices, weights, source, delta, rounds):
    """(arcs relaxed, buckets, distances) of delta-stepping from ``source``: inside a bucket, vertices in rounds
    (``rounds`` 1; 2: each expansion from the distance its vertex had when the round began) or in a FIFO worklist
    (0); every expansion relaxes all the vertex's arcs."""
    n = indptr.size - 1
    inf = np.iinfo(np.int64).max
    dist = np.full(n, inf, np.int64)
    queued = np.zeros(n, np.bool_)
    work = np.empty(n + 1, np.int64)  # FIFO ring, or the current round
    nxt = np.empty(n, np.int64)
    snap = np.empty(n + 1, np.int64)  # the round's vertices' distances when it began (snapshot)
    dist[source] = 0
    relaxed = 0
    buckets = 0
    low = 0
    while True:
        high = low + delta
        head = 0
        tail = 0
        for v in range(n):  # the bucket's vertices
            if low <= dist[v] < high:
                work[tail] = v
                tail += 1
                queued[v] = True
        if tail > 0:
            buckets += 1
        while tail > head:
            count = 0
            stop = tail  # rounds: this round's vertices; fifo: grows as vertices arrive
            if rounds:
                for k in range(head, tail):
                    queued[work[k]] = False
                    snap[k] = dist[work[k]]
            while head < stop:
                u = work[head % (n + 1)]
                head += 1
                if not rounds:
                    queued[u] = False
                du = snap[head - 1] if rounds == 2 else dist[u]
                relaxed += indptr[u + 1] - indptr[u]
                for e in range(indptr[u], indptr[u + 1]):
                    v = indices[e]
                    d = du + weights[e]
                    if d < dist[v]:
                        dist[v] = d
                        if d < high and not queued[v]:
                            queued[v] = True
                            if rounds:
                                nxt[count] = v
                                count += 1
                            else:
                                work[tail % (n + 1)] = v
                                tail += 1
                                stop = tail
            if rounds:
                work[:count] = nxt[:count]
                head = 0
                tail = count
        low = inf
        for v in range(n):  # the next bucket: the smallest distance at or above this one's end
            if high <= dist[v] < low:
                low = dist[v]
        if low == inf:
            break
        low = (low // delta) * delta
    return relaxed, buckets, dist


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graphs", nargs="+")
    p.add_argument("--widths", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    p.add_argument("--sources", type=int, default=4)
    p.add_argument("--mirror", type=Path, default=Path(os.environ.get("GPUSP_MIRROR", "/work/shared/data")))
    args = p.parse_args()
    for name in args.graphs:
        graph = load(name, args.mirror)
        indptr, indices = graph.indptr.astype(np.int64), graph.indices.astype(np.int64)
        weights = graph.weights.astype(np.int64)
        sources = pick_sources(graph, args.sources, seed=1)
        for width in args.widths:
            delta = graph.default_delta(width)
            for order, code in ORDERS.items():
                t0 = time.perf_counter()
                counts = [bucket_work(indptr, indices, weights, int(s), delta, code)[:2] for s in sources]
                print(json.dumps({"graph": name, "n": graph.n, "m": graph.m, "width": width, "delta": delta,
                                  "order": order, "relaxations_per_arc": round(float(np.median(
                                      [r for r, _ in counts])) / graph.m, 3),
                                  "buckets": int(np.median([b for _, b in counts])), "sources": len(sources),
                                  "seconds": round(time.perf_counter() - t0, 2)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
