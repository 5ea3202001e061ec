"""``deltastep_pieces``: clusterasync's near-far phases without rounds past one cluster. The graph is cut into pieces
of consecutive ids, one per block of a cooperative grid; a block keeps its piece's distances, arc ranges and bitmap
of marked vertices in its shared memory and expands marks as clusterasync's block does. An arc into another piece
lowers the head's word in global memory and, when it was not queued already, queues the head in its piece's inbox; a
phase ends when the pieces' published counts of sends and receipts balance with every piece quiet, and buckets are
split between grid barriers. The kernel is :func:`pieces_wave_py`; :class:`PiecesSolver` is the host side. Design,
the termination proof and limits: docs/solvers/deltastep.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ... import device
from ...data.graph import Graph
from ...errors import SolverError
from ..common.gate import kernel
from ..common.launch import TARGET, CooperativeLaunch
from .clusterasync import ARCS, ATTEMPTS, BMIN, EMPTY, ENDED, ESCAPE, HEAD, SETTLED, _mark_range, _mask
from .dsmem import (
    WARP_WIDTH,
    ClusterSSSP,
    atomic_add_own,
    atomic_min,
    atomic_min_own,
    atomic_or,
    atomic_or_own,
    exchange_own,
    load_own,
    low_bit,
    pause,
    peer,
    store_of,
    store_own,
    total_end,
)
from .persistent import block_add, tight_tree
from .spec import PIECE_SHIFT, PIECES_DELTA_WIDTH, pieces_limit, pieces_words

# per-piece shared words after the bitmap: inbox entries granted and not yet claimed, entries claimed, entries sent
# to other pieces, whether the piece's published state says quiet
AVAIL, INHEAD, SENT, QUIET = range(4)
# ctl (global int64), a 128-byte line each for: the counters, the phase that ended, the grid's smallest waiting
# distance (two slots by split parity), and every piece's inbox tail and published state (sent << 32 | received << 1
# | busy), so that a word polled by many threads shares its line with no word others update
PHASES, SPLITS, RELAX, EXPANDED, PUSHES, CROSS = range(6)
LINE = 16
ENDED_AT, GMIN, PIECE_LINES = LINE, 2 * LINE, 3 * LINE
TAIL, STATE = 0, 1  # the words of a piece's line
LOCAL_MASK = (1 << PIECE_SHIFT) - 1
VACANT = -1  # an inbox slot with no entry
PENDING = 1  # the low bit of a global distance word: the vertex waits in its piece's inbox
CLEAR_PENDING = -2  # every bit but PENDING

if TARGET.simulator:
    from .dsmem import place  # one block of P x per threads simulates the P pieces as it does a cluster's ranks

    @cuda.jit(device=True)
    def grid_sync():
        cuda.syncthreads()  # barrier: the simulated pieces share one block

else:

    @cuda.jit(device=True)
    def place(store):
        """(piece, thread in the block, threads per block): a block per piece."""
        return numba.int64(cuda.blockIdx.x), numba.int64(cuda.threadIdx.x), numba.int64(cuda.blockDim.x)

    @cuda.jit(device=True)
    def grid_sync():
        cuda.cg.this_grid().sync()  # barrier: every block of the cooperative grid, with its memory operations


@cuda.jit(device=True)
def _read(ctl, i):
    """An atomic read of a global word (served by L2: a plain load could hit a stale L1 line)."""
    return cuda.atomic.add(ctl, i, 0)


@cuda.jit(device=True)
def _arc_range(store, indptr, rank, i, gv, chunk, base):
    """(first arc, out-degree) of vertex i of the piece (global id gv): its packed word, counted from the piece's
    first arc ``base``, or the offsets past it."""
    info = numba.int64(load_own(store, rank, HEAD + chunk + i)) & 0xFFFFFFFF
    lo = base + (info >> 8)
    deg = info & 255
    if deg == ESCAPE:
        lo = numba.int64(indptr[gv])
        deg = indptr[gv + 1] - lo
    return lo, deg


@cuda.jit(device=True)
def _push(inbox, ctl, piece, local, cshift):
    """Queue vertex ``local`` of ``piece`` in that piece's inbox."""
    k = cuda.atomic.add(ctl, PIECE_LINES + LINE * piece + TAIL, 1)  # atomic: a slot of the inbox
    slot = (piece << cshift) + (k & ((1 << cshift) - 1))
    while cuda.atomic.cas(inbox, slot, VACANT, numba.int32(local)) != VACANT:  # atomic: never over an entry
        pass  # the slot's entry of the previous lap is claimed but not yet taken out


