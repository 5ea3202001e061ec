"""Near-far delta-stepping inside one thread-block cluster: every round in distributed shared memory.

Algorithm: near-far delta-stepping as in :mod:`gpusp.solvers.deltastep.gpu` (Davidson, Baxter, Garland and Owens,
IPDPS'14; Meyer and Sanders, J. Algorithms 2003): the vertices improved below the threshold are expanded round after
round; improvements at or above it wait; when a round queues nothing the threshold rises by ``delta`` (or jumps to
the bucket of the smallest waiting distance).

Why a cluster (variant ``deltastep_cluster``, our design): on road graphs near-far runs about 1,300 rounds of a few
hundred vertices each (USA-road-d.NY), and each round of ``deltastep_gpu`` costs a grid barrier plus a dependent
chain of L2 round trips, 2 us at least before any work (``benchmarks/sssp-fast-h200.md``). Here one cluster of up to
16 blocks (Hopper's thread-block clusters, :mod:`gpusp.solvers.deltastep.dsmem`) holds the whole search: vertex v belongs to
block ``v mod cluster`` (``owner='cyclic'``: a round's frontier, a wave of neighbouring ids on a road graph, is spread
over every block; ``'range'``: consecutive ids per block), whose shared memory keeps its distance and its *mark* (the
round that will expand it, FAR, or none) as two words, and the block's near queues: entries of three words, the
vertex and its arc range, so expanding an entry reads the arcs without first reading the offsets (the entries past
``queue`` in global memory). A relaxation is an atomic min on the owner's shared word, a push an exchange on the
owner's mark and an atomic add on its queue counter (each a multiprocessor-to-multiprocessor hop), and a round ends
at the cluster's hardware barrier. The graph (CSR) stays in global memory and is read through L2.

* **Round.** Each block expands its queued vertices, ``lanes`` threads per vertex. An improvement below the threshold
  exchanges the target's mark for the next round's number; the thread that changed it reads the target's arc range
  and queues it in its owner's next queue. An improvement at or above the threshold sets the mark to FAR. Warp 0 of
  each block starts loading the blocks' counters of the round (one lane per block) before its share of the work and
  adds them with shuffles after it, so the round's total costs no latency of its own; the total is known after the
  barrier, and an empty round (nothing queued anywhere) leads to a split.
* **Split.** Each block scans its own vertices: the smallest FAR distance goes, block by block, to an atomic min in
  block 0; the threshold rises to ``max(threshold + delta, the bucket above it)``; FAR vertices now below the
  threshold are queued. A FAR mark below the old threshold was left by a far improvement whose mark landed after a
  near push of the same vertex; the vertex was expanded already, it is queued again (redundant, never wrong). No FAR
  vertex left ends the search.
* **Counters** rotate over three slots (a slot is cleared one round before it is written and after every block has
  read it), so one cluster barrier per round suffices; a vertex is queued at most once per round (the mark's
  exchange) and once per split, so ``chunk`` entries per block always suffice.
* **Parents**: with every weight positive one tight-arc pass over global memory after the distances are written back
  (:func:`~gpusp.solvers.deltastep.persistent.tight_tree`); with zero weights the host grows the tree
  (:meth:`~gpusp.solvers.deltastep.persistent.PersistentSSSP.host_tree`).

Limits: a GPU of compute capability 9.0 or newer; int32 distances (the shared words); n <=
:func:`~gpusp.solvers.rules.cluster_max_n` (two shared words a vertex besides the queues: 415,000 vertices with 16
blocks of 227 KiB at the default queue; NY and BAY fit, the larger DIMACS graphs do not). Negative weights are
refused. The simulator has no clusters: one block of ``cluster x per`` threads stands for the cluster there
(:mod:`gpusp.solvers.deltastep.dsmem`).

Complexity: the work of near-far (O(n + m) per pass over a bucket, re-expansions bounded by the light arcs inside a
bucket); time ~ rounds x (cluster barrier + one round's chain: the entry and the distance in shared memory, the arcs
from L2, an atomic min, an exchange and a counter add one hop away, the entry's stores) + splits x (an empty round, a
scan of chunk words and two barriers). One cluster uses 16 of the GPU's multiprocessors: a graph whose rounds hold
tens of thousands of vertices (the grid stand-in, the SNAP graphs) is faster on ``deltastep_gpu``'s whole grid.

Counters: ``iterations`` (rounds), ``buckets`` (splits), ``relaxations`` (arcs examined), ``launches``, ``delta``,
``lanes``, ``cluster`` (blocks), ``block``, ``queue``, ``shared_bytes`` (dynamic shared memory per block), ``owner``.
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
from ..common.launch import TARGET
from .spec import CLUSTER_DELTA_WIDTH, CLUSTER_HEAD_WORDS, CLUSTER_SHARED_BYTES, cluster_max_n, cluster_words

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


@functools.cache
def cluster_nearfar(block: int):
    """The kernel compiled for blocks of ``block`` threads, one block per multiprocessor (the register budget of a
    1,024-thread block is 64 a thread)."""
    return cuda.jit(**TARGET.launch_bounds(block, 1))(cluster_nearfar_py)


class ClusterDeltaStepSolver(ClusterSSSP):
    """deltastep_cluster: near-far delta-stepping in one thread-block cluster, state in distributed shared memory."""

    label = "deltastep_cluster"

    def __init__(self, graph, *, delta, lanes, cluster, block, queue, owner):
        super().__init__(graph, delta=delta, lanes=lanes, cluster=cluster, block=block, queue=queue, owner=owner)
        self.owner = owner
        if graph.dtype != np.int32:
            raise SolverError("deltastep_cluster keeps int32 distances in shared memory; this graph's path bound "
                              "needs int64 distances")
        self.ranks = int(cluster)
        self.chunk, self.queue, words = cluster_words(graph.n, self.ranks, queue)
        self.shared_bytes = 4 * words
        if self.shared_bytes > CLUSTER_SHARED_BYTES:
            raise SolverError(f"deltastep_cluster: {graph.n} vertices need {self.shared_bytes} bytes of shared memory "
                              f"per block in a cluster of {self.ranks} (2 words a vertex, 6 words per entry of queue "
                              f"{self.queue}); at "
                              f"most {CLUSTER_SHARED_BYTES}: n <= {cluster_max_n(self.ranks, self.queue)}")
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
                     np.int64(self.lanes), np.int64(not self.dg.nonpositive), np.int64(self.owner == "cyclic"),
                     np.int64(self.ranks.bit_length() - 1))

    def read_counters(self, ctl):
        return {"iterations": int(ctl[ROUNDS]), "buckets": int(ctl[SPLITS]), "relaxations": int(ctl[RELAX]),
                "delta": self.delta, "lanes": self.lanes, "cluster": self.ranks,
                "block": self.block, "queue": self.queue, "shared_bytes": self.shared_bytes,
                "owner": self.owner}


def compile_targets():
    """(label, kernel, signature) for the offline sm_90 compile gate, at the default block and the largest."""
    i32 = "int32[::1]"
    sig = (f"void({i32}, {i32}, {i32}, {i32}, {i32}, int64[::1], int64[::1], int32[:, :, ::1], int32[:, ::1], int64, "
           "int64, int64, int64, int64, int32, int64, int64, int64, int64)")
    return [(f"cluster_nearfar[{b}]", cluster_nearfar(b), sig) for b in (1024, 512)]
