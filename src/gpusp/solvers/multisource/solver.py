"""The ``multisource`` kernel and solvers: S sources per batch stored vertex-major, frontier rounds over (vertex,
32-source word) items or (vertex, source) pairs, trees over tight arcs and the rows out, every round of every batch in
one cooperative kernel built by :func:`_kernel`.

``multisource_fast`` (:class:`MultiSourceSolver`) takes every vertex as a source (APSP), ``multisource_sssp``
(:class:`MultiSourceSssp`) the K sources of a job (the harness's batch protocol). Algorithm, parameters, complexity and
the papers: docs/solvers/multisource.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from ..common.base import Solver
from ..common.dense import Result
from ..common.gate import kernel
from ..common.johnson import reweighting
from ..common.launch import TARGET, blocks_per_sm, cooperative_grid, fill_array
from ..common.spec import refuse_split
from .pairs import pair_fns
from ...data.graph import morton
from .spec import MULTISOURCE_BLOCKS_PER_SM, auto_batch, multisource_delta
from .warp import warp_or

WARP = 32
TILE = (WARP, WARP + 1)  # a 32 x 32 transpose tile, padded against bank conflicts
SBUF = 2048  # list entries a block gathers in shared memory per round before one global append
# control array (int64): round counter, distance rounds, tree rounds, list entries, relaxations, buckets, three
# flags (round q % 3): some lane of round q expanded a vertex below the bucket's threshold; with pairs, the sizes and
# smallest distances of the two far piles (epoch % 2)
ROUND, DIST_ROUNDS, TREE_ROUNDS, ITEMS, RELAX, BUCKETS, NEAR, FCNT, FMIN = 0, 1, 2, 3, 4, 5, 6, 9, 11
CTL_SIZE = 13

_WTYPES = {"int32": numba.int32, "int64": numba.int64}
U = numba.uint64  # unsigned indices: Numba adds no negative-index wraparound to them
U32, I32 = numba.uint32, numba.int32


def arc_chunks(indptr: np.ndarray, split: int):
    """(chunk_ptr, chunk_vertex, chunk_start): vertex u owns chunks chunk_ptr[u] .. chunk_ptr[u + 1] - 1 of <= split
    arcs; chunk k is vertex chunk_vertex[k]'s arcs chunk_start[k] .. chunk_start[k + 1] - 1 (one more entry, m)."""
    indptr = indptr.astype(np.int64)
    deg = np.diff(indptr)
    per = (deg + split - 1) // split
    chunk_ptr = np.zeros(len(deg) + 1, dtype=np.int64)
    np.cumsum(per, out=chunk_ptr[1:])
    chunk_vertex = np.repeat(np.arange(len(deg), dtype=np.int64), per)
    chunk_start = np.append(indptr[chunk_vertex] + (np.arange(len(chunk_vertex)) - chunk_ptr[chunk_vertex]) * split,
                            indptr[-1])
    return chunk_ptr.astype(np.int32), chunk_vertex.astype(np.int32), chunk_start.astype(np.int32)