def expand_for(clustered: bool):
    """The device function that expands vertex i of a block's piece (``clustered``: the blocks of a thread-block
    cluster share their pieces through distributed shared memory, ``deltastep_clusters``; else every other piece is
    remote, ``deltastep_pieces``, and the cluster branch is compiled out). A head in the block's own piece is lowered
    by a shared-memory atomic min and marked below the threshold, as clusterasync does; with ``clustered``, a head in
    another block of the cluster (global blocks ``first`` .. ``first + ranks - 1``) the same way one hop away; any
    other head by a global atomic min on its word, queued in its piece's inbox unless already queued. Counts attempts,
    settled work and sends. Returns (arcs examined, arcs through global memory, entries sent).

    Each step takes four arcs and issues each kind of operation for all four before it uses a result."""

    @cuda.jit(device=True)
    def load_step(arcs, e, end, du, rank, first, ranks, homes, heads, cands, near):
        """Arcs e .. e + ARCS - 1 (those before ``end``): each head's block, index there and kind, and the candidate
        distance through it from a tail at ``du``."""
        for k in range(ARCS):
            if e + k < end:
                a = arcs[e + k]
                homes[k] = numba.int32((a >> PIECE_SHIFT) & 0x1FFFF)
                heads[k] = numba.int32(a & LOCAL_MASK)
                cands[k] = numba.int32(du + (a >> 32))
                near[k] = 2
                if homes[k] == rank:
                    near[k] = 0
                elif clustered and homes[k] >= first and homes[k] < first + ranks:
                    near[k] = 1

    @cuda.jit(device=True)
    def expand(store, indptr, arcs, remote, inbox, ctl, rank, first, ranks, i, chunk, wshift, cshift, tail_at, base,
               threshold, zero):
        du = load_own(store, rank, HEAD + i)
        lo, deg = _arc_range(store, indptr, rank, i, rank * chunk + i, chunk, base)
        words_mask = (1 << wshift) - 1
        bits_at = HEAD + 2 * chunk
        homes = cuda.local.array(ARCS, numba.int32)
        heads = cuda.local.array(ARCS, numba.int32)
        cands = cuda.local.array(ARCS, numba.int32)
        olds = cuda.local.array(ARCS, numba.int64)
        marks = cuda.local.array(ARCS, numba.int32)
        near = cuda.local.array(ARCS, numba.int32)  # 0: the block's own piece, 1: the cluster's, 2: global memory
        end = lo + deg
        e = lo
        load_step(arcs, e, end, du, rank, first, ranks, homes, heads, cands, near)
        # counted after the first loads go out (their latency hides the add's; as clusterasync) and before any mark
        # this expansion makes: the ors wait for the add through ``gate`` (0)
        gate = atomic_add_own(store, rank, ATTEMPTS, deg) & zero
        fresh = 0
        cross = 0
        sent = 0
        while e < end:
            for k in range(ARCS):
                if e + k < end:
                    if near[k] == 0:  # the piece's own word: a shared-memory atomic
                        olds[k] = atomic_min_own(store, rank, HEAD + heads[k], cands[k])
                    elif clustered and near[k] == 1:  # another block of the cluster: one hop away
                        olds[k] = atomic_min(store, peer(first, homes[k]), HEAD + heads[k], cands[k])
                    else:
                        g = homes[k] * chunk + heads[k]
                        word = (numba.int64(cands[k]) << 1) | PENDING
                        olds[k] = word  # not lower: left alone
                        if word < remote[g]:  # a stale read is higher (the words only fall): no lower value is missed
                            olds[k] = cuda.atomic.min(remote, g, word)  # atomic: the old word says won and queued
            for k in range(ARCS):
                marks[k] = 0
                if e + k < end:
                    if near[k] < 2:
                        if cands[k] < olds[k] and cands[k] < threshold:
                            hl = heads[k]
                            marks[k] = _mask(hl >> wshift)
                            if near[k] == 0:
                                olds[k] = atomic_or_own(store, rank, bits_at + (hl & words_mask), marks[k] | gate)
                            elif clustered:
                                olds[k] = atomic_or(store, peer(first, homes[k]), bits_at + (hl & words_mask),
                                                    marks[k] | gate)
                    else:
                        cross += 1
                        if cands[k] < olds[k] >> 1 and olds[k] & PENDING == 0:  # lowered, and nobody queued it
                            cuda.threadfence()  # fence: the lowered word is visible before the entry announcing it
                            _push(inbox, ctl, homes[k], heads[k], cshift)
                            sent += 1
            for k in range(ARCS):
                if marks[k] != 0 and olds[k] & marks[k] == 0:
                    fresh += 1  # atomic or above: the first to set the bit owes the head's expansion
            e += ARCS
            load_step(arcs, e, end, du, rank, first, ranks, homes, heads, cands, near)
        if sent:  # an expansion that sent nothing has no count to order before its settle: no fence
            atomic_add_own(store, rank, tail_at + SENT, sent)
            if clustered:
                cuda.threadfence()  # fence: the sends are counted before the settle, for the manager in another block
            else:
                cuda.threadfence_block()  # fence: the sends are counted before the settle that may show quiet
        atomic_add_own(store, rank, SETTLED, 1 + deg - fresh)
        return deg, cross, sent

    return expand


