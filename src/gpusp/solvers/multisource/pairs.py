"""(vertex, source) pair items of the batch kernel (``items='pairs'``): a thread expands one source's distance at one
vertex; a pair at or above the batch's threshold waits in a far pile until a bucket split moves it back onto the list
(near-far per (vertex, source)). Appends go through per-block shared buffers, one global atomic per block and round.
Design: docs/solvers/multisource.md ("Deep graphs").
"""

from __future__ import annotations

import numba
from numba import cuda

U = numba.uint64  # unsigned indices: Numba adds no negative-index wraparound to them
U32, I32 = numba.uint32, numba.int32


def pair_fns(sbuf_size: int, FCNT: int, FMIN: int):
    """(expand_pairs, seed_pairs, split_pairs, flush_pile) for lists and piles of ``sbuf_size``-entry block buffers,
    the piles' sizes and minima in control slots ``FCNT + pile`` and ``FMIN + pile`` (compile-time constants)."""

    @cuda.jit(device=True)
    def push(lists, cnt, entry, q, sbuf, scount):
        """Append one entry to the list of round q via the block's buffer (the global list when it is full)."""
        pos = cuda.atomic.add(scount, 0, 1)  # atomic (shared): one buffer slot
        if pos < sbuf_size:
            sbuf[U(pos)] = entry
        else:
            lists[q % 2, U(cuda.atomic.add(cnt, q % 3, 1))] = entry  # atomic: one global slot

    @cuda.jit(device=True)
    def to_pile(fbuf, scount, smin, farq, ctl, pile, entry, d):
        """Put a deferred pair on far pile ``pile`` via the block's buffer (the pile itself when it is full), its
        distance into the block's minimum: shared atomics here, one global atomic per block in flush_pile."""
        cuda.atomic.min(smin, 0, numba.int64(d))  # atomic (shared): the block's smallest deferred distance
        pos = cuda.atomic.add(scount, 3, 1)  # atomic (shared): one buffer slot
        if pos < sbuf_size:
            fbuf[U(pos)] = entry
        else:
            farq[pile, U(cuda.atomic.add(ctl, FCNT + pile, 1))] = entry  # atomic: one slot of the pile

    @cuda.jit(device=True)
    def flush_pile(fbuf, scount, smin, farq, ctl, pile, inf):
        """The whole block: append its buffered far pairs to pile ``pile`` and its minimum to the pile's."""
        cuda.syncthreads()  # every deferral of the block is in its buffer and its minimum
        if cuda.threadIdx.x == 0:
            k = min(scount[3], sbuf_size)
            scount[3] = k
            scount[4] = cuda.atomic.add(ctl, FCNT + pile, k) if k > 0 else 0  # atomic: the block's slots
            if smin[0] < inf:
                cuda.atomic.min(ctl, FMIN + pile, smin[0])  # atomic: one per block
                smin[0] = inf
        cuda.syncthreads()  # the block's offset in the pile is known
        for i in range(cuda.threadIdx.x, scount[3], cuda.blockDim.x):
            farq[pile, U(scount[4] + i)] = fbuf[i]
        cuda.syncthreads()  # the buffer is copied out before it is reset
        if cuda.threadIdx.x == 0:
            scount[3] = 0

    @cuda.jit(device=True)
    def expand_pairs(paired, graph, work, sshift, q, counts, sbuf, scount, threshold, pile, epoch_start, fbuf, smin):
        """Round q: a thread per listed pair relaxes the pair's vertex's arcs for its one source; a pair at or above
        ``threshold`` goes to far pile ``pile`` instead (once per epoch: ``farmark`` holds the round of its last
        deferral), its distance into the pile's minimum. ``paired``, ``graph``, ``work``: the batch kernel's records
        (:func:`gpusp.solvers.multisource.solver._kernel`)."""
        indptr, _, farq = paired
        indices, weights, _, _, _ = graph
        dist, stamp, farmark, _, lists, cnt, ctl = work
        smask = (I32(1) << I32(sshift)) - I32(1)
        nitems = I32(cnt[q % 3])
        for e in range(cuda.grid(1), nitems, cuda.gridsize(1)):
            us = lists[q % 2, U32(e)]
            if stamp[U32(us)] != q:  # lowered again this round: it is listed for round q + 1 already
                continue
            u = I32(us >> sshift)
            s = I32(us & smask)
            du = dist[U32(us)]
            counts[0] += 1
            if du >= threshold:
                if cuda.atomic.max(farmark, U32(us), q) < epoch_start:  # atomic: into this epoch's pile once
                    to_pile(fbuf, scount, smin, farq, ctl, pile, us, du)
                continue
            a0 = indptr[U32(u)]
            a1 = indptr[U32(u + 1)]
            counts[1] += a1 - a0
            for a in range(a0, a1):
                vs = I32((indices[U32(a)] << sshift) + s)
                nd = du + weights[U32(a)]
                if nd < dist[U32(vs)]:
                    # atomic: the smallest candidate wins; the one that lowered it lists the pair once
                    if nd < cuda.atomic.min(dist, U32(vs), nd):
                        if cuda.atomic.max(stamp, U32(vs), q + 1) < q + 1:  # atomic: one listing per round
                            push(lists, cnt, vs, q + 1, sbuf, scount)

    @cuda.jit(device=True)
    def seed_pairs(dist, stamp, lists, cnt, srcs, base, ns, sshift, q, sbuf, scount):
        """Zero the batch's sources (after a reset to infinity) and list them as pairs for round q."""
        for s in range(cuda.grid(1), ns, cuda.gridsize(1)):
            us = (srcs[U(base + s)] << sshift) + s
            dist[U(us)] = 0
            stamp[U(us)] = q
            push(lists, cnt, us, q, sbuf, scount)

    @cuda.jit(device=True)
    def split_pairs(dist, stamp, lists, cnt, q, sbuf, scount, threshold, farq, farmark, ctl, pile, fbuf, smin):
        """Open the next bucket: each pair of far pile ``pile`` below ``threshold`` goes on round q's list (unless it
        was listed and expanded since its last deferral), the rest into the other pile for the next epoch."""
        other = 1 - pile
        for e in range(cuda.grid(1), ctl[FCNT + pile], cuda.gridsize(1)):
            us = farq[pile, U32(e)]
            if stamp[U32(us)] > farmark[U32(us)]:  # expanded after its last deferral: nothing left to do
                continue
            d = dist[U32(us)]
            if d < threshold:
                if cuda.atomic.max(stamp, U32(us), q) < q:  # atomic: listed once for round q
                    push(lists, cnt, us, q, sbuf, scount)
            elif cuda.atomic.max(farmark, U32(us), q) < q:  # atomic: into the next pile once
                to_pile(fbuf, scount, smin, farq, ctl, other, us, d)

    return expand_pairs, seed_pairs, split_pairs, flush_pile