# --- device functions: the kernel factory's pieces, each closing over its compile-time constants ---------------------
def _list_fns(sbuf_size: int):
    """(claim, flush): the round lists, gathered per block in a shared buffer of ``sbuf_size`` entries."""

    @cuda.jit(device=True)
    def claim(istamp, lists, cnt, chunk_ptr, v, c, wshift, q, sbuf, scount):
        """Put item (v, c) on the list of round q once: one entry per arc chunk of v, via the block's buffer."""
        item = U((v << wshift) + c)
        k0 = chunk_ptr[U(v)]  # loaded beside the stamp, not after the atomic: one dependent trip fewer
        nch = chunk_ptr[U(v + 1)] - k0
        if istamp[item] != q:  # cheap filter before the atomic
            # atomic: the first lane to raise the item's stamp to q appends it
            if cuda.atomic.max(istamp, item, q) < q:
                if nch > 0:
                    pos = cuda.atomic.add(scount, 0, nch)  # atomic (shared): reserve nch buffer slots
                    over = pos + nch - max(pos, sbuf_size)
                    gpos = 0
                    if over > 0:  # the buffer is full: the rest goes straight to the global list
                        gpos = cuda.atomic.add(cnt, q % 3, over) - max(pos, sbuf_size)  # atomic: global slots
                    for j in range(nch):
                        entry = ((k0 + j) << wshift) + c
                        if pos + j < sbuf_size:
                            sbuf[U(pos + j)] = entry
                        else:
                            lists[q % 2, U(gpos + pos + j)] = entry

    @cuda.jit(device=True)
    def flush(sbuf, scount, lists, cnt, q, ctl, near_slot):
        """The whole block: append its buffered entries to the list of round q with one global atomic; raise the
        round's near flag ``ctl[near_slot]`` once for the block when one of its lanes expanded a near vertex."""
        cuda.syncthreads()  # every claim of the block is in its buffer, every near mark in scount[2]
        if cuda.threadIdx.x == 0:
            if scount[2] != 0:
                ctl[near_slot] = 1  # plain store: every writer stores the same 1
                scount[2] = 0
            k = min(scount[0], sbuf_size)
            scount[0] = k
            scount[1] = cuda.atomic.add(cnt, q % 3, k) if k > 0 else 0  # atomic: one reservation per block
        cuda.syncthreads()  # the block's offset in list q is known
        for i in range(cuda.threadIdx.x, scount[0], cuda.blockDim.x):
            lists[q % 2, scount[1] + i] = sbuf[i]
        cuda.syncthreads()  # the buffer is copied out before it is reset
        if cuda.threadIdx.x == 0:
            scount[0] = 0

    return claim, flush