def poll_for(expand):
    """The device function of one polling pass over a block's bitmap with ``expand`` (:func:`expand_for`'s): each
    thread takes its pairs of words (words ``lt + 2 x workers x pair`` and ``workers`` further) and expands their
    marked vertices. Returns the thread's running counts (arcs examined, arcs through global memory, entries sent,
    expansions) with the pass's added: the counts go in rather than the pass's alone coming back, which keeps the
    kernels' register use that of the loop written in place."""

    @cuda.jit(device=True)
    def poll(store, indptr, arcs, remote, inbox, ctl, rank, first, ranks, lt, workers, pairs, chunk, wshift, cshift,
             tail_at, base, threshold, zero, relaxed, cross, pushes, expanded):
        words = 1 << wshift
        bits_at = HEAD + 2 * chunk
        for pair in range(pairs):
            j = lt + 2 * workers * pair  # the thread's two words first, then their vertices in one loop
            todo = numba.int64(0)
            if j < words and load_own(store, rank, bits_at + j) != 0:
                todo = numba.int64(exchange_own(store, rank, bits_at + j, 0)) & 0xFFFFFFFF
            if j + workers < words and load_own(store, rank, bits_at + j + workers) != 0:
                todo |= (numba.int64(exchange_own(store, rank, bits_at + j + workers, 0)) & 0xFFFFFFFF) << 32
            while todo != 0:
                bit = low_bit(todo)
                todo &= todo - 1
                i = ((bit & 31) << wshift) | (j + workers * (bit >> 5))
                deg, out, sent = expand(store, indptr, arcs, remote, inbox, ctl, rank, first, ranks, i, chunk, wshift,
                                        cshift, tail_at, base, threshold, zero)
                relaxed += deg
                cross += out
                pushes += sent
                expanded += 1
        return relaxed, cross, pushes, expanded

    return poll


_poll = poll_for(expand_for(False))


