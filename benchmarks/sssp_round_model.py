"""Round sizes of near-far delta-stepping (bulk-synchronous model) and what block-local fusion makes of them.

usage: PYTHONPATH=src python benchmarks/sssp_round_model.py GRAPH.gr.gz [--mult 4] [--sources 3] [--side N]

Replays deltastep_gpu's near-far loop in NumPy, one round at a time (every queued vertex relaxed with the
distances of the round's start, the same threshold and far-pile splits), and prints the near-queue sizes
and, for several fuse_limit values, the grid steps, block steps, fused rounds and fused passes (a pass =
64 or 256 vertices) that fuse=block would take. Used for the floor in benchmarks/sssp-fast-h200.md.
With --side N the graph is grid(N, N, 1, 1000, seed=1) instead of a file.
"""

from __future__ import annotations

import argparse

import numpy as np

import gpusp
from gpusp.data.generate import grid
from gpusp.measure.sources import pick_sources

SPLIT = -1  # marks a far split in the list of steps
BIG = np.iinfo(np.int64).max // 4


def rounds(g, src, delta):
    """Near-queue size of every near round in order, SPLIT for every far split."""
    indptr, indices, w = g.indptr, g.indices, g.weights.astype(np.int64)
    dist = np.full(g.n, BIG)
    dist[src] = 0
    near = np.array([src])
    far = np.zeros(0, dtype=np.int64)
    threshold = delta
    sizes = []
    while True:
        if near.size:
            sizes.append(near.size)
            starts, counts = indptr[near], indptr[near + 1] - indptr[near]
            arcs = np.repeat(starts - np.cumsum(np.r_[0, counts[:-1]]), counts) + np.arange(counts.sum())
            heads = indices[arcs]
            best = np.full(g.n, np.iinfo(np.int64).max)
            np.minimum.at(best, heads, dist[np.repeat(near, counts)] + w[arcs])
            lowered = np.unique(heads[best[heads] < dist[heads]])
            dist[lowered] = best[lowered]
            near = lowered[dist[lowered] < threshold]
            far = np.union1d(far, lowered[dist[lowered] >= threshold])
        elif far.size:
            low = threshold
            threshold = max(threshold + delta, (dist[far].min() // delta + 1) * delta)
            d = dist[far]
            near = far[(d < threshold) & (d >= low)]
            far = far[d >= threshold]
            sizes.append(SPLIT)
        else:
            return sizes


def fused(sizes, limit, per_pass):
    """(grid steps, block steps, fused rounds, fused passes) with fuse=block at fuse_limit = limit."""
    grid_steps = block_steps = rounds_ = passes = 0
    i = 0
    while i < len(sizes):
        grid_steps += 1
        if sizes[i] == SPLIT or sizes[i] > limit:
            i += 1
            continue
        block_steps += 1
        while i < len(sizes) and sizes[i] != SPLIT and sizes[i] <= limit:
            rounds_ += 1
            passes += -(-sizes[i] // per_pass)
            i += 1
    return grid_steps, block_steps, rounds_, passes


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph", nargs="?", default="")
    p.add_argument("--side", type=int, default=0, help="a grid(side, side) instead of a file")
    p.add_argument("--mult", type=float, default=4.0, help="delta = mult x Graph.default_delta()")
    p.add_argument("--sources", type=int, default=3)
    args = p.parse_args()
    g = grid(args.side, args.side, 1, 1000, seed=1) if args.side else gpusp.read_graph(args.graph)
    delta = max(1, int(g.default_delta() * args.mult))
    for src in pick_sources(g, 16, 1)[:args.sources]:
        sizes = rounds(g, src, delta)
        a = np.array([x for x in sizes if x != SPLIT])
        print(f"source {src} delta {delta}: near rounds {a.size}, splits {sizes.count(SPLIT)}, mean {a.mean():.0f}, "
              f"median {np.median(a):.0f}, <= 64: {np.mean(a <= 64):.2f}, <= 256: {np.mean(a <= 256):.2f}, "
              f"<= 1024: {np.mean(a <= 1024):.2f}")
        for limit in (64, 256, 512, 1024):
            steps, blocks, frounds, passes = fused(sizes, limit, 64)
            print(f"   fuse_limit {limit:5d}: grid steps {steps} (block steps {blocks}), fused rounds {frounds}, "
                  f"passes of 64 {passes}, of 256 {fused(sizes, limit, 256)[3]}")


if __name__ == "__main__":
    main()
