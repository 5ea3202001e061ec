"""``deltastep_clusterasync``: near-far delta-stepping without rounds inside one thread-block cluster (Hopper, sm_90).
A vertex lowered below the threshold is marked in its owner block's shared-memory bitmap and expanded as soon as a
polling thread of that block finds the mark; a bucket (phase) ends when the blocks' counts of attempts and settled work
balance, which proves the cluster quiet. The kernel is :func:`cluster_wave_py`, compiled per block size;
:class:`ClusterAsyncSolver` is the host side. Design, the termination proof and limits: docs/solvers/deltastep.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from .dsmem import (WARP_WIDTH, ClusterSSSP, atomic_add_own, atomic_min, atomic_min_own, atomic_or, atomic_or_own,
                      cluster_min, cluster_sync, exchange_own, load, load_own, low_bit, pause, place, store_of,
                      store_own, store_word, total_begin, total_end)
from .persistent import block_add
from ..common.gate import kernel
from ..common.launch import TARGET
from .spec import CLUSTERASYNC_DELTA_WIDTH, CLUSTERASYNC_HEAD_WORDS, clusterasync_limit, clusterasync_words

# per-block words ahead of the distances: attempts, settled work, phases ended (set by block 0's warp 0), the block's
# and the cluster's smallest waiting distance (two slots each, by split parity)
ATTEMPTS, SETTLED, ENDED, BMIN, CMIN = 0, 1, 2, 3, 5
HEAD = CLUSTERASYNC_HEAD_WORDS
EMPTY = 0x7FFFFFFF  # no waiting distance
ESCAPE = 255  # out-degree byte: read the arc range from the offsets
ARCS = 4  # arcs of one vertex in flight at once
TOP_BIT = -(2**31)
# ctl (global int64): phases, splits, arcs examined, vertices expanded
PHASES, SPLITS, RELAX, EXPANDED = 0, 1, 2, 3
CTL_SIZE = 4


@cuda.jit(device=True)
def _mask(b):
    """Bit b of an int32 word."""
    if b == 31:
        return numba.int32(TOP_BIT)
    return numba.int32(1 << b)


def home_of(v, shift, sshift):
    """(the rank that keeps vertex v, v's index there): stripes of 2^sshift consecutive ids dealt out to the 2^shift
    ranks in turn. Host (NumPy arrays) and device alike."""
    return (v >> sshift) & ((1 << shift) - 1), ((v >> (sshift + shift)) << sshift) | (v & ((1 << sshift) - 1))


_home = cuda.jit(device=True)(home_of)


def vertex_of(rank, i, shift, sshift):
    """The vertex at index i of ``rank`` (the inverse of :func:`home_of`; past n in the last stripes' padding). Host
    (NumPy arrays) and device alike."""
    return ((i >> sshift) << (sshift + shift)) | (rank << sshift) | (i & ((1 << sshift) - 1))


_vertex = cuda.jit(device=True)(vertex_of)


@cuda.jit(device=True)
def _arc_range(store, indptr, rank, i, gv, chunk):
    """(first arc, out-degree) of vertex i of ``rank`` (global id gv): its packed word, or the offsets past it."""
    info = numba.int64(load_own(store, rank, HEAD + chunk + i)) & 0xFFFFFFFF
    lo = info >> 8
    deg = info & 255
    if deg == ESCAPE:
        lo = numba.int64(indptr[gv])
        deg = indptr[gv + 1] - lo
    return lo, deg


@cuda.jit(device=True)
def _load_step(arcs, e, end, du, homes, heads, cands):
    """Arcs e .. e + ARCS - 1 (those before ``end``): each head's block and index there, and the candidate distance
    through it from a tail at ``du``."""
    for k in range(ARCS):
        if e + k < end:
            a = arcs[e + k]
            homes[k] = numba.int32((a >> 24) & 0xFF)
            heads[k] = numba.int32(a & 0xFFFFFF)
            cands[k] = numba.int32(du + (a >> 32))


@cuda.jit(device=True)
def _expand(store, indptr, arcs, rank, i, chunk, shift, sshift, wshift, threshold, zero):
    """Expand vertex i of ``rank``: every arc's head lowered by an atomic min on its owner, each head lowered below the
    threshold marked there; the block's attempts and settled work counted. Returns the arcs examined.

    Each step takes four arcs and issues each kind of operation for all four before it uses a result, so a step
    costs one round trip of each kind, not four."""
    du = load_own(store, rank, HEAD + i)
    lo, deg = _arc_range(store, indptr, rank, i, _vertex(rank, i, shift, sshift), chunk)
    words_mask = (1 << wshift) - 1
    bits_at = HEAD + 2 * chunk
    homes = cuda.local.array(ARCS, numba.int32)
    heads = cuda.local.array(ARCS, numba.int32)
    cands = cuda.local.array(ARCS, numba.int32)
    olds = cuda.local.array(ARCS, numba.int32)
    marks = cuda.local.array(ARCS, numba.int32)
    end = lo + deg
    e = lo
    _load_step(arcs, e, end, du, homes, heads, cands)
    # counted after the first loads go out (their latency hides the add's); 0, but the ors wait for the add
    gate = atomic_add_own(store, rank, ATTEMPTS, deg) & zero
    fresh = 0
    while e < end:
        for k in range(ARCS):
            if e + k < end:
                if homes[k] == rank:  # the block's own word: a shared-memory atomic, no hop
                    olds[k] = atomic_min_own(store, rank, HEAD + heads[k], cands[k])
                else:
                    olds[k] = atomic_min(store, homes[k], HEAD + heads[k], cands[k])
        for k in range(ARCS):
            marks[k] = 0
            if e + k < end and cands[k] < olds[k] and cands[k] < threshold:
                hl = heads[k]
                marks[k] = _mask(hl >> wshift)
                if homes[k] == rank:
                    olds[k] = atomic_or_own(store, rank, bits_at + (hl & words_mask), marks[k] | gate)
                else:
                    olds[k] = atomic_or(store, homes[k], bits_at + (hl & words_mask), marks[k] | gate)
        for k in range(ARCS):
            if marks[k] != 0 and olds[k] & marks[k] == 0:
                fresh += 1  # atomic or above: the first to set the bit owes the head's expansion
        e += ARCS
        _load_step(arcs, e, end, du, homes, heads, cands)
    atomic_add_own(store, rank, SETTLED, 1 + deg - fresh)
    return deg


@cuda.jit(device=True)
def _parents(store, indptr, arcs, parent, rank, lt, per, chunk, n, shift, sshift, inf):
    """Parents from the final distances, every weight positive: each block walks its own vertices' arcs, four at a
    time, reading the heads' distances from their blocks' shared memory; a tight arc from a reached tail is a tree arc
    (any of a head's tight arcs will do, so its writers race benignly)."""
    packed = cuda.local.array(ARCS, numba.int64)
    dists = cuda.local.array(ARCS, numba.int32)
    i = lt
    while i < chunk:
        gv = _vertex(rank, i, shift, sshift)
        du = load_own(store, rank, HEAD + i)
        if gv < n and du != inf:
            lo, deg = _arc_range(store, indptr, rank, i, gv, chunk)
            e = lo
            while e < lo + deg:
                for k in range(ARCS):  # the arcs' loads, then their heads' distances, then the checks: one round
                    if e + k < lo + deg:  # trip of each per four arcs
                        packed[k] = arcs[e + k]
                for k in range(ARCS):
                    if e + k < lo + deg:
                        home = (packed[k] >> 24) & 0xFF
                        hl = packed[k] & 0xFFFFFF
                        dists[k] = load_own(store, rank, HEAD + hl) if home == rank else load(store, home, HEAD + hl)
                for k in range(ARCS):
                    if e + k < lo + deg and du + (packed[k] >> 32) == dists[k]:
                        head = _vertex((packed[k] >> 24) & 0xFF, packed[k] & 0xFFFFFF, shift, sshift)
                        if head != gv:
                            parent[head] = gv  # benign race: every writer holds a tight arc
                e += ARCS
        i += per


@cuda.jit(device=True)
def _mark_range(store, rank, lt, per, chunk, wshift, inf, low, high):
    """Mark the block's vertices with distance in [low, high); count them as attempts. Returns the block's smallest
    distance at or above ``low`` (EMPTY: none)."""
    best = EMPTY
    marked = 0
    i = lt
    while i < chunk:
        d = load_own(store, rank, HEAD + i)
        if low <= d < inf:
            best = min(best, d)
            if d < high:
                atomic_or_own(store, rank, HEAD + 2 * chunk + (i & ((1 << wshift) - 1)), _mask(i >> wshift))
                marked += 1
        i += per
    if marked:
        atomic_add_own(store, rank, ATTEMPTS, marked)
    return best


def cluster_wave_py(indptr, arcs, ranges, dist, parent, ctl, srcbuf, sim_store, n, chunk, ranks, shift,
                    sshift, wshift, delta, inf, tree, zero):
    """One cluster: reset, phases of asynchronous expansion and splits, distances written back, then parents."""
    store = store_of(sim_store)
    rank, lt, per = place(store)
    words = 1 << wshift
    bits_at = HEAD + 2 * chunk
    i = lt
    while i < chunk:
        store_own(store, rank, HEAD + i, inf)
        store_own(store, rank, HEAD + chunk + i, ranges[rank * chunk + i])
        gv = _vertex(rank, i, shift, sshift)
        if gv < n:
            parent[gv] = -1
        i += per
    i = lt
    while i < words:
        store_own(store, rank, bits_at + i, 0)
        i += per
    i = lt
    while i < HEAD:
        store_own(store, rank, i, EMPTY if i >= BMIN else 0)
        i += per
    if rank == 0 and lt == 0:
        ctl[RELAX] = 0
        ctl[EXPANDED] = 0
    cluster_sync()  # barrier: every block's words are reset before the source is marked
    source = srcbuf[0]  # host memory mapped into the device: each trial's source without a new launch setup
    home, sl = _home(source, shift, sshift)
    if lt == 0 and rank == home:
        store_own(store, rank, HEAD + sl, 0)
        atomic_or_own(store, rank, bits_at + (sl & (words - 1)), _mask(sl >> wshift))
        atomic_add_own(store, rank, ATTEMPTS, 1)
    cluster_sync()  # barrier: the source is marked and counted before anyone polls

    detector = rank == 0 and lt < WARP_WIDTH  # warp 0 of block 0
    pairs = (words + 2 * per - 1) // (2 * per)
    threshold = delta
    epoch = 0
    relaxed = 0
    expanded = 0
    while True:
        while True:  # phase: expand what is marked until the cluster is quiet
            for pair in range(pairs):
                # take the thread's two words first, then expand their vertices in one loop: the lanes of a warp
                # that found work expand together instead of one word's finds after another's
                j = lt + 2 * per * pair
                todo = numba.int64(0)
                if j < words and load_own(store, rank, bits_at + j) != 0:
                    todo = numba.int64(exchange_own(store, rank, bits_at + j, 0)) & 0xFFFFFFFF
                if j + per < words and load_own(store, rank, bits_at + j + per) != 0:
                    todo |= (numba.int64(exchange_own(store, rank, bits_at + j + per, 0)) & 0xFFFFFFFF) << 32
                while todo != 0:
                    b = low_bit(todo)
                    todo &= todo - 1
                    i = ((b & 31) << wshift) | (j + per * (b >> 5))
                    relaxed += _expand(store, indptr, arcs, rank, i, chunk, shift, sshift, wshift, threshold, zero)
                    expanded += 1
            if detector:
                # settled first, then attempts: equal sums prove the cluster quiet (docs/solvers/deltastep.md)
                settled = total_end(total_begin(store, SETTLED, ranks))
                attempts = total_end(total_begin(store, ATTEMPTS, ranks))
                if settled == attempts:
                    r = lt
                    while r < ranks:
                        store_word(store, r, ENDED, epoch + 1)
                        r += WARP_WIDTH
                    break
            elif load_own(store, rank, ENDED) > epoch:
                break
            pause()
        cluster_sync()  # barrier: the phase is over everywhere before the split reads distances
        if lt == 0:
            store_own(store, rank, BMIN + (epoch + 1) % 2, EMPTY)  # used two splits ago, read before since
            if rank == 0:
                store_own(store, 0, CMIN + (epoch + 1) % 2, EMPTY)
        best = _mark_range(store, rank, lt, per, chunk, wshift, inf, threshold, threshold + delta)
        # its barriers also complete the split's marks and their counts
        low = cluster_min(store, rank, lt, best, BMIN + epoch % 2, CMIN + epoch % 2, EMPTY)
        if low == EMPTY:
            break
        if low >= threshold + delta:  # an empty bucket: jump to the one holding the smallest waiting distance
            threshold = (low // delta + 1) * delta
            _mark_range(store, rank, lt, per, chunk, wshift, inf, low, threshold)
            cluster_sync()  # barrier: the jump's marks are counted before anyone polls
        else:
            threshold += delta
        epoch += 1

    i = lt
    while i < chunk:
        gv = _vertex(rank, i, shift, sshift)
        if gv < n:
            dist[gv] = load_own(store, rank, HEAD + i)
        i += per
    block_add(ctl, RELAX, relaxed)
    block_add(ctl, EXPANDED, expanded)
    if rank == 0 and lt == 0:
        ctl[PHASES] = epoch + 1
        ctl[SPLITS] = epoch
    if tree:
        _parents(store, indptr, arcs, parent, rank, lt, per, chunk, n, shift, sshift, inf)
    cluster_sync()  # barrier: no block leaves while another reads its shared memory


@kernel("void(int32[::1], int64[::1], int32[::1], int32[::1], int32[::1], int64[::1], int64[::1], int32[:, ::1], "
        "int64, int64, int64, int64, int64, int64, int64, int32, int64, int32)",
        cases=[{"block": 1024}, {"block": 512}])
@functools.cache
def cluster_wave(block: int):
    """The kernel compiled for blocks of ``block`` threads, one block per multiprocessor."""
    return cuda.jit(**TARGET.launch_bounds(block, 1))(cluster_wave_py)


class ClusterAsyncSolver(ClusterSSSP):
    """deltastep_clusterasync: near-far phases without rounds in one thread-block cluster, state in distributed
    shared memory."""

    label = "deltastep_clusterasync"

    def __init__(self, graph, *, delta, stripe, cluster, block, paths):
        super().__init__(graph, delta=delta, stripe=stripe, cluster=cluster, block=block, paths=paths)
        reason = clusterasync_limit(graph.n, graph.dtype.itemsize, {"cluster": cluster, "stripe": stripe})
        if reason:
            raise SolverError(reason)
        self.ranks = int(cluster)
        self.stripe = int(stripe)
        self.chunk, self.wshift, words = clusterasync_words(graph.n, self.ranks, self.stripe)
        self.shared_bytes = 4 * words
        self.delta = delta or graph.default_delta(CLUSTERASYNC_DELTA_WIDTH)
        self.block = int(block)
        # the simulator runs every rank in one block: a few threads per rank keep it fast
        self.per = TARGET.threads(self.block, 4)
        self.kernel = cluster_wave(self.block)

    def upload(self):
        n = self.graph.n
        self.upload_arrays(np.int32)
        g = self.graph
        # an arc as one 8-byte word: weight << 32 | the head's block << 24 | its index there (one load, one cache line
        # for a vertex's arcs, and the head's place without arithmetic on the chain)
        sshift, shift = self.stripe.bit_length() - 1, self.ranks.bit_length() - 1
        home, local = home_of(g.indices.astype(np.int64), shift, sshift)
        self.d_arcs = cuda.to_device((g.weights.astype(np.int64) << 32) | (home << 24) | local)
        # each block's packed arc ranges in the order of its shared words, copied in by every trial
        gv = vertex_of(np.arange(self.ranks)[:, None], np.arange(self.chunk)[None, :], shift, sshift).ravel()
        lo = g.indptr[np.minimum(gv, g.n)].astype(np.int64)
        deg = g.indptr[np.minimum(gv + 1, g.n)] - lo
        packed = (gv < g.n) & (deg < ESCAPE) & (lo < (1 << 23))
        self.d_ranges = cuda.to_device(np.where(packed, (lo << 8) | deg, ESCAPE).astype(np.int32))
        self.d_ctl = cuda.device_array(CTL_SIZE, dtype=np.int64)
        self.upload_source()
        shape = (self.ranks, self.shared_bytes // 4) if TARGET.simulator else (1, 1)
        self.d_store = cuda.device_array(shape, dtype=np.int32)  # the simulator's stand-in for shared memory
        self.args = (self.dg.indptr, self.d_arcs, self.d_ranges, self.d_dist, self.d_parent, self.d_ctl,
                     self.d_source, self.d_store, np.int64(n), np.int64(self.chunk), np.int64(self.ranks),
                     np.int64(shift), np.int64(sshift), np.int64(self.wshift), np.int64(self.delta),
                     np.int32(self.graph.inf), self.tree_flag(), np.int32(0))

    def read_counters(self, ctl):
        return {"iterations": int(ctl[PHASES]), "buckets": int(ctl[SPLITS]), "relaxations": int(ctl[RELAX]),
                "expansions": int(ctl[EXPANDED]), "delta": self.delta, "stripe": self.stripe,
                "cluster": self.ranks, "block": self.block, "shared_bytes": self.shared_bytes}