@cuda.jit(device=True)
def _take(store, remote, inbox, rank, chunk, wshift, cshift, threshold, tail_at):
    """Claim granted inbox entries until none is left: each head's global word read with its pending bit cleared,
    its smallest candidate taken into the piece's distance and the head marked below the threshold. Returns the
    entries taken."""
    took = 0
    while load_own(store, rank, tail_at + AVAIL) > 0:
        if atomic_add_own(store, rank, tail_at + AVAIL, -1) <= 0:
            atomic_add_own(store, rank, tail_at + AVAIL, 1)  # another thread took the last grant: give it back
            break
        h = atomic_add_own(store, rank, tail_at + INHEAD, 1)
        slot = (rank << cshift) + (h & ((1 << cshift) - 1))
        x = cuda.atomic.exch(inbox, slot, VACANT)  # atomic: take the entry out, leave the slot free
        while x == VACANT:  # its sender holds the slot but has not written it yet
            x = cuda.atomic.exch(inbox, slot, VACANT)
        # atomic: from here a new lower candidate queues the head again, and this read sees every one before it
        d = numba.int32(cuda.atomic.and_(remote, rank * chunk + x, CLEAR_PENDING) >> 1)
        fresh = 0
        if d < atomic_min_own(store, rank, HEAD + x, d) and d < threshold:
            m = _mask(x >> wshift)
            if atomic_or_own(store, rank, HEAD + 2 * chunk + (x & ((1 << wshift) - 1)), m) & m == 0:
                fresh = 1  # the entry's attempt passes to the mark, settled by the head's expansion
        atomic_add_own(store, rank, SETTLED, 1 - fresh)
        took += 1
    return took


@cuda.jit(device=True)
def _wake(store, ctl, rank, tail_at):
    """One thread (the manager's lane 0, or thread 0 between phases): the piece's published state says busy (before
    the work that makes it busy can be seen)."""
    if load_own(store, rank, tail_at + QUIET) != 0:
        cuda.atomic.or_(ctl, PIECE_LINES + LINE * rank + STATE, 1)  # atomic: the detector reads the word from L2
        cuda.threadfence()  # fence: the busy bit is visible before anything the new work causes
        store_own(store, rank, tail_at + QUIET, 0)


@cuda.jit(device=True)
def _refresh(store, ctl, rank, tail_at, seen):
    """Lane 0 of a piece's manager (its last warp): grant the inbox's new entries (the state says busy first; the
    entries are counted as attempts and receipts before any is taken), or, with none new, publish quiet with the
    piece's sends and receipts once every attempt of the piece is settled. Returns the entries granted so far."""
    tail = numba.int32(_read(ctl, PIECE_LINES + LINE * rank + TAIL))
    if tail > seen:
        _wake(store, ctl, rank, tail_at)
        atomic_add_own(store, rank, ATTEMPTS, tail - seen)
        cuda.threadfence_block()  # fence: the attempts are counted before a taker sees the grant
        atomic_add_own(store, rank, tail_at + AVAIL, tail - seen)
        return tail
    if load_own(store, rank, tail_at + QUIET) == 0:
        settled = load_own(store, rank, SETTLED)
        cuda.threadfence_block()  # fence: settled first, then attempts (both only grow): equal proves the piece quiet
        if settled == load_own(store, rank, ATTEMPTS):
            cuda.threadfence_block()  # fence: the sends of the settled expansions are read after the settles
            sent = numba.int64(load_own(store, rank, tail_at + SENT))
            state = (sent << 32) | (numba.int64(seen) << 1)
            cuda.atomic.exch(ctl, PIECE_LINES + LINE * rank + STATE, state)  # atomic: into L2
            store_own(store, rank, tail_at + QUIET, 1)
    return seen


@cuda.jit(device=True)
def _wave(ctl, pieces, lt, stride):
    """One read of every piece's published state (the lines of pieces 0, stride, 2 x stride, ...) by the detecting
    warp: (busy pieces, sends, receipts), summed over the warp (int32: a trial's sends stay below 2^31)."""
    busy = numba.int32(0)
    sent = numba.int32(0)
    recv = numba.int32(0)
    r = lt
    while r < pieces:
        w = _read(ctl, PIECE_LINES + LINE * stride * r + STATE)
        busy += numba.int32(w & 1)
        sent += numba.int32(w >> 32)
        recv += numba.int32((w >> 1) & 0x7FFFFFFF)
        r += WARP_WIDTH
    return total_end(busy), total_end(sent), total_end(recv)


