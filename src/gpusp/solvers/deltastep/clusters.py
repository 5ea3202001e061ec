"""``deltastep_clusters``: clusterasync's phases over several thread-block clusters at once. The graph is cut into
parts, one per cluster; a cluster keeps its part as clusterasync keeps its graph (each block a stripe-dealt share in
its shared memory, arcs between the cluster's blocks as distributed-shared-memory atomics), and an arc into another
cluster goes through global memory as in ``deltastep_pieces`` (a global word a vertex, an inbox a block). The last
warp of each cluster's first block manages the cluster: it grants its blocks' inbox entries and publishes the cluster's
sends, receipts and quiet state, from which block 0's manager detects the end of a phase. The kernel is
:func:`clusters_wave_py`; :class:`ClustersSolver` is the host side. Design, launch and termination proof:
docs/solvers/deltastep.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...data.graph import Graph
from ...errors import SolverError
from ..common.gate import kernel
from ..common.launch import TARGET, CoresidentClusterLaunch
from .clusterasync import (
    ATTEMPTS,
    BMIN,
    EMPTY,
    ENDED,
    HEAD,
    SETTLED,
    _mark_range,
    _mask,
    home_of,
)
from .dsmem import (
    WARP_WIDTH,
    atomic_add,
    atomic_add_own,
    atomic_min_own,
    atomic_or_own,
    cluster_sync,
    load,
    load_own,
    pause,
    peer,
    store_of,
    store_own,
    store_word,
    total_end,
)
from .persistent import tight_tree
from .pieces import (
    AVAIL,
    ENDED_AT,
    GMIN,
    LINE,
    PIECE_LINES,
    QUIET,
    SENT,
    STATE,
    TAIL,
    PiecesSolver,
    _grid_quiet,
    _read,
    _take,
    _wake,
    expand_for,
    place,
    poll_for,
    reset_block,
    write_back,
)
from .spec import (
    CLUSTERS_RCM_CUT,
    PIECES_DELTA_WIDTH,
    clusters_count,
    clusters_limit,
    clusters_words,
)

GRANTED = QUIET + 1  # the block's tail word after pieces': inbox entries granted to it this trial (by its manager)
_poll = poll_for(expand_for(True))


@cuda.jit(device=True)
def _grid_barrier(ctl, lt, bar_at, blocks):
    """Every block of the grid arrives before any goes on, with memory order (all resident at once): arrivals
    counted in ``ctl[bar_at]`` (back to 0 by the last), the generation ``ctl[bar_at + LINE]`` raised by the last and
    awaited by the others, so no word needs a reset between barriers or trials."""
    cuda.syncthreads()  # barrier: the block's work is done before its thread 0 arrives
    if lt == 0:
        gen = _read(ctl, bar_at + LINE)
        cuda.threadfence()  # fence: the block's writes and the generation's read before the arrival
        if cuda.atomic.add(ctl, bar_at, 1) == blocks - 1:  # atomic: the last to arrive opens the barrier
            cuda.atomic.exch(ctl, bar_at, 0)  # atomic: nobody arrives again before the generation moves on
            cuda.threadfence()  # fence: the count is back to 0 before anyone passes
            cuda.atomic.add(ctl, bar_at + LINE, 1)  # atomic: into L2, where the others poll it
        else:
            while _read(ctl, bar_at + LINE) == gen:
                pause()
        cuda.threadfence()  # fence: what the others wrote before arriving is seen after the barrier
    cuda.syncthreads()  # barrier: the block's threads go on together


@cuda.jit(device=True)
def _cluster_sum(store, first, ranks, lt, word):
    """The sum of ``word`` over the cluster's blocks, in every lane of the calling warp (int32)."""
    v = numba.int32(0)
    r = lt
    while r < ranks:
        v += numba.int32(load(store, peer(first, first + r), word))
        r += WARP_WIDTH
    return total_end(v)


