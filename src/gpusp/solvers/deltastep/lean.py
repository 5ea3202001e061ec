"""``deltastep_lean``: ``deltastep_gpu``'s near-far delta-stepping in at most 16 bytes a vertex beside the graph, int64
distances and the tree's parents included. A vertex's near and far membership are bits (three near bitmaps in turn,
one far bitmap), not int32 stamps and flags, and the queues of ids hold a fraction of n: a round whose queue
overflowed reads its vertices from the bitmap instead (hubs there cut into chunks that fit the unused queue), a split
whose pile overflowed reads the far bitmap. Design and memory: docs/solvers/deltastep.md, "deltastep_lean".
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from ..common.gate import OFFSETS, kernel
from ..common.launch import blocks_per_sm
from .gpu import (CTL_SIZE, FAR, FAR_SCANNED, FMIN, FMIN_EMPTY, GRID_STEPS, NEAR, RELAX, ROUNDS, SPLITS,
                  DeltaStepSolver, _arc_range, _claim)
from .persistent import block_add, tight_tree
from .spec import NEARFAR_BLOCKS_PER_SM, NEARFAR_REGISTERS, lean_hub, lean_queue

# control words past deltastep_gpu's: the hub chunks a bitmap round queued (one slot per step parity), the rounds
# read from a bitmap and the splits that read the far bitmap
HUB, BITMAP_ROUNDS, BITMAP_SPLITS = CTL_SIZE, CTL_SIZE + 2, CTL_SIZE + 3
LEAN_CTL = CTL_SIZE + 4
WARP = 32


@cuda.jit(device=True)
def _bit(w):
    """w's bit within its 32-bit word."""
    return np.uint32(np.int64(1) << (np.int64(w) & 31))


@cuda.jit(device=True)
def _unbit(w):
    """Every bit of w's word but w's."""
    return np.uint32(np.int64(0xFFFFFFFF) ^ (np.int64(1) << (np.int64(w) & 31)))