@cuda.jit(device=True)
def _grid_quiet(ctl, pieces, lt, stride):
    """Whether the grid is quiet: two reads of every piece's published state find each quiet and unchanged, and the
    sends equal the receipts (docs/solvers/deltastep.md). Every lane of the detecting warp gets the same answer."""
    busy, sent, recv = _wave(ctl, pieces, lt, stride)
    if busy != 0 or sent != recv:
        return False
    cuda.threadfence()  # fence: the first read of every state before the second
    busy2, sent2, recv2 = _wave(ctl, pieces, lt, stride)
    # a state only grows (busy sets a bit, quiet again brings more receipts): equal sums mean no state changed
    return busy2 == 0 and sent2 == sent and recv2 == recv


@cuda.jit(device=True)
def _split_sync(store, ctl, rank, lt, tail_at, value, slot):
    """After a split's marks: the piece's smallest waiting distance ``value`` into the grid's (``slot`` >= 0, holding
    EMPTY), the piece's state busy if it marked anything, then a grid barrier. Returns the grid's smallest waiting
    distance (EMPTY: none, or ``slot`` < 0)."""
    if slot >= 0 and value < EMPTY:
        atomic_min_own(store, rank, BMIN + slot, value)
    cuda.syncthreads()  # barrier: the piece's minimum and its marks' attempts are complete
    if lt == 0:
        if slot >= 0:
            b = load_own(store, rank, BMIN + slot)
            if b < EMPTY:
                cuda.atomic.min(ctl, GMIN + slot, b)  # atomic: every piece at once
        if load_own(store, rank, ATTEMPTS) != load_own(store, rank, SETTLED):
            _wake(store, ctl, rank, tail_at)
    grid_sync()  # barrier: every minimum and busy state is in global memory before anyone reads or detects
    return _read(ctl, GMIN + slot) if slot >= 0 else EMPTY


@cuda.jit(device=True)
def reset_block(store, ranges, parent, remote, inbox, ctl, rank, lt, per, n, chunk, wshift, cshift, inf, tails, quiet,
                state):
    """A block's reset at the kernel's start: its piece's distances (``inf``), arc ranges, parents and global words,
    its inbox, bitmap and head words, its first ``tails`` tail words (QUIET: ``quiet``, the others 0), its ctl line
    (published state ``state``) and, in block 0, the grid's counters, end flag and smallest waiting distances."""
    words = 1 << wshift
    bits_at = HEAD + 2 * chunk
    tail_at = bits_at + words
    first = rank * chunk
    i = lt
    while i < chunk:
        store_own(store, rank, HEAD + i, inf)
        store_own(store, rank, HEAD + chunk + i, ranges[first + i])
        if first + i < n:
            parent[first + i] = -1
            remote[first + i] = numba.int64(inf) << 1
        i += per
    i = lt
    while i < 1 << cshift:
        inbox[(rank << cshift) + i] = VACANT
        i += per
    i = lt
    while i < words:
        store_own(store, rank, bits_at + i, 0)
        i += per
    i = lt
    while i < HEAD:
        store_own(store, rank, i, EMPTY if i >= BMIN else 0)
        i += per
    i = lt
    while i < tails:
        store_own(store, rank, tail_at + i, quiet if i == QUIET else 0)
        i += per
    if lt == 0:
        ctl[PIECE_LINES + LINE * rank + TAIL] = 0
        ctl[PIECE_LINES + LINE * rank + STATE] = state
        if rank == 0:
            for c in range(CROSS + 1):
                ctl[c] = 0
            ctl[ENDED_AT] = 0
            ctl[GMIN] = EMPTY
            ctl[GMIN + 1] = EMPTY


@cuda.jit(device=True)
def write_back(store, dist, ctl, rank, lt, per, n, chunk, epoch, relaxed, expanded, cross, pushes):
    """At the kernel's end: the block's distances into ``dist``, its threads' counts into the grid's counters and, from
    block 0, the phases and splits of ``epoch`` + 1 phases."""
    first = rank * chunk
    i = lt
    while i < chunk:
        if first + i < n:
            dist[first + i] = load_own(store, rank, HEAD + i)
        i += per
    block_add(ctl, RELAX, relaxed)
    block_add(ctl, EXPANDED, expanded)
    block_add(ctl, CROSS, cross)
    block_add(ctl, PUSHES, pushes)
    if rank == 0 and lt == 0:
        ctl[PHASES] = epoch + 1
        ctl[SPLITS] = epoch