@cuda.jit(device=True)
def _manage(store, ctl, first, ranks, lane, tail_at):
    """The managing warp (the last of the cluster's first block; ``lane``: its lane): grant each block's new inbox
    entries (the cluster's state says busy first; the entries are counted as the block's attempts, then as grants),
    or, with none new anywhere, publish the cluster quiet with its sends and receipts once its attempts and settled work
    balance (settled read first)."""
    news = 0
    r = lane
    while r < ranks:
        b = first + r
        row = peer(first, b)
        tail = numba.int32(_read(ctl, PIECE_LINES + LINE * b + TAIL))
        seen = load(store, row, tail_at + GRANTED)
        if tail > seen:
            _wake(store, ctl, first, tail_at)
            atomic_add(store, row, ATTEMPTS, tail - seen)
            cuda.threadfence()  # fence: the attempts are counted before a taker sees the grant
            store_word(store, row, tail_at + GRANTED, tail)
            atomic_add(store, row, tail_at + AVAIL, tail - seen)
            news += 1
        r += WARP_WIDTH
    if total_end(news) != 0:
        return
    settled = _cluster_sum(store, first, ranks, lane, SETTLED)
    cuda.threadfence()  # fence: settled first, then attempts (both only grow): equal proves the cluster quiet
    if settled == _cluster_sum(store, first, ranks, lane, ATTEMPTS):
        cuda.threadfence()  # fence: the sends of the settled expansions are read after the settles
        sent = numba.int64(_cluster_sum(store, first, ranks, lane, tail_at + SENT))
        recv = numba.int64(_cluster_sum(store, first, ranks, lane, tail_at + GRANTED))
        if lane == 0 and load_own(store, first, tail_at + QUIET) == 0:
            cuda.atomic.exch(ctl, PIECE_LINES + LINE * first + STATE, (sent << 32) | (recv << 1))  # atomic: into L2
            store_own(store, first, tail_at + QUIET, 1)


@cuda.jit(device=True)
def _split_sync(store, ctl, b, first, lt, tail_at, value, slot, bar_at, blocks):
    """After a split's marks: the block's smallest waiting distance ``value`` into the grid's (``slot`` >= 0, holding
    EMPTY), every cluster busy (its manager publishes it quiet again once its counts balance), then a grid barrier.
    Returns the grid's smallest waiting distance (EMPTY: none, or ``slot`` < 0)."""
    if slot >= 0 and value < EMPTY:
        atomic_min_own(store, b, BMIN + slot, value)
    cuda.syncthreads()  # barrier: the block's minimum is complete
    if lt == 0:
        if slot >= 0:
            low = load_own(store, b, BMIN + slot)
            if low < EMPTY:
                cuda.atomic.min(ctl, GMIN + slot, low)  # atomic: every block at once
        if b == first:
            _wake(store, ctl, b, tail_at)
    _grid_barrier(ctl, lt, bar_at, blocks)
    return _read(ctl, GMIN + slot) if slot >= 0 else EMPTY


