"""The far pile of deltastep_gpu's near-far search, counted on the host (issue 38): how many pile entries the splits
read a source, as the kernel keeps it today (one pile, read whole at every split) and as it would be kept in two
bands (entries below a band's end, read at every split; the rest, read only when the threshold passes the band's
end, ``band`` widths of delta past the threshold). The near rounds relax as the kernel does (a round expands what the
last one queued, from current distances); the splits move the threshold as the kernel does (one width, or to the
bucket of the pile's lowest distance), so the model's splits are the kernel's ``buckets`` counter.

The same replay counts the dependent loads a near round's lane groups wait on (``chains``): per queue entry (a vertex,
or a hub's chunk of ``split`` arcs as the kernel cuts it) three before its first arc (the entry, the vertex's offsets
and distance) and two per step of ``lanes x unroll`` arcs (the heads, then their distances, ``unroll`` arcs' loads in
flight together); ``waits`` is that sum times ``lanes``, the loads a thread waits on when the grid's threads are shared
out in groups of ``lanes``; ``critical`` the loads on the rounds' longest paths, where a warp's groups wait for its
slowest and a round for its slowest warp: where latency bounds a round, the ratio of two settings' critical loads is
their time's.

usage: python benchmarks/far_pile_model.py GRAPH [GRAPH ...] [--delta 8] [--bands 2 4 8 16 32] [--sources 4]
    [--lanes 8 4] [--unroll 1 2 4] [--threads 67584] [--mirror DIR]
GRAPH as benchmarks/road_pieces_floor.py names them (kron-S, urand-S: GAP's generators, seed 1, as the scale configs
make them). One JSON line per graph and source on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numba
import numpy as np
import pandas as pd
from road_pieces_floor import load

from gpusp.measure.sources import pick_sources
from gpusp.solvers.deltastep.spec import NEARFAR_BLOCKS_PER_SM, nearfar_split

IN_BAND, IN_REST = 1, 2  # a vertex's pile bits: it may sit in both while the copy in the rest is stale
WARP = 32
GRID_THREADS = 132 * NEARFAR_BLOCKS_PER_SM * 256  # deltastep_gpu's default grid on the H200's 132 multiprocessors


@numba.njit(cache=True)
def near_far(indptr, indices, weights, source, delta, band):
    """(near rounds, splits, entries the splits read, relaxations, distances, the expanded vertices in order and
    the round of each) of one search; ``band`` 0: one pile read whole at every split; > 0: a band pile below ``band_end`` (read at every split)
    and a rest pile (read when the threshold passes ``band_end``, which then moves to the threshold + band x delta)."""
    n = indptr.size - 1
    inf = np.iinfo(np.int64).max
    dist = np.full(n, inf, np.int64)
    order = np.empty(n + 1, np.int64)  # the expansions in order: the vertex, and the round (grown when full)
    order_round = np.empty(n + 1, np.int64)
    nlog = 0
    stamp = np.full(n, -1, np.int64)
    bits = np.zeros(n, np.int8)
    near = np.empty(n, np.int64)
    nxt = np.empty(n, np.int64)
    pile = np.empty(n, np.int64)  # one pile (band 0) or the band pile
    rest = np.empty(n, np.int64)
    npile = 0
    nrest = 0
    dist[source] = 0
    near[0] = source
    count = 1
    threshold = delta
    band_end = threshold + band * delta if band > 0 else inf
    rounds = 0
    splits = 0
    scanned = 0
    relaxed = 0
    tick = 0
    while True:
        if count > 0:
            rounds += 1
            tick += 1
            queued = 0
            for i in range(count):
                u = near[i]
                du = dist[u]
                if nlog == order.size:
                    order = np.concatenate((order, np.empty_like(order)))
                    order_round = np.concatenate((order_round, np.empty_like(order_round)))
                order[nlog] = u
                order_round[nlog] = rounds
                nlog += 1
                for e in range(indptr[u], indptr[u + 1]):
                    relaxed += 1
                    w = indices[e]
                    cand = du + weights[e]
                    if cand < dist[w]:
                        dist[w] = cand
                        if cand < threshold:
                            if stamp[w] < tick:
                                stamp[w] = tick
                                nxt[queued] = w
                                queued += 1
                        elif cand < band_end:
                            if bits[w] & IN_BAND == 0:
                                bits[w] |= IN_BAND
                                pile[npile] = w
                                npile += 1
                        elif bits[w] & IN_REST == 0:
                            bits[w] |= IN_REST
                            rest[nrest] = w
                            nrest += 1
            near, nxt = nxt, near
            count = queued
            continue
        if npile == 0 and nrest == 0:
            break
        # a split: the threshold moves one width, or to the bucket of the lowest distance waiting
        splits += 1
        low = threshold
        fmin = inf
        for i in range(npile):
            fmin = min(fmin, dist[pile[i]])
        if npile == 0:
            for i in range(nrest):
                fmin = min(fmin, dist[rest[i]])
        threshold = max(threshold + delta, (fmin // delta + 1) * delta)
        if threshold > band_end or (npile == 0 and band > 0):
            # the threshold passed the band: the rest is read once and what falls below the new band's end joins it
            band_end = threshold + band * delta
            scanned += nrest
            kept = 0
            for i in range(nrest):
                w = rest[i]
                if dist[w] < band_end:
                    bits[w] &= ~IN_REST
                    if bits[w] & IN_BAND == 0:
                        bits[w] |= IN_BAND
                        pile[npile] = w
                        npile += 1
                else:
                    rest[kept] = w
                    kept += 1
            nrest = kept
        scanned += npile
        tick += 1
        kept = 0
        for i in range(npile):
            w = pile[i]
            d = dist[w]
            if d < threshold:
                bits[w] &= ~IN_BAND
                if d >= low and stamp[w] < tick:
                    stamp[w] = tick
                    near[count] = w
                    count += 1
            else:
                pile[kept] = w
                kept += 1
        npile = kept
    return rounds, splits, scanned, relaxed, dist, order[:nlog], order_round[:nlog]


def entries(d, lanes: int, unroll: int, split: int):
    """The near-queue entries of expansions of out-degrees ``d`` (in order): a vertex, or with ``split`` its chunks
    of ``split`` arcs (the last holds the rest). Returns each entry's steps of lanes x unroll arcs and the expansion
    it belongs to."""
    arcs = split if split else max(int(d.max(initial=1)), 1)
    count = np.maximum(1, -(-d // arcs))
    owner = np.repeat(np.arange(d.size), count)
    chunk = np.arange(owner.size) - (np.cumsum(count) - count)[owner]
    size = np.minimum(arcs, d[owner] - chunk * arcs)
    return -(-size // (lanes * unroll)), owner


def chains(d, lanes: int, unroll: int, max_degree: int, mean_degree: float, rounds=None,
           threads: int = GRID_THREADS) -> dict:
    """The dependent loads of the near rounds' lane groups (see the module's docstring) for expansions of out-degrees
    ``d`` at ``lanes`` and ``unroll``, hubs cut into chunks as ``deltastep_gpu``'s automatic split cuts them. With
    the expansions' ``rounds`` also ``critical``: the loads on each round's longest path when a grid of ``threads``
    deals a round's entries to its groups in turn, a warp waits for its slowest group at every pass, and the
    round waits for its slowest warp."""
    split = nearfar_split(-1, lanes, max_degree, False, mean_degree)
    steps, owner = entries(d, lanes, unroll, split)
    loads = int(3 * steps.size + 2 * steps.sum())
    out = {"split": split, "steps": int(steps.sum()), "loads": loads, "waits": loads * lanes}
    if rounds is not None:
        entry_round = rounds[owner]  # non-decreasing: the rounds in the order they ran
        place = np.arange(entry_round.size) - np.searchsorted(entry_round, entry_round)
        groups = max(1, threads // lanes)
        passes = pd.DataFrame({"round": entry_round, "warp": place % groups // max(1, WARP // lanes),
                               "pass": place // groups, "steps": steps})
        cost = 3 + 2 * passes.groupby(["round", "warp", "pass"])["steps"].max()
        out["critical"] = int(cost.groupby(level=["round", "warp"]).sum().groupby(level="round").max().sum())
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--delta", type=int, default=8)
    ap.add_argument("--bands", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    ap.add_argument("--sources", type=int, default=4)
    ap.add_argument("--lanes", type=int, nargs="+", default=[8, 4])
    ap.add_argument("--unroll", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--threads", type=int, default=GRID_THREADS, help="the grid's threads (default: the H200's)")
    ap.add_argument("--mirror", type=Path, default=Path(os.environ.get("GPUSP_MIRROR", "/work/shared/data")))
    args = ap.parse_args(argv)
    for name in args.graphs:
        graph = load(name, args.mirror)
        indptr, indices = graph.indptr.astype(np.int64), graph.indices.astype(np.int64)
        weights = graph.weights.astype(np.int64)
        degree = np.diff(indptr)
        max_degree, mean_degree = int(degree.max()), graph.m / max(graph.n, 1)
        for source in pick_sources(graph, args.sources, seed=1):
            t0 = time.perf_counter()
            rounds, splits, scanned, relaxed, dist, order, order_round = near_far(indptr, indices, weights, source,
                                                                                  args.delta, 0)
            expanded = degree[order]  # the out-degree of each expansion, in order
            row = {"graph": name, "n": graph.n, "m": graph.m, "source": int(source), "delta": args.delta,
                   "reached": int((dist != np.iinfo(np.int64).max).sum()), "rounds": rounds, "splits": splits,
                   "relaxations": relaxed, "far_scanned": scanned, "bands": {},
                   "chains": {f"{lanes}x{unroll}": chains(expanded, lanes, unroll, max_degree, mean_degree,
                                                          order_round, args.threads)
                              for lanes in args.lanes for unroll in args.unroll}}
            for band in args.bands:
                r, s, scanned_b, x, dist_b, _, _ = near_far(indptr, indices, weights, source, args.delta, band)
                assert np.array_equal(dist_b, dist), "the banded pile changed an answer"
                row["bands"][band] = {"rounds": r, "splits": s, "far_scanned": scanned_b, "relaxations": x}
            row["seconds"] = round(time.perf_counter() - t0, 2)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