def pieces_wave_py(indptr, indices, weights, arcs, ranges, dist, parent, remote, inbox, ctl, srcbuf, sim_store, n,
                   chunk, pieces, wshift, cshift, delta, inf, tree, zero):
    """The grid: reset, phases of asynchronous expansion with inboxes between pieces and splits, distances written
    back, then parents."""
    store = store_of(sim_store)
    rank, lt, per = place(store)
    words = 1 << wshift
    bits_at = HEAD + 2 * chunk
    tail_at = bits_at + words
    first = rank * chunk
    base = numba.int64(indptr[min(first, n)])  # the piece's first arc: its packed ranges count from here
    # every piece starts quiet, nothing sent or received
    reset_block(store, ranges, parent, remote, inbox, ctl, rank, lt, per, n, chunk, wshift, cshift, inf, QUIET + 1, 1, 0)
    grid_sync()  # barrier: every piece's words are reset before the source is marked
    source = srcbuf[0]  # host memory mapped into the device: each trial's source without a new launch setup
    if lt == 0 and rank == source // chunk:
        sl = source - first
        store_own(store, rank, HEAD + sl, 0)
        atomic_or_own(store, rank, bits_at + (sl & (words - 1)), _mask(sl >> wshift))
        atomic_add_own(store, rank, ATTEMPTS, 1)
        _wake(store, ctl, rank, tail_at)
    grid_sync()  # barrier: the source is marked and its piece busy before anyone polls or detects

    # the block's last warp manages the piece (inbox grants, quiet state, the end flag; in block 0 the detection) and
    # polls no bitmap word, so that its reads of L2 never hold a polling warp; the others poll and expand
    workers = per - WARP_WIDTH
    lane = lt - workers  # the managing warp's lanes 0 .. WARP_WIDTH - 1 (negative: a polling thread)
    detector = rank == 0 and lane >= 0
    pairs = (words + 2 * workers - 1) // (2 * workers)
    threshold = delta
    epoch = 0
    relaxed = 0
    expanded = 0
    cross = 0
    pushes = 0
    seen = numba.int32(0)  # the manager's lane 0: inbox entries granted this trial
    while True:
        while True:  # phase: expand what is marked, take what the inbox holds, until the grid is quiet
            if lane < 0:
                relaxed, cross, pushes, expanded = _poll(store, indptr, arcs, remote, inbox, ctl, rank, rank, 1, lt,
                                                         workers, pairs, chunk, wshift, cshift, tail_at, base,
                                                         threshold, zero, relaxed, cross, pushes, expanded)
                _take(store, remote, inbox, rank, chunk, wshift, cshift, threshold, tail_at)
            elif lane == 0:
                seen = _refresh(store, ctl, rank, tail_at, seen)
            # a busy piece cannot see the phase end (every piece is quiet at its end and none wakes again): while
            # busy, the manager skips the end flag's read and the detection, and polls its inbox tail twice as often
            if detector:
                if total_end(load_own(store, rank, tail_at + QUIET)) != 0 and _grid_quiet(ctl, pieces, lane, 1):
                    if lane == 0:
                        cuda.atomic.exch(ctl, ENDED_AT, epoch + 1)  # atomic: into L2, where the pieces poll it
                        store_own(store, rank, ENDED, epoch + 1)
                    break  # the whole warp: its lanes decided together
            elif lane == 0 and load_own(store, rank, tail_at + QUIET) != 0 and _read(ctl, ENDED_AT) > epoch:
                store_own(store, rank, ENDED, epoch + 1)  # the piece's threads poll their own shared word
                break
            if load_own(store, rank, ENDED) > epoch:
                break
            pause()
        grid_sync()  # barrier: the phase is over everywhere before the split reads distances
        parity = epoch % 2
        if lt == 0:
            store_own(store, rank, BMIN + 1 - parity, EMPTY)  # used two splits ago, read before since
            if rank == 0:
                cuda.atomic.exch(ctl, GMIN + 1 - parity, EMPTY)  # atomic: into L2, where the pieces read it
        best = _mark_range(store, rank, lt, per, chunk, wshift, inf, threshold, threshold + delta)
        low = _split_sync(store, ctl, rank, lt, tail_at, best, parity)
        if low == EMPTY:
            break
        if low >= threshold + delta:  # an empty bucket: jump to the one holding the smallest waiting distance
            threshold = (low // delta + 1) * delta
            _mark_range(store, rank, lt, per, chunk, wshift, inf, low, threshold)
            _split_sync(store, ctl, rank, lt, tail_at, EMPTY, -1)
        else:
            threshold += delta
        epoch += 1

    write_back(store, dist, ctl, rank, lt, per, n, chunk, epoch, relaxed, expanded, cross, pushes)
    if tree:
        grid_sync()  # barrier: every distance is in global memory before the tight-arc pass reads it
        tight_tree(indptr, indices, weights, dist, parent, inf, rank * per + lt, pieces * per)


def striped_ids(n: int, pieces: int, stripe: int, chunk: int) -> np.ndarray:
    """The new id of every vertex when stripes of ``stripe`` consecutive ids are dealt to ``pieces`` pieces in turn:
    piece p's vertices become ids p x chunk onwards, in their order (``chunk``: :func:`spec.pieces_words`'s, a
    multiple of the stripe; the ids a piece does not fill are isolated padding)."""
    v = np.arange(n, dtype=np.int64)
    return (v // stripe) % pieces * chunk + v // (stripe * pieces) * stripe + v % stripe


@kernel("void(int32[::1], int32[::1], int32[::1], int64[::1], int32[::1], int32[::1], int32[::1], int64[::1], "
        "int32[::1], int64[::1], int64[::1], int32[:, ::1], int64, int64, int64, int64, int64, int64, int32, int64, "
        "int32)", cases=[{"block": 1024}, {"block": 512}])
@functools.cache
def pieces_wave(block: int):
    """The kernel compiled for blocks of ``block`` threads, one block per multiprocessor."""
    return cuda.jit(**TARGET.launch_bounds(block, 1))(pieces_wave_py)


class PiecesSolver(ClusterSSSP):
    """deltastep_pieces: clusterasync's blocks over pieces of the graph, with global-memory inboxes between them."""

    label = "deltastep_pieces"

    def __init__(self, graph, *, delta, grid, block, stripe=0, paths):
        ranks = int(grid) or device.multiprocessors()
        reason = pieces_limit(graph.n, graph.dtype.itemsize, {"grid": ranks, "stripe": stripe})
        if reason:
            raise SolverError(reason)
        self.chunk, self.wshift, words = pieces_words(graph.n, ranks, stripe)
        self.new_id, given = None, graph
        if stripe:  # the kernel's pieces are runs of ids: deal the stripes by renumbering the graph
            self.new_id = striped_ids(graph.n, ranks, int(stripe), self.chunk)
            graph = self.renumbered(graph, ranks * self.chunk)
        super().__init__(graph, delta=delta, grid=grid, block=block, paths=paths)
        self.ranks, self.stripe = ranks, int(stripe)
        self.cshift = max(0, (self.chunk - 1).bit_length())  # an inbox holds a piece's vertices: a pending
        # entry per vertex at most
        self.shared_bytes = 4 * words
        self.delta = delta or given.default_delta(PIECES_DELTA_WIDTH)  # the padding's ids must not thin the degree
        self.block = int(block)
        # the simulator runs every piece in one block: a few threads per piece keep it fast
        self.per = TARGET.threads(self.block, 4)
        self.kernel = pieces_wave(self.block)

    def renumbered(self, graph, ids: int):
        """``graph`` in the kernel's ``ids`` ids (``self.new_id``, padding isolated), refused where the padding's
        path bound needs wider distances than the given graph's."""
        src, dst, w = graph.coo()
        given, graph = graph, Graph.from_edges(ids, self.new_id[src], self.new_id[dst], w, name=graph.name,
                                               weight_kind=graph.weight_kind, offsets_dtype=graph.offsets_dtype)
        if graph.dtype != given.dtype:
            raise SolverError(f"{self.label}: the layout pads the graph to {graph.n} ids, whose path bound needs "
                              f"{graph.dtype} distances; use fewer pieces or stripe 0")
        return graph

    def run(self, source):
        return super().run(source if self.new_id is None else int(self.new_id[source]))

    def download(self):
        dist, parent = super().download()
        if self.new_id is None:
            return dist, parent
        if parent is None:
            return dist[self.new_id], None
        old = np.full(dist.size, -1, dtype=np.int64)  # the padding's ids have no old id and are no vertex's parent
        old[self.new_id] = np.arange(self.new_id.size)
        parent = parent[self.new_id]
        return dist[self.new_id], np.where(parent >= 0, old[parent], -1).astype(parent.dtype)

    def make_launcher(self):
        return CooperativeLaunch(self.kernel, blocks=self.ranks, block=self.block, sharedmem=self.shared_bytes)

    def upload(self):
        g = self.graph
        self.upload_arrays(np.int32)
        chunk = self.chunk
        # an arc as one 8-byte word: weight << 32 | the head's piece << PIECE_SHIFT | its index there
        heads = g.indices.astype(np.int64)
        self.d_arcs = cuda.to_device((g.weights.astype(np.int64) << 32) | ((heads // chunk) << PIECE_SHIFT)
                                     | (heads % chunk))
        # each piece's packed arc ranges (first arc counted from the piece's first, out-degree), in the order of its
        # shared words; padding past n has none
        gv = np.arange(self.ranks * chunk, dtype=np.int64)
        lo = g.indptr[np.minimum(gv, g.n)].astype(np.int64)
        deg = g.indptr[np.minimum(gv + 1, g.n)] - lo
        rel = lo - g.indptr[np.minimum(gv // chunk * chunk, g.n)]
        packed = (deg < ESCAPE) & (rel < (1 << 23))
        self.d_ranges = cuda.to_device(np.where(packed, (rel << 8) | deg, ESCAPE).astype(np.int32))
        self.d_remote = cuda.device_array(max(1, g.n), dtype=np.int64)
        self.d_inbox = cuda.device_array(self.ranks << self.cshift, dtype=np.int32)
        self.d_ctl = self.control_words()
        self.upload_source()
        shape = (self.ranks, self.shared_bytes // 4) if TARGET.simulator else (1, 1)
        self.d_store = cuda.device_array(shape, dtype=np.int32)  # the simulator's stand-in for shared memory
        self.args = (self.dg.indptr, self.dg.indices, self.dg.weights, self.d_arcs, self.d_ranges, self.d_dist,
                     self.d_parent, self.d_remote, self.d_inbox, self.d_ctl, self.d_source, self.d_store,
                     *self.scalar_args())

    def control_words(self):
        """The kernel's global control words (reset by the kernel)."""
        return cuda.device_array(PIECE_LINES + LINE * self.ranks, dtype=np.int64)

    def scalar_args(self):
        """The kernel's arguments after its arrays."""
        g = self.graph
        return (np.int64(g.n), np.int64(self.chunk), np.int64(self.ranks), np.int64(self.wshift),
                np.int64(self.cshift), np.int64(self.delta), np.int32(g.inf), self.tree_flag(),
                np.int32(0))

    def read_counters(self, ctl):
        return {"iterations": int(ctl[PHASES]), "buckets": int(ctl[SPLITS]), "relaxations": int(ctl[RELAX]),
                "expansions": int(ctl[EXPANDED]), "cross_arcs": int(ctl[CROSS]), "pushes": int(ctl[PUSHES]),
                "delta": self.delta, "grid": self.ranks, "vertices_per_piece": self.chunk, "block": self.block,
                "stripe": self.stripe, "shared_bytes": self.shared_bytes}