def clusters_wave_py(indptr, indices, weights, arcs, ranges, dist, parent, remote, inbox, ctl, srcbuf, sim_store, n,
                     chunk, blocks, ranks, wshift, cshift, delta, inf, tree, zero):
    """The grid of clusters: reset, phases of asynchronous expansion (DSMEM inside a cluster, inboxes between
    clusters) and splits, distances written back, then parents."""
    store = store_of(sim_store)
    b, lt, per = place(store)
    first = b - b % ranks  # the cluster's first block, its manager
    words = 1 << wshift
    bits_at = HEAD + 2 * chunk
    tail_at = bits_at + words
    bar_at = PIECE_LINES + LINE * blocks
    vfirst = b * chunk
    base = numba.int64(indptr[min(vfirst, n)])  # the block's first arc: its packed ranges count from here
    # QUIET 0: every cluster starts busy; STATE 1: busy, nothing sent or received (read for first blocks only)
    reset_block(store, ranges, parent, remote, inbox, ctl, b, lt, per, n, chunk, wshift, cshift, inf, GRANTED + 1, 0, 1)
    _grid_barrier(ctl, lt, bar_at, blocks)  # every block's words are reset before the source is marked
    source = srcbuf[0]  # host memory mapped into the device: each trial's source without a new launch setup
    if lt == 0 and b == source // chunk:
        sl = source - vfirst
        store_own(store, b, HEAD + sl, 0)
        atomic_or_own(store, b, bits_at + (sl & (words - 1)), _mask(sl >> wshift))
        atomic_add_own(store, b, ATTEMPTS, 1)
    _grid_barrier(ctl, lt, bar_at, blocks)  # the source is marked before anyone polls or detects

    # each block's last warp polls no bitmap word: in the cluster's first block it manages the cluster (in block 0 it
    # also detects the grid's quiet), so that its reads of L2 and fences never hold a polling warp
    workers = per - WARP_WIDTH
    lane = lt - workers  # the last warp's lanes 0 .. WARP_WIDTH - 1 (negative: a polling thread)
    manager = b == first and lane >= 0
    detector = b == 0 and lane >= 0
    pairs = (words + 2 * workers - 1) // (2 * workers)
    threshold = delta
    epoch = 0
    relaxed = 0
    expanded = 0
    cross = 0
    pushes = 0
    while True:
        while True:  # phase: expand what is marked, take what the inbox holds, until the grid is quiet
            if lane < 0:
                relaxed, cross, pushes, expanded = _poll(store, indptr, arcs, remote, inbox, ctl, b, first, ranks, lt,
                                                         workers, pairs, chunk, wshift, cshift, tail_at, base,
                                                         threshold, zero, relaxed, cross, pushes, expanded)
                _take(store, remote, inbox, b, chunk, wshift, cshift, threshold, tail_at)
            if manager:
                _manage(store, ctl, first, ranks, lane, tail_at)
                ended = 0
                # a busy cluster cannot see the phase end (pieces' kernel): no end flag's read, no detection
                quiet = total_end(load_own(store, first, tail_at + QUIET)) != 0
                if detector and quiet and _grid_quiet(ctl, blocks // ranks, lane, ranks):
                    ended = 1
                    if lane == 0:
                        cuda.atomic.exch(ctl, ENDED_AT, epoch + 1)  # atomic: into L2, where the managers poll it
                elif lane == 0 and quiet and _read(ctl, ENDED_AT) > epoch:
                    ended = 1
                if total_end(ended) != 0:  # the whole warp: its lanes decide together
                    r = lane
                    while r < ranks:
                        store_word(store, peer(first, first + r), ENDED, epoch + 1)
                        r += WARP_WIDTH
                    break
            elif load_own(store, b, ENDED) > epoch:
                break
            pause()
        _grid_barrier(ctl, lt, bar_at, blocks)  # the phase is over everywhere before the split reads distances
        parity = epoch % 2
        if lt == 0:
            store_own(store, b, BMIN + 1 - parity, EMPTY)  # used two splits ago, read before since
            if b == 0:
                cuda.atomic.exch(ctl, GMIN + 1 - parity, EMPTY)  # atomic: into L2, where the blocks read it
        best = _mark_range(store, b, lt, per, chunk, wshift, inf, threshold, threshold + delta)
        low = _split_sync(store, ctl, b, first, lt, tail_at, best, parity, bar_at, blocks)
        if low == EMPTY:
            break
        if low >= threshold + delta:  # an empty bucket: jump to the one holding the smallest waiting distance
            threshold = (low // delta + 1) * delta
            _mark_range(store, b, lt, per, chunk, wshift, inf, low, threshold)
            _split_sync(store, ctl, b, first, lt, tail_at, EMPTY, -1, bar_at, blocks)
        else:
            threshold += delta
        epoch += 1

    write_back(store, dist, ctl, b, lt, per, n, chunk, epoch, relaxed, expanded, cross, pushes)
    if tree:
        _grid_barrier(ctl, lt, bar_at, blocks)  # every distance is in global memory before the tight-arc pass
        tight_tree(indptr, indices, weights, dist, parent, inf, b * per + lt, blocks * per)
    cluster_sync()  # barrier: no block leaves while another of its cluster may still reach its shared memory


@kernel("void(int32[::1], int32[::1], int32[::1], int64[::1], int32[::1], int32[::1], int32[::1], int64[::1], "
        "int32[::1], int64[::1], int64[::1], int32[:, ::1], int64, int64, int64, int64, int64, int64, int64, int32, "
        "int64, int32)", cases=[{"block": 1024}, {"block": 512}])
@functools.cache
def clusters_wave(block: int):
    """The kernel compiled for blocks of ``block`` threads, one block per multiprocessor."""
    return cuda.jit(**TARGET.launch_bounds(block, 1))(clusters_wave_py)


def cluster_positions(graph: Graph, clusters: int, order: str) -> tuple[np.ndarray, str]:
    """(each vertex's position in the order cut into ``clusters`` runs, the order used): the ids themselves, or
    SciPy's reverse Cuthill-McKee order ('rcm'; 'auto': rcm when the ids' runs cut more than CLUSTERS_RCM_CUT of the
    arcs)."""
    n = graph.n
    ids = np.arange(n, dtype=np.int64)
    if order == "auto":
        per = -(-n // clusters)
        tails = np.repeat(ids // per, np.diff(graph.indptr))
        cut = float(np.mean(tails != graph.indices // per)) if graph.m else 0.0
        order = "rcm" if cut > CLUSTERS_RCM_CUT else "ids"
    if order == "ids":
        return ids, order
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    shape = csr_matrix((np.ones(graph.m, np.int8), graph.indices, graph.indptr), shape=(n, n))
    position = np.empty(n, np.int64)
    position[reverse_cuthill_mckee(shape, symmetric_mode=False)] = ids
    return position, order


def cluster_ids(position: np.ndarray, clusters: int, ranks: int, stripe: int, chunk: int) -> np.ndarray:
    """The kernel's id of every vertex: its part (a run of ceil(n / clusters) positions) picks the cluster, its
    place in the part picks block and index as clusterasync deals its graph (stripes of ``stripe`` to the ``ranks``
    blocks in turn); block g's vertices are ids g x chunk onwards, the ids a block does not fill isolated padding."""
    per = -(-position.size // clusters) if position.size else 1
    part, u = position // per, position % per
    rank, index = home_of(u, ranks.bit_length() - 1, stripe.bit_length() - 1)
    return (part * ranks + rank) * chunk + index


class ClustersSolver(PiecesSolver):
    """deltastep_clusters: clusterasync's clusters over parts of the graph, with global-memory inboxes between
    them."""

    label = "deltastep_clusters"

    def __init__(self, graph, *, delta, clusters, cluster, block, stripe, order, paths):
        ranks, stripe = int(cluster), int(stripe)
        reason = clusters_limit(graph.n, graph.dtype.itemsize, {"clusters": clusters, "cluster": ranks,
                                                                "stripe": stripe})
        if reason:
            raise SolverError(reason)
        count = clusters_count(graph.n, clusters, ranks, stripe)
        self.chunk, self.wshift, words = clusters_words(graph.n, count, ranks, stripe)
        position, self.order = cluster_positions(graph, count, order)
        self.new_id = cluster_ids(position, count, ranks, stripe, self.chunk)
        given, graph = graph, self.renumbered(graph, count * ranks * self.chunk)
        super(PiecesSolver, self).__init__(graph, delta=delta, clusters=clusters, cluster=cluster, block=block,
                                          stripe=stripe, order=order, paths=paths)
        self.clusters, self.per_cluster, self.ranks, self.stripe = count, ranks, count * ranks, stripe
        self.cshift = max(0, (self.chunk - 1).bit_length())  # a block's inbox holds its vertices once each
        self.shared_bytes = 4 * words
        self.delta = delta or given.default_delta(PIECES_DELTA_WIDTH)
        self.block = int(block)
        self.per = TARGET.threads(self.block, 2)  # the simulator runs every block in one: few threads each
        self.kernel = clusters_wave(self.block)

    def make_launcher(self):
        cc = tuple(cuda.get_current_device().compute_capability)
        if cc < (9, 0):
            raise SolverError(f"{self.label} needs thread-block clusters (compute capability 9.0 or newer); this "
                              f"GPU has {cc[0]}.{cc[1]}")
        return CoresidentClusterLaunch(self.kernel, clusters=self.clusters, cluster=self.per_cluster,
                                       block=self.block, sharedmem=self.shared_bytes)

    def control_words(self):
        """The blocks' lines and the grid barrier's two, zeroed once: the barrier's words are never reset."""
        return cuda.to_device(np.zeros(PIECE_LINES + LINE * (self.ranks + 2), dtype=np.int64))

    def scalar_args(self):
        g = self.graph
        return (np.int64(g.n), np.int64(self.chunk), np.int64(self.ranks), np.int64(self.per_cluster),
                np.int64(self.wshift), np.int64(self.cshift), np.int64(self.delta), np.int32(g.inf),
                self.tree_flag(), np.int32(0))

    def read_counters(self, ctl):
        counters = super().read_counters(ctl)
        del counters["grid"], counters["vertices_per_piece"]
        return {**counters, "clusters": self.clusters, "cluster": self.per_cluster, "vertices_per_block": self.chunk,
                "order": self.order}