def _expand_fn(WT, unroll: int, claim, tree: bool):
    """A round's expansion for distances ``WT`` and ``unroll`` heads loaded together, compiled apart for distance
    rounds and for tree rounds (``tree`` a constant)."""

    @cuda.jit(device=True)
    def expand(graph, work, srcs, base, ns, S, wshift, q, counts, sbuf, scount, threshold):
        """Round q: a warp per list entry relaxes (tree: claims over tight arcs) for its 32 sources. A lane whose
        distance is at or above ``threshold`` (distance rounds) is not expanded: it stays stamped and listed for
        round q + 1, when the threshold may have risen. ``graph`` and ``work``: the kernel's records."""
        indices, weights, chunk_ptr, chunk_vertex, chunk_start = graph
        dist, stamp, istamp, parent, lists, cnt, _ = work
        # 32-bit arithmetic throughout (n S < 2^31 is checked on the host): half the registers of int64
        lane = I32(cuda.threadIdx.x % WARP)
        nwarps = I32(cuda.gridsize(1) // WARP)
        width = I32(S)
        wsh = I32(wshift)
        wmask = I32((1 << wshift) - 1)
        row = q % 2
        heads = cuda.local.array(unroll, numba.int32)
        wts = cuda.local.array(unroll, WT)
        seen = cuda.local.array(unroll, WT)  # the heads' distances, loaded together before any is used
        owner = cuda.local.array(unroll, numba.int32)  # the heads' parents (tree rounds)
        nitems = I32(cnt[q % 3])
        e = I32(cuda.grid(1) // WARP)
        ent_next = lists[row, U32(e)] if e < nitems else I32(0)
        while e < nitems:
            ent = ent_next
            if e + nwarps < nitems:  # the next entry is loaded while this one is expanded
                ent_next = lists[row, U32(e + nwarps)]
            k = I32(ent >> wsh)
            c = I32(ent & wmask)
            u = chunk_vertex[U32(k)]
            s = I32(c * WARP + lane)
            us = U32(u * width + s)
            active = s < ns and stamp[us] == q
            du = dist[us]
            if not tree:
                far = active and du >= threshold
                if far:
                    active = False
                    stamp[us] = q + 1  # plain store: this lane's own slot, expanded in a later round
                if warp_or(I32(far)) != 0 and lane == 0:  # the item goes on round q + 1's list once
                    claim(istamp, lists, cnt, chunk_ptr, u, c, wshift, q + 1, sbuf, scount)
                if active:
                    scount[2] = 1  # plain store (shared): the block saw near work this round
            root = I32(-1)
            if tree and s < ns:
                root = srcs[U32(base + s)]
            if lane == 0:
                counts[0] += 1
            a0 = chunk_start[U32(k)]
            end = chunk_start[U32(k + 1)]
            if active:
                counts[1] += end - a0
            while a0 < end:
                nar = I32(min(end - a0, WARP))
                hits = I32(0)  # bit j: this lane improved (or claimed) the head of arc a0 + j
                if active:
                    j = I32(0)
                    while j < nar:
                        for t in range(unroll):
                            i = U32(a0 + min(j + t, nar - 1))
                            heads[t] = indices[i]
                            wts[t] = weights[i]
                            vs = U32(heads[t] * width + s)
                            seen[t] = dist[vs]
                            if tree:
                                owner[t] = parent[vs]
                        for t in range(unroll):
                            v = heads[t]
                            vs = U32(v * width + s)
                            hit = False
                            if j + t < nar:
                                if tree:
                                    hit = v != root and owner[t] == -1 and du + wts[t] == seen[t]
                                    if hit:  # plain store: every writer this round holds a tight arc from level q
                                        parent[vs] = u
                                else:
                                    nd = WT(du + wts[t])
                                    hit = nd < seen[t]
                                    if hit:
                                        cuda.atomic.min(dist, vs, nd)  # atomic: the smallest candidate wins
                            if hit:
                                stamp[vs] = q + 1
                                hits = I32(hits | (I32(1) << I32(j + t)))
                        j = I32(j + unroll)
                hits = I32(warp_or(hits))  # the arcs whose heads some source improved
                if lane < nar and (hits >> lane) & 1:  # lane j lists the head of arc a0 + j: claims in parallel
                    claim(istamp, lists, cnt, chunk_ptr, indices[U32(a0 + lane)], c, wshift, q + 1, sbuf, scount)
                a0 = I32(a0 + WARP)
            e = I32(e + nwarps)

    return expand


def _batch_fns(WT, claim):
    """(tight_pass, seed, write_rows) for distances ``WT``: the one-pass parents, a batch's start and its rows'
    write-out."""

    @cuda.jit(device=True)
    def tight_pass(indices, weights, chunk_vertex, chunk_start, dist, parent, ns, S, wshift, inf):
        """Warp per (arc chunk, 32-source word): every tight arc u -> v makes u the parent of v (all w > 0)."""
        lane = cuda.threadIdx.x % WARP
        for e in range(cuda.grid(1) // WARP, (chunk_start.size - 1) << wshift, cuda.gridsize(1) // WARP):
            k = e >> wshift
            s = (e & ((1 << wshift) - 1)) * WARP + lane
            u = chunk_vertex[U(k)]
            du = dist[U(u * S + s)]
            if s < ns and du != inf:
                for i in range(chunk_start[U(k)], chunk_start[U(k + 1)]):
                    vs = U(indices[U(i)] * S + s)
                    if du + weights[U(i)] == dist[vs]:  # never the source itself: w > 0
                        parent[vs] = u  # benign race: distances rise along tight arcs, so any writer is a parent

    @cuda.jit(device=True)
    def seed(dist, stamp, istamp, parent, lists, cnt, chunk_ptr, srcs, base, ns, S, wshift, q, inf, reset, sbuf,
             scount):
        """Stamp and list the batch's sources srcs[base .. base + ns - 1] for round q; with ``reset`` also reset
        distances and parents."""
        n = chunk_ptr.size - 1
        if reset:
            for idx in range(cuda.grid(1), n * S, cuda.gridsize(1)):
                v = idx >> (wshift + 5)  # idx // S
                s = idx - v * S
                dist[U(idx)] = WT(0) if s < ns and v == srcs[U(base + s)] else inf
                parent[U(idx)] = -1
        for s in range(cuda.grid(1), ns, cuda.gridsize(1)):
            src = srcs[U(base + s)]
            stamp[src * S + s] = q
            claim(istamp, lists, cnt, chunk_ptr, src, s // WARP, wshift, q, sbuf, scount)

    @cuda.jit(device=True)
    def write_rows(dist, parent, out_dist, out_parent, rowmap, row0, ns, S):
        """Copy the batch (vertex-major) into rows rowmap[row0 .. row0 + ns - 1] of the result via 32 x 33 tiles."""
        n = out_dist.shape[1]
        tile_d = cuda.shared.array(TILE, WT)
        tile_p = cuda.shared.array(TILE, numba.int32)
        tx = cuda.threadIdx.x % WARP
        ty = cuda.threadIdx.x // WARP
        rows = cuda.blockDim.x // WARP
        tiles_s = (ns + WARP - 1) // WARP
        for t in range(cuda.blockIdx.x, ((n + WARP - 1) // WARP) * tiles_s, cuda.gridDim.x):
            v0 = (t // tiles_s) * WARP
            s0 = (t % tiles_s) * WARP
            for i in range(ty, WARP, rows):
                if v0 + i < n and s0 + tx < ns:
                    tile_d[i, tx] = dist[(v0 + i) * S + s0 + tx]
                    tile_p[i, tx] = parent[(v0 + i) * S + s0 + tx]
            cuda.syncthreads()  # the tile is staged
            for i in range(ty, WARP, rows):
                if s0 + i < ns and v0 + tx < n:
                    row = rowmap[U(row0 + s0 + i)]
                    out_dist[row, v0 + tx] = tile_d[tx, i]
                    out_parent[row, v0 + tx] = tile_p[tx, i]
            cuda.syncthreads()  # the tile is consumed before the next one overwrites it

    return tight_pass, seed, write_rows


# The compile gate's unrolls per distance type. ``unroll`` is only a constant of _expand_fn: the trip count of its
# `for t in range(unroll)` loops, the step of its arc index and the length of its four local arrays. No branch and no
# type depends on it, so the kernel's every line is typed and lowered alike at each unroll, while the distance type
# changes the types of the whole kernel. Each type is therefore compiled at two unrolls and each unroll once (the
# default, 2, with int32 distances, the common case): every code path and every value of both parameters, without the
# four repeats of the full product.
GATE_UNROLLS = {"int32": (1, 2), "int64": (4, 8)}


# --- the cooperative kernel -----------------------------------------------------------------------------------------
@kernel("void(Tuple((int32[::1], {w}[::1], int32[::1], int32[::1], int32[::1])), "
        "Tuple(({w}[::1], int32[::1], int32[::1], int32[::1], int32[:, ::1], int64[::1], int64[::1])), "
        "Tuple(({w}[:, ::1], int32[:, ::1], int32[::1], int32[::1])), int64, int64, int64, boolean, boolean, {w}, {w}, "
        "Tuple((int32[::1], boolean, int32[:, ::1])))",
        cases=[dict(w=w, unroll=unroll) for w, unrolls in GATE_UNROLLS.items() for unroll in unrolls])
@functools.cache
def _kernel(w: str, sbuf_size: int = SBUF, regs: int = 0, unroll: int = 2):
    """The cooperative batch kernel for distances of type ``w``, a block buffer of ``sbuf_size`` entries, a register
    cap (0: none) and ``unroll``."""
    WT = _WTYPES[w]
    claim, flush = _list_fns(sbuf_size)
    expand_pairs, seed_pairs, split_pairs, flush_pile = pair_fns(sbuf_size, FCNT, FMIN)
    expand_dist = _expand_fn(WT, unroll, claim, False)
    expand_tree = _expand_fn(WT, unroll, claim, True)
    tight_pass, seed, write_rows = _batch_fns(WT, claim)

    @cuda.jit(**TARGET.register_cap(regs))
    def batches(graph, work, rows, first, last, S, staged, tight, inf, delta, paired):
        """Batches first .. last - 1 of S sources each (srcs[b S .. b S + S - 1]): distance rounds (buckets of width
        delta, 0: none), parents (tree rounds or one tight pass), rows written out (to rows rowmap[...]). The records:
        ``graph`` the heads, weights and arc chunks; ``work`` the batch's working arrays, lists and control words;
        ``rows`` the result, the sources and their rows; ``paired`` the CSR offsets and far piles of pair items and
        ``pairs``, whether distance rounds list (vertex, source) pairs, a thread each, instead of 32-source words."""
        indices, weights, chunk_ptr, chunk_vertex, chunk_start = graph
        dist, stamp, istamp, parent, lists, cnt, ctl = work
        out_dist, out_parent, srcs, rowmap = rows
        indptr, pairs, farq = paired
        grid = cuda.cg.this_grid()
        nsrc = srcs.size
        counts = cuda.local.array(2, numba.int64)  # list entries taken (lane 0), source-arc pairs examined
        counts[0] = 0
        counts[1] = 0
        sbuf = cuda.shared.array(sbuf_size, numba.int32)  # the block's list entries of the next round
        # entries in sbuf, the block's offset in the list, near mark, far pairs in fbuf, the block's offset in the pile
        scount = cuda.shared.array(5, numba.int32)
        fbuf = cuda.shared.array(sbuf_size, numba.int32)  # the block's deferred pairs (pair items)
        smin = cuda.shared.array(1, numba.int64)  # the block's smallest deferred distance (pair items)
        if cuda.threadIdx.x == 0:
            scount[0] = 0
            scount[2] = 0
            scount[3] = 0
            smin[0] = inf
        cuda.syncthreads()  # the buffer is empty before anybody claims
        q = ctl[ROUND]
        wshift = 0  # S / 32 words per vertex (S = 32 << wshift): entries are (chunk << wshift) + word
        while (WARP << wshift) < S:
            wshift += 1
        dist_rounds = 0
        tree_rounds = 0
        buckets = 0
        rows_out = out_dist.shape[0] != 0  # no result rows (a sweep that reduces each batch): no trees either
        for b in range(first, last):
            base = b * S
            ns = min(S, nsrc - base)
            for tree in range(2 if rows_out else 1):  # distances first, then the shortest-path trees over tight arcs
                if tree == 1 and tight:
                    tight_pass(indices, weights, chunk_vertex, chunk_start, dist, parent, ns, S, wshift, inf)
                    grid.sync()  # every parent is written before the rows go out
                    continue
                if tree == 0 and pairs:
                    seed(dist, stamp, istamp, parent, lists, cnt, chunk_ptr, srcs, base, 0, S, wshift, q, inf,
                         True, sbuf, scount)  # the reset alone: no source listed as a word
                    if cuda.grid(1) == 0:
                        for side in range(2):  # both far piles empty (their last readers passed a barrier since)
                            ctl[FCNT + side] = 0
                            ctl[FMIN + side] = inf
                    grid.sync()  # every slot is reset before the sources are zeroed
                    seed_pairs(dist, stamp, lists, cnt, srcs, base, ns, wshift + 5, q, sbuf, scount)
                else:
                    seed(dist, stamp, istamp, parent, lists, cnt, chunk_ptr, srcs, base, ns, S, wshift, q, inf,
                         tree == 0, sbuf, scount)
                flush(sbuf, scount, lists, cnt, q, ctl, NEAR + q % 3)
                threshold = delta if tree == 0 and delta > 0 else inf
                epoch = 0
                epoch_start = q
                grid.sync()  # the sources are listed for round q (and, first, the batch is reset)
                while True:  # rounds until the list is empty; with pairs, then a bucket split while a pile holds any
                    while cnt[q % 3] != 0:
                        if cuda.grid(1) == 0:
                            cnt[(q + 2) % 3] = 0  # read last in round q - 1, appended to next in round q + 1
                            ctl[NEAR + (q + 1) % 3] = 0  # read last at the start of round q - 1, raised in round q + 1
                        if tree == 0 and pairs:
                            expand_pairs(paired, graph, work, wshift + 5, q, counts, sbuf, scount, threshold,
                                         epoch % 2, epoch_start, fbuf, smin)
                            flush_pile(fbuf, scount, smin, farq, ctl, epoch % 2, inf)
                        elif tree == 0:
                            expand_dist(graph, work, srcs, base, ns, S, wshift, q, counts, sbuf, scount,
                                        threshold)
                        else:
                            expand_tree(graph, work, srcs, base, ns, S, wshift, q, counts, sbuf, scount, inf)
                        flush(sbuf, scount, lists, cnt, q + 1, ctl, NEAR + q % 3)
                        if tree == 0:
                            dist_rounds += 1
                        else:
                            tree_rounds += 1
                        q += 1
                        grid.sync()  # round q - 1 is complete: each of its improvements is stamped and listed
                        if not pairs and threshold != inf and ctl[NEAR + (q - 1) % 3] == 0:  # all threads alike
                            threshold += delta  # round q - 1 only deferred: the next bucket opens
                            buckets += 1
                    if tree == 1 or not pairs or ctl[FCNT + epoch % 2] == 0:
                        break
                    low = ctl[FMIN + epoch % 2]  # every thread reads the same smallest far distance
                    threshold = max(threshold + delta, (low // delta + 1) * delta)
                    if cuda.grid(1) == 0:
                        ctl[FCNT + (epoch + 1) % 2] = 0  # scanned at the last split, appended to by this one
                        ctl[FMIN + (epoch + 1) % 2] = inf
                    grid.sync()  # the other pile is empty before this split appends to it
                    epoch_start = q
                    split_pairs(dist, stamp, lists, cnt, q, sbuf, scount, threshold, farq, istamp, ctl, epoch % 2,
                                fbuf, smin)
                    flush_pile(fbuf, scount, smin, farq, ctl, 1 - epoch % 2, inf)
                    flush(sbuf, scount, lists, cnt, q, ctl, NEAR + q % 3)
                    epoch += 1
                    buckets += 1
                    grid.sync()  # round q's list holds the bucket's pairs, the other pile the rest
                grid.sync()  # everybody has seen the empty count before the next phase appends to it
            if rows_out:
                write_rows(dist, parent, out_dist, out_parent, rowmap, 0 if staged else base, ns, S)
            grid.sync()  # the rows are out before the next batch resets the working arrays
        # atomic: per-thread counters summed once per thread
        cuda.atomic.add(ctl, ITEMS, counts[0])
        cuda.atomic.add(ctl, RELAX, counts[1])
        if cuda.grid(1) == 0:  # every thread read ctl[ROUND] before the first barrier
            ctl[ROUND] = q
            ctl[DIST_ROUNDS] += dist_rounds
            ctl[TREE_ROUNDS] += tree_rounds
            ctl[BUCKETS] += buckets

    return batches


class MultiSourceSolver(Solver):
    """multisource_fast: batches of S sources, frontier rounds and trees in one cooperative kernel; every vertex a
    source (APSP)."""

    device = "gpu"
    NAME = "multisource_fast"

    def __init__(self, graph, *, batch, block, grid, split, regs, unroll, parents, delta, items, reweight):
        self.johnson = reweighting(graph, reweight, self.NAME)  # negative weights: the kernel runs on reduced ones
        graph = self.johnson.reduced if self.johnson else graph
        super().__init__(graph, batch=batch, block=block, grid=grid, split=split, regs=regs, unroll=unroll,
                         parents=parents, delta=delta, items=items, reweight=reweight)
        name = self.NAME
        positive = graph.m == 0 or int(graph.weights.min()) > 0
        if parents == "tight" and not positive:
            raise SolverError(f"{name} parents=tight needs every weight > 0 (a zero-weight cycle is all tight, and a "
                              "local pick could close a loop); use parents=levels or auto")
        self.tight = parents == "tight" or (parents == "auto" and positive)
        self.delta = multisource_delta(graph, delta)
        self.pairs = items == "pairs" or (items == "auto" and self.delta > 0)
        self.S = batch or auto_batch(graph.n, graph.dtype.itemsize, self.pairs)
        self.block = block
        self.want_grid = grid
        self.split = split
        self.chunk_ptr, self.chunk_vertex, self.chunk_start = arc_chunks(graph.indptr, split)
        self.nwords = self.S // WARP
        slots = max(len(self.chunk_vertex), 1) * self.nwords
        self.marks = graph.n * self.nwords  # item stamps; with pairs also the far marks of each (vertex, source)
        if self.pairs:  # a round, and a far pile, holds each (vertex, source) pair at most once
            slots = max(slots, graph.n * self.S)
            self.marks = graph.n * self.S
        if slots >= 2**31 or graph.n * self.S >= 2**31:
            raise SolverError(f"{name}: n x batch = {graph.n} x {self.S} or {len(self.chunk_vertex)} arc chunks x "
                              f"{self.nwords} words overflow the kernel's int32 indices; use a smaller batch")
        self.slots = slots
        self.kernel = _kernel(graph.dtype.name, SBUF, regs, unroll)
        self.grid = None
        self.rows = None  # sources the result has room for

    def __getstate__(self):
        """The built solver's host state, shipped to a sweep's ranks (spawned processes:
        :mod:`gpusp.measure.alltrees_ranks`) before upload; the compiled kernel stays behind, rebuilt from its cache."""
        if getattr(self, "indices", None) is not None:
            raise SolverError(f"{self.NAME}: a solver ships to another process before its upload, not after")
        return {key: value for key, value in vars(self).items() if key != "kernel"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.kernel = _kernel(self.graph.dtype.name, SBUF, self.params["regs"], self.params["unroll"])

    def upload(self):
        g, n, S = self.graph, self.graph.n, self.S
        self.indices = cuda.to_device(g.indices)
        self.weights = cuda.to_device(g.weights)
        self.d_indptr = cuda.to_device(g.indptr.astype(np.int32))
        self.d_chunk_ptr = cuda.to_device(self.chunk_ptr)
        self.d_chunk_vertex = cuda.to_device(np.append(self.chunk_vertex, np.int32(0)))  # never empty
        self.d_chunk_start = cuda.to_device(self.chunk_start)
        self.dist = cuda.device_array(n * S, dtype=g.dtype)
        self.stamp = cuda.device_array(n * S, dtype=np.int32)
        self.parent_w = cuda.device_array(n * S, dtype=np.int32)
        self.istamp = cuda.device_array(self.marks, dtype=np.int32)
        self.lists = cuda.device_array((2, self.slots), dtype=np.int32)
        self.farq = cuda.device_array((2, self.slots if self.pairs else 1), dtype=np.int32)
        self.cnt = cuda.device_array(3, dtype=np.int64)
        self.ctl = cuda.device_array(CTL_SIZE, dtype=np.int64)

    def _result(self, k: int) -> None:
        """Room for the rows of ``k`` sources (:class:`~gpusp.solvers.common.dense.Result`: on the device, or staged
        a batch at a time into pinned host memory)."""
        if self.rows == k:
            return
        self.out = None  # the old result is freed before the new one is sized
        self.out = Result(self.graph, k, self.S)
        self.identity = cuda.to_device(np.arange(self.out.dist.shape[0], dtype=np.int32))  # the staging area's rows
        self.rows = k

    def _args(self, srcs, rowmap, first, last, out=None):
        """The kernel's arguments for batches first .. last - 1, the rows into ``out`` (default: the result)."""
        out = out or self.out
        wt = self.graph.dtype.type
        return ((self.indices, self.weights, self.d_chunk_ptr, self.d_chunk_vertex, self.d_chunk_start),
                (self.dist, self.stamp, self.istamp, self.parent_w, self.lists, self.cnt, self.ctl),
                (out.dist, out.parent, srcs, rowmap if out.on_device else self.identity),
                np.int64(first), np.int64(last), np.int64(self.S), not out.on_device, self.tight,
                wt(self.graph.inf), wt(self.delta), (self.d_indptr, self.pairs, self.farq))

    def run(self, source=None):
        if getattr(self, "all_sources", None) is None:
            self.all_sources = cuda.to_device(np.arange(self.graph.n, dtype=np.int32))
        self.row_sources = np.arange(self.graph.n)
        return self._solve(self.all_sources, self.all_sources, None)

    def _start(self, srcs, rowmap, out=None) -> None:
        """Reset the round stamps and control words for a run over ``srcs``; the first run compiles the kernel."""
        for arr in (self.stamp, self.istamp, self.cnt):  # round numbers start at 1 and only grow within a run
            fill_array(arr, 0)
        self.ctl.copy_to_device(np.array([1] + [0] * (CTL_SIZE - 1), dtype=np.int64))
        if self.grid is None:  # compiles once; the co-resident limit depends on the kernel's registers
            want = self.want_grid or blocks_per_sm(MULTISOURCE_BLOCKS_PER_SM)
            self.grid = cooperative_grid(self.kernel, self._args(srcs, rowmap, 0, 1, out), self.block, want)

    def _counters(self, batches: int, launches: int) -> dict:
        ctl = self.ctl.copy_to_host()
        return {"iterations": int(ctl[DIST_ROUNDS]), "tree_levels": int(ctl[TREE_ROUNDS]),
                "tight_parents": int(self.tight), "delta": int(self.delta), "buckets": int(ctl[BUCKETS]),
                "pair_items": int(self.pairs),
                "batches": batches, "batch": self.S, "items": int(ctl[ITEMS]), "relaxations": int(ctl[RELAX]),
                "launches": launches, "grid": self.grid}

    def _solve(self, srcs, rowmap, rows):
        """Every source of the device array ``srcs``, S at a time, the one at position p into row ``rowmap[p]`` of
        the result (``rows``: the same map on the host, None for the identity); returns the counters."""
        k, S = srcs.size, self.S
        self._result(k)
        batches = (k + S - 1) // S
        self._start(srcs, rowmap)
        launches = 0
        spans = [(0, batches)] if self.out.on_device else [(b, b + 1) for b in range(batches)]
        for first, last in spans:
            self.kernel[self.grid, self.block](*self._args(srcs, rowmap, first, last))
            launches += 1
            base, count = first * S, min(S, k - first * S)
            self.out.keep(base, count, at=None if rows is None else rows[base:base + count])
        counters = {**self._counters(batches, launches), **self.out.counters()}
        if self.johnson:  # the potentials: preprocessing, in no trial
            counters.update(self.johnson.counters(), preprocess_s=self.johnson.seconds,
                            preprocess_bytes=self.johnson.nbytes)
        return counters

    def sweep_batch(self, k: int) -> int:
        """Sources per launch of a sweep (of any K): the batch S the solver was built with."""
        return self.S

    def dist_rows(self, vertices) -> np.ndarray:
        """Where a sweep keeps vertices' distances: vertex v of source slot s at dist[v * S + s] (the graph's ids)."""
        return np.asarray(vertices, dtype=np.int64)

    def sweep(self, srcs, after_batch) -> dict:
        """Every source of the device array ``srcs``, a launch per batch of S, no rows and no trees: after each
        launch ``after_batch(base, count)`` runs while that batch's distances are in ``self.dist`` (vertex-major,
        source ``srcs[base + s]`` at ``dist[v * S + s]``), e.g. a reduction kernel on the same stream. Returns the
        counters (docs/solvers/multisource.md, "All trees")."""
        k, S, n = srcs.size, self.S, self.graph.n
        no_rows = _NoRows(cuda.device_array((0, n), dtype=self.graph.dtype), cuda.device_array((0, n), np.int32))
        self._start(srcs, srcs, no_rows)
        batches = (k + S - 1) // S
        for b in range(batches):
            self.kernel[self.grid, self.block](*self._args(srcs, srcs, b, b + 1, no_rows))
            after_batch(b * S, min(S, k - b * S))
        return self._counters(batches, batches)

    def download(self):
        dist, parent = self.out.download()
        return (self.johnson.restore(dist, self.row_sources) if self.johnson else dist), parent


class _NoRows:
    """The result a sweep passes the kernel: no rows (and so no trees), nothing staged."""

    on_device = True

    def __init__(self, dist, parent):
        self.dist, self.parent = dist, parent


class MultiSourceSssp(MultiSourceSolver):
    """multisource_sssp: the sources a job names, batched as multisource_fast batches every vertex; ``run`` takes
    them all (the harness's batch protocol) and ``download`` gives one row per source."""

    NAME = "multisource_sssp"

    def __init__(self, graph, *, batch, block, grid, split, regs, unroll, parents, delta, items, order, reweight,
                 gpus=1):
        refuse_split(self.NAME, gpus)  # an every-tree sweep builds it with gpus=1 and splits the sources itself
        super().__init__(graph, batch=batch, block=block, grid=grid, split=split, regs=regs, unroll=unroll,
                         parents=parents, delta=delta, items=items, reweight=reweight)
        self.params["order"] = order
        self.landmarks = order == "landmarks" or (order == "auto" and self.delta > 0)
        if self.landmarks:  # host preparation: three breadth-first searches, once per graph
            graph.hop_landmarks()

    def order(self, sources) -> tuple[np.ndarray, np.ndarray | None]:
        """(the sources in the order they are solved, and for each its index in ``sources``; None: the order
        given)."""
        srcs = np.asarray(sources, dtype=np.int64).reshape(-1)
        if srcs.size == 0:
            raise SolverError(f"{self.NAME}: no sources given")
        if srcs.min() < 0 or srcs.max() >= self.graph.n:
            raise SolverError(f"{self.NAME}: source out of range 0..{self.graph.n - 1}")
        if not self.landmarks:
            return srcs, None
        _, hops_a, hops_b = self.graph.hop_landmarks()  # close sources share 32-source words, and so frontier items
        rows = np.argsort(morton(hops_a[srcs], hops_b[srcs]), kind="stable").astype(np.int32)
        return srcs[rows], rows

    def run(self, sources):
        srcs, rows = self.order(sources)
        self.row_sources = srcs if rows is None else np.asarray(sources, dtype=np.int64).reshape(-1)
        d_srcs = cuda.to_device(srcs.astype(np.int32))  # K x 4 bytes (and the row map): part of the trial
        rowmap = np.arange(srcs.size, dtype=np.int32) if rows is None else rows
        return self._solve(d_srcs, cuda.to_device(rowmap), rows)
