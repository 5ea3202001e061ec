"""``deltastep_cluster``: near-far delta-stepping inside one thread-block cluster (Hopper, sm_90), every round in
distributed shared memory. Each block owns a share of the vertices (their distances and marks) and its near queues in
shared memory; a relaxation is an atomic on the owner's word, a round ends at the cluster's hardware barrier, and a
dry round splits the far vertices into the next bucket. The kernel is :func:`cluster_nearfar_py`, compiled per block
size; :class:`ClusterDeltaStepSolver` is the host side. Design, correctness and limits: docs/solvers/deltastep.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from .dsmem import (ClusterSSSP, atomic_add, atomic_min, cluster_min, cluster_sync, exchange, load_own, place,
                      store_of, store_word, total_begin, total_end)
from .persistent import block_add, tight_tree
from ..common.gate import kernel
from ..common.launch import TARGET
from .spec import CLUSTER_DELTA_WIDTH, CLUSTER_HEAD_WORDS, cluster_limit, cluster_words

# per-block shared words ahead of the distances: queue counters (three slots), the block's and the cluster's
# smallest FAR distance (two slots each, by split parity), the round totals (two slots, by round parity)
CNT, BMIN, CMIN, TOTAL = 0, 3, 5, 7
HEAD = CLUSTER_HEAD_WORDS
FAR = 0x7FFFFFFF  # a mark: improved at or above the threshold, not expanded yet
NONE = -1  # a mark: never reached, or expanded
EMPTY = 0x7FFFFFFF  # no FAR distance
# ctl (global int64): rounds, splits, arcs examined
ROUNDS, SPLITS, RELAX = 0, 1, 2
CTL_SIZE = 3


@cuda.jit(device=True)
def _queue(store, overflow, rank, at, queue, buf, k, vl, lo, hi):
    """Entry k of ``rank``'s queue ``buf``: the vertex's index there and its arc range, in shared words from ``at``
    while k < queue, then in global memory."""
    if k < queue:
        w = at + 3 * (buf * queue + k)
        store_word(store, rank, w, vl)
        store_word(store, rank, w + 1, lo)
        store_word(store, rank, w + 2, hi)
    else:
        overflow[rank, buf, 3 * k] = vl
        overflow[rank, buf, 3 * k + 1] = lo
        overflow[rank, buf, 3 * k + 2] = hi


@cuda.jit(device=True)
def _owner(v, chunk, cyclic, shift):
    """(the rank that owns vertex v, v's index there): every 2^shift-th vertex per rank (cyclic), or ranges of
    ``chunk`` consecutive ids."""
    if cyclic:
        return v & ((1 << shift) - 1), v >> shift
    owner = v // chunk
    return owner, v - owner * chunk


@cuda.jit(device=True)
def _vertex(rank, i, chunk, cyclic, shift):
    """The vertex at index i of ``rank`` (the inverse of :func:`_owner`; past n on the last rank's padding)."""
    if cyclic:
        return (i << shift) | rank
    return rank * chunk + i


def cluster_nearfar_py(indptr, indices, weights, dist, parent, ctl, srcbuf, overflow, sim_store, n, chunk, ranks,
                       queue, delta, inf, lanes, tree, cyclic, shift):
    """One cluster: reset, near rounds and splits in shared memory, distances written back, then parents."""
    store = store_of(sim_store)
    rank, lt, per = place(store)
    q_at = HEAD + 2 * chunk
    i = lt
    while i < chunk:
        store_word(store, rank, HEAD + 2 * i, NONE)
        store_word(store, rank, HEAD + 2 * i + 1, inf)
        gv = _vertex(rank, i, chunk, cyclic, shift)
        if gv < n:
            parent[gv] = -1
        i += per
    i = lt
    while i < HEAD:
        store_word(store, rank, i, EMPTY if BMIN <= i < TOTAL else 0)
        i += per
    if rank == 0 and lt == 0:
        ctl[RELAX] = 0
    cluster_sync()  # barrier: every block's words are reset before the source is queued
    source = srcbuf[0]  # host memory mapped into the device: each trial's source without a new launch setup
    owner, sl = _owner(source, chunk, cyclic, shift)
    if lt == 0 and rank == owner:
        store_word(store, rank, HEAD + 2 * sl + 1, 0)
        _queue(store, overflow, rank, q_at, queue, 0, 0, sl, indptr[source], indptr[source + 1])
        store_word(store, rank, CNT, 1)
    cluster_sync()  # barrier: round 0 sees the source queued

    group = lt // lanes
    lane = lt % lanes
    groups = per // lanes
    threshold = delta
    tick = 0
    epoch = 0
    relaxed = 0
    part = 0
    while True:
        # near round: the blocks' counters for this round are final; warp 0 starts summing them now and finishes
        # after its share of the round, so the total costs the round no latency
        if lt < 32:
            part = total_begin(store, CNT + tick % 3, ranks)
        if lt == 0:
            store_word(store, rank, CNT + (tick + 2) % 3, 0)  # read last round (before the barrier), written next
        count = load_own(store, rank, CNT + tick % 3)
        rbuf = tick % 2
        wbuf = 1 - rbuf
        wslot = CNT + (tick + 1) % 3
        nxt = tick + 1
        i = group
        while i < count:
            if i < queue:
                w = q_at + 3 * (rbuf * queue + i)
                u = load_own(store, rank, w)
                e = load_own(store, rank, w + 1)
                end = load_own(store, rank, w + 2)
            else:
                u = overflow[rank, rbuf, 3 * i]
                e = overflow[rank, rbuf, 3 * i + 1]
                end = overflow[rank, rbuf, 3 * i + 2]
            du = load_own(store, rank, HEAD + 2 * u + 1)
            e += lane
            while e < end:
                relaxed += 1
                v = indices[e]
                cand = numba.int32(du + weights[e])
                owner, vl = _owner(v, chunk, cyclic, shift)
                if cand < atomic_min(store, owner, HEAD + 2 * vl + 1, cand):
                    if cand >= threshold:
                        store_word(store, owner, HEAD + 2 * vl, FAR)
                    elif exchange(store, owner, HEAD + 2 * vl, nxt) != nxt:
                        # the first to mark it for the next round queues it, with its arcs
                        lo = indptr[v]
                        hi = indptr[v + 1]
                        _queue(store, overflow, owner, q_at, queue, wbuf, atomic_add(store, owner, wslot, 1), vl,
                               lo, hi)
                e += lanes
            i += groups
        if lt < 32:
            total = total_end(part)
            if lt == 0:
                store_word(store, rank, TOTAL + tick % 2, total)  # read after the barrier, rewritten two rounds on
        cluster_sync()  # barrier: the round's updates, queues and total are complete
        tick += 1
        if load_own(store, rank, TOTAL + (tick - 1) % 2) > 0:
            continue
        # split (the round just run was empty everywhere): the smallest FAR distance sets the next threshold
        if lt == 0:
            store_word(store, rank, BMIN + (epoch + 1) % 2, EMPTY)  # used two splits ago, read before since
            if rank == 0:
                store_word(store, 0, CMIN + (epoch + 1) % 2, EMPTY)
        best = EMPTY
        i = lt
        while i < chunk:
            if load_own(store, rank, HEAD + 2 * i) == FAR:
                best = min(best, load_own(store, rank, HEAD + 2 * i + 1))
            i += per
        low_far = cluster_min(store, rank, lt, best, BMIN + epoch % 2, CMIN + epoch % 2, EMPTY)
        if low_far == EMPTY:
            break
        # FAR vertices below the new threshold start its bucket (one below the old threshold lost a race between a
        # FAR mark and a near push: expanding it again is redundant, never wrong)
        threshold = max(threshold + delta, (low_far // delta + 1) * delta)
        slot = CNT + tick % 3
        i = lt
        while i < chunk:
            if load_own(store, rank, HEAD + 2 * i) == FAR and load_own(store, rank, HEAD + 2 * i + 1) < threshold:
                gv = _vertex(rank, i, chunk, cyclic, shift)
                k = atomic_add(store, rank, slot, 1)
                _queue(store, overflow, rank, q_at, queue, tick % 2, k, i, indptr[gv], indptr[gv + 1])
                store_word(store, rank, HEAD + 2 * i, NONE)  # no other thread touches the mark during a split
            i += per
        epoch += 1
        cluster_sync()  # barrier: the split's queues are complete before the next round reads them

    i = lt
    while i < chunk:
        gv = _vertex(rank, i, chunk, cyclic, shift)
        if gv < n:
            dist[gv] = load_own(store, rank, HEAD + 2 * i + 1)
        i += per
    block_add(ctl, RELAX, relaxed)
    if rank == 0 and lt == 0:
        ctl[ROUNDS] = tick - epoch - 1  # rounds with work: an empty round precedes each split and the end
        ctl[SPLITS] = epoch
    cluster_sync()  # barrier: every block's distances are in global memory before the tree reads them
    if tree:
        tight_tree(indptr, indices, weights, dist, parent, inf, rank * per + lt, ranks * per)


@kernel("void(int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int64[::1], int64[::1], int32[:, :, ::1], "
        "int32[:, ::1], int64, int64, int64, int64, int64, int32, int64, int64, int64, int64)",
        cases=[{"block": 1024}, {"block": 512}])
@functools.cache
def cluster_nearfar(block: int):
    """The kernel compiled for blocks of ``block`` threads, one block per multiprocessor (the register budget of a
    1,024-thread block is 64 a thread)."""
    return cuda.jit(**TARGET.launch_bounds(block, 1))(cluster_nearfar_py)


class ClusterDeltaStepSolver(ClusterSSSP):
    """deltastep_cluster: near-far delta-stepping in one thread-block cluster, state in distributed shared memory."""

    label = "deltastep_cluster"

    def __init__(self, graph, *, delta, lanes, cluster, block, queue, owner, paths):
        super().__init__(graph, delta=delta, lanes=lanes, cluster=cluster, block=block, queue=queue, owner=owner,
                         paths=paths)
        self.owner = owner
        reason = cluster_limit(graph.n, graph.dtype.itemsize, {"cluster": cluster, "queue": queue})
        if reason:
            raise SolverError(reason)
        self.ranks = int(cluster)
        self.chunk, self.queue, words = cluster_words(graph.n, self.ranks, queue)
        self.shared_bytes = 4 * words
        self.delta = delta or graph.default_delta(CLUSTER_DELTA_WIDTH)
        self.lanes = min(int(lanes), int(block))
        self.block = int(block)
        # the simulator runs every rank in one block: a few threads per rank keep it fast
        self.per = TARGET.threads(self.block, max(self.lanes, 4))
        self.kernel = cluster_nearfar(self.block)

    def upload(self):
        n = self.graph.n
        self.upload_arrays(np.int32)
        self.d_ctl = cuda.device_array(CTL_SIZE, dtype=np.int64)
        self.d_overflow = cuda.device_array((self.ranks, 2, 3 * self.chunk), dtype=np.int32)
        self.upload_source()
        shape = (self.ranks, self.shared_bytes // 4) if TARGET.simulator else (1, 1)
        self.d_store = cuda.device_array(shape, dtype=np.int32)  # the simulator's stand-in for shared memory
        self.args = (self.dg.indptr, self.dg.indices, self.dg.weights, self.d_dist, self.d_parent, self.d_ctl,
                     self.d_source, self.d_overflow, self.d_store, np.int64(n), np.int64(self.chunk),
                     np.int64(self.ranks), np.int64(self.queue), np.int64(self.delta), np.int32(self.graph.inf),
                     np.int64(self.lanes), self.tree_flag(), np.int64(self.owner == "cyclic"),
                     np.int64(self.ranks.bit_length() - 1))

    def read_counters(self, ctl):
        return {"iterations": int(ctl[ROUNDS]), "buckets": int(ctl[SPLITS]), "relaxations": int(ctl[RELAX]),
                "delta": self.delta, "lanes": self.lanes, "cluster": self.ranks,
                "block": self.block, "queue": self.queue, "shared_bytes": self.shared_bytes,
                "owner": self.owner}