@cuda.jit(device=True)
def _push_near(nearq, chunkq, nearbits, ctl, w, wrow, wbuf, wslot, indptr, split, warp):
    """Mark w for the next round (bitmap row ``wrow``) unless it already is; the first to mark it claims its queue
    entries (with ``split``, one per ``split`` arcs). Entries past the queue's capacity are counted, not written: a
    count past the capacity sends the next round to the bitmap."""
    bit = _bit(w)
    if cuda.atomic.or_(nearbits, wrow + (w >> 5), bit) & bit == 0:  # atomic: one mark per vertex and round
        cap = nearq.shape[1]
        chunks = 1
        if split > 0:
            chunks = max(1, (indptr[w + 1] - indptr[w] + split - 1) // split)
        if chunks == 1:
            at = _claim(ctl, wslot, warp)
            if at < cap:
                nearq[wbuf, at] = w
                if split > 0:
                    chunkq[wbuf, at] = 0
            return
        at = cuda.atomic.add(ctl, wslot, chunks)  # atomic: claim the hub's entries
        for c in range(min(chunks, cap - at)):
            nearq[wbuf, at + c] = w
            chunkq[wbuf, at + c] = c


@cuda.jit(device=True)
def _push_far(farq, farbits, ctl, bound, w, d, fbuf, fslot, warp):
    """Put w (at distance d >= threshold) on the far pile unless its far bit says it is there; the block's bound as in
    deltastep_gpu. An entry past the pile's capacity is counted, not written: the next split then reads the bitmap."""
    if d < bound[0]:
        cuda.atomic.min(bound, 0, d)  # atomic: the block's threads lower it at once
    bit = _bit(w)
    if cuda.atomic.or_(farbits, w >> 5, bit) & bit == 0:  # atomic: w enters the pile once until a split takes it out
        at = _claim(ctl, FAR + fslot, warp)
        if at < farq.shape[1]:
            farq[fbuf, at] = w


@cuda.jit(device=True)
def _relax(graph, dist, queues, u, du, e, end, stride, threshold, wrow, wbuf, wslot, fbuf, fslot, bound, split, warp):
    """Relax u's arcs e, e + stride, ... below ``end``; what they lower is queued near or far. Returns the arcs."""
    indptr, indices, weights = graph
    nearq, chunkq, farq, nearbits, farbits, ctl = queues
    relaxed = 0
    while e < end:
        relaxed += 1
        w = indices[e]
        cand = du + weights[e]
        if cand < dist[w]:
            if cand < cuda.atomic.min(dist, w, cand):  # atomic: several tails may lower w at once
                if cand >= threshold:
                    _push_far(farq, farbits, ctl, bound, w, cand, fbuf, fslot, warp)
                else:
                    _push_near(nearq, chunkq, nearbits, ctl, w, wrow, wbuf, wslot, indptr, split, warp)
        e += stride
    return relaxed


@cuda.jit(device=True)
def _far_split(dist, queues, indptr, fcount, threshold, delta, epoch, wrow, wbuf, wslot, split, warp):
    """Raise the threshold by delta (or to the pile's lowest bucket), queue the pile's vertices that fell below it and
    keep the rest in the other pile; the pile from its queue, or from the far bitmap where the queue overflowed.
    Returns the new threshold."""
    nearq, chunkq, farq, nearbits, farbits, ctl = queues
    tid = cuda.grid(1)
    nthreads = cuda.gridsize(1)
    low = threshold
    jump = (ctl[FMIN + epoch % 3] // delta + 1) * delta
    threshold = max(threshold + delta, jump)
    nslot = (epoch + 1) % 3
    if tid == 0:
        ctl[FAR + (epoch + 2) % 3] = 0  # read at the previous split, written from this one on
        ctl[FMIN + (epoch + 2) % 3] = FMIN_EMPTY
    rbuf = epoch % 2
    cap = farq.shape[1]
    if fcount <= cap:
        i = tid
        while i < fcount:
            w = farq[rbuf, i]
            d = dist[w]
            if d < threshold:
                # w never returns to the pile (its distance stays below every later threshold): its bit cleared,
                # a bitmap split does not read it again
                cuda.atomic.and_(farbits, w >> 5, _unbit(w))  # atomic: the word's other bits are other threads'
                if d >= low:  # below the old threshold it was already expanded at this distance
                    _push_near(nearq, chunkq, nearbits, ctl, w, wrow, wbuf, wslot, indptr, split, warp)
            else:
                at = _claim(ctl, FAR + nslot, warp)
                farq[1 - rbuf, at] = w  # at most what the pile held: it fits
                if d < ctl[FMIN + nslot]:
                    cuda.atomic.min(ctl, FMIN + nslot, d)  # atomic: the new pile's lower bound
            i += nthreads
        return threshold
    i = tid
    while i < farbits.size:  # a word a thread: no far push runs during a split, so the word is this thread's alone
        word = np.int64(farbits[i])
        keep = word
        while word != 0:
            w = i * 32 + cuda.ffs(word) - 1
            word &= word - 1
            d = dist[w]
            if d < threshold:
                keep &= ~(np.int64(1) << (w & 31))
                if d >= low:
                    _push_near(nearq, chunkq, nearbits, ctl, w, wrow, wbuf, wslot, indptr, split, warp)
            else:
                at = _claim(ctl, FAR + nslot, warp)
                if at < cap:
                    farq[1 - rbuf, at] = w
                if d < ctl[FMIN + nslot]:
                    cuda.atomic.min(ctl, FMIN + nslot, d)  # atomic: the new pile's lower bound
        farbits[i] = np.uint32(keep)
        i += nthreads
    return threshold


def lean(graph, dist, parent, queues, srcbuf, search, modes):
    """Persistent grid: reset, near rounds (from the queue, or from the bitmap where it overflowed) and far splits,
    then parents."""
    indptr, indices, weights = graph
    nearq, chunkq, farq, nearbits, farbits, ctl = queues
    delta, inf, lanes, tree, hub = search
    split, warp = modes
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    nthreads = cuda.gridsize(1)
    n = dist.size
    words = farbits.size
    v = tid
    while v < n:
        dist[v] = inf
        v += nthreads
    v = tid
    while v < parent.size:
        parent[v] = -1
        v += nthreads
    v = tid
    while v < nearbits.size:
        nearbits[v] = 0
        v += nthreads
    v = tid
    while v < words:
        farbits[v] = 0
        v += nthreads
    if tid < 3:
        ctl[NEAR + tid] = 0
        ctl[FAR + tid] = 0
        ctl[FMIN + tid] = FMIN_EMPTY
    if tid < 2:
        ctl[HUB + tid] = 0
    if tid == 0:
        ctl[RELAX] = 0
    bound = cuda.shared.array(1, dtype=np.int64)  # the far pushes' lowest distance in this block and step
    if cuda.threadIdx.x == 0:
        bound[0] = FMIN_EMPTY
    grid.sync()  # barrier: the reset is complete before the source is queued
    if tid == 0:
        source = srcbuf[0]  # host memory mapped into the device: a replayed graph reads each trial's source
        dist[source] = 0
        _push_near(nearq, chunkq, nearbits, ctl, source, 0, 0, NEAR, indptr, split, 0)
    grid.sync()  # barrier: step 0 sees the source marked and queued

    group = tid // lanes
    lane = tid % lanes
    ngroups = nthreads // lanes
    threshold = delta
    step = 0
    epoch = 0
    relaxed = 0
    far_scanned = 0
    bitmap_rounds = 0
    bitmap_splits = 0
    dirty = -1  # the bitmap row a bitmap round read last step, cleared whole this step
    cap = nearq.shape[1]
    while True:
        count = ctl[NEAR + step % 3]
        wslot = NEAR + (step + 1) % 3
        wbuf = (step + 1) % 2
        wrow = (step + 1) % 3 * words
        if tid == 0:
            ctl[NEAR + (step + 2) % 3] = 0  # read last step (before the barrier), written next step
            ctl[HUB + (step + 1) % 2] = 0  # read last step, claimed next step
        if dirty >= 0:  # row (step + 2) % 3: neither read nor written this step
            v = tid
            while v < words:
                nearbits[dirty + v] = 0
                v += nthreads
            dirty = -1
        rbuf = step % 2
        rrow = step % 3 * words
        fslot = epoch % 3
        fbuf = epoch % 2
        if count > 0 and count <= cap:
            # near round from the queue: every entry's vertex leaves this round's bitmap as it is expanded
            i = group
            while i < count:
                u, e, end = _arc_range(indptr, nearq, chunkq, rbuf, i, split)
                if lane == 0 and (split == 0 or chunkq[rbuf, i] == 0):
                    cuda.atomic.and_(nearbits, rrow + (u >> 5), _unbit(u))  # atomic: other bits are others'
                relaxed += _relax(graph, dist, queues, u, dist[u], e + lane, end, lanes, threshold, wrow, wbuf, wslot,
                                  fbuf, fslot, bound, split, warp)
                i += ngroups
        elif count > 0:
            # near round from the bitmap (the queue overflowed): a group a word; a hub's arcs become chunks of
            # ``hub`` arcs in this round's idle queue, expanded a warp a chunk once every word is read
            i = group
            while i < words:
                word = np.int64(nearbits[rrow + i])
                while word != 0:
                    u = i * 32 + cuda.ffs(word) - 1
                    word &= word - 1
                    lo = indptr[u]
                    end = indptr[u + 1]
                    if end - lo > hub:
                        if lane == 0:
                            chunks = (end - lo + hub - 1) // hub
                            at = cuda.atomic.add(ctl, HUB + step % 2, chunks)  # atomic: the hub's chunk entries
                            for c in range(chunks):  # every hub's chunks fit: hub >= 2 m / capacity
                                nearq[rbuf, at + c] = u
                                chunkq[rbuf, at + c] = c
                    else:
                        relaxed += _relax(graph, dist, queues, u, dist[u], lo + lane, end, lanes, threshold, wrow,
                                          wbuf, wslot, fbuf, fslot, bound, split, warp)
                i += ngroups
            grid.sync()  # barrier: every hub chunk of the round is queued
            chunks = ctl[HUB + step % 2]
            i = tid // WARP
            while i < chunks:
                u = nearq[rbuf, i]
                lo = indptr[u] + chunkq[rbuf, i] * hub
                relaxed += _relax(graph, dist, queues, u, dist[u], lo + tid % WARP, min(lo + hub, indptr[u + 1]),
                                  WARP, threshold, wrow, wbuf, wslot, fbuf, fslot, bound, split, warp)
                i += nthreads // WARP
            dirty = rrow
            bitmap_rounds += 1
        else:
            # far split: raise the threshold, queue what fell below it
            fcount = ctl[FAR + epoch % 3]
            if fcount == 0:
                break
            far_scanned += fcount
            if fcount > farq.shape[1]:
                bitmap_splits += 1
            threshold = _far_split(dist, queues, indptr, fcount, threshold, delta, epoch, wrow, wbuf, wslot, split,
                                   warp)
            epoch += 1
        cuda.syncthreads()  # barrier: the block's far pushes of this step have lowered its bound
        if cuda.threadIdx.x == 0 and bound[0] != FMIN_EMPTY:
            cuda.atomic.min(ctl, FMIN + epoch % 3, bound[0])  # atomic: the blocks fold their bounds into the pile's
            bound[0] = FMIN_EMPTY
        grid.sync()  # barrier: this step's pushes, bounds and counters are visible to the next step
        step += 1

    block_add(ctl, RELAX, relaxed)
    if tid == 0:
        ctl[ROUNDS] = step - epoch
        ctl[SPLITS] = epoch
        ctl[GRID_STEPS] = step
        ctl[FAR_SCANNED] = far_scanned
        ctl[BITMAP_ROUNDS] = bitmap_rounds
        ctl[BITMAP_SPLITS] = bitmap_splits
    if tree:
        tight_tree(indptr, indices, weights, dist, parent, inf, tid, nthreads)


# the records: graph = (indptr, indices, weights), queues = (near queue, its chunk indices, far pile, near bitmaps,
# far bitmap, control words), search = (delta, inf, lanes, tree, hub), modes = (split, warp)
@kernel("void(Tuple(({o}[::1], int32[::1], {w}[::1])), {w}[::1], int32[::1], "
        "Tuple((int32[:, ::1], int32[:, ::1], int32[:, ::1], uint32[::1], uint32[::1], int64[::1])), int64[::1], "
        "Tuple((int64, {w}, int64, int64, int64)), UniTuple(int64, 2))",
        cases=OFFSETS, registers=NEARFAR_REGISTERS)
@functools.cache
def lean_kernel():
    """The persistent kernel (:func:`lean`)."""
    return cuda.jit(cache=True)(lean)


class LeanSolver(DeltaStepSolver):
    """deltastep_lean: deltastep_gpu's rounds and splits over bitmaps and queues of a fraction of n."""

    def __init__(self, graph, *, delta, lanes, block, grid, split, push, launch, queue, paths):
        # the Solver's own __init__: deltastep_gpu's fusion, chains and register caps are not this kernel's
        super(DeltaStepSolver, self).__init__(graph, delta=delta, lanes=lanes, block=block, grid=grid, split=split,
                                              push=push, launch=launch, queue=queue, paths=paths)
        self._near_far(delta, lanes, block, grid, split, push, launch)
        self.queue = lean_queue(queue, graph.n)
        self.hub = lean_hub(graph.m, self.queue)
        self.hubs = self.max_degree > self.hub  # a bitmap round cuts some vertex into chunks
        self.kernel = lean_kernel()

    def upload(self):
        words = -(-self.graph.n // 32)
        self.upload_arrays(self.dtype, parents=self.paths)
        chunked = self.split > 0 or self.hubs
        self.d_near = cuda.device_array((2, self.queue), dtype=np.int32)
        self.d_chunk = cuda.device_array((2, self.queue if chunked else 1), dtype=np.int32)
        self.d_far = cuda.device_array((2, self.queue), dtype=np.int32)
        self.d_nearbits = cuda.device_array(3 * words, dtype=np.uint32)
        self.d_farbits = cuda.device_array(words, dtype=np.uint32)
        self.d_ctl = cuda.device_array(LEAN_CTL, dtype=np.int64)
        self.upload_source()
        self.want_grid = self.want_grid or blocks_per_sm(NEARFAR_BLOCKS_PER_SM)

    def _args(self):
        dg = self.dg
        queues = (self.d_near, self.d_chunk, self.d_far, self.d_nearbits, self.d_farbits, self.d_ctl)
        search = (np.int64(self.delta), self.inf, np.int64(self.lanes), self.tree_flag(), np.int64(self.hub))
        modes = (np.int64(self.split), np.int64(self.push == "warp"))
        return ((dg.indptr, dg.indices, dg.weights), self.d_dist, self.d_parent, queues, self.d_source, search, modes)

    def _counters(self, ctl, launches) -> dict:
        return {**self._near_far_counters(ctl, launches), "bitmap_rounds": int(ctl[BITMAP_ROUNDS]),
                "bitmap_splits": int(ctl[BITMAP_SPLITS]), "queue": self.queue, "hub": self.hub}
