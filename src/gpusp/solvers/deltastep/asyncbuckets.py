"""``deltastep_async``: delta-stepping without grid barriers (after ADDS, Wang, Fussell and Lin, PPoPP'21). The blocks
of one persistent cooperative kernel claim batches of queued vertices from the lowest buckets of a device ring of
bucket queues, expand them and push what they lower, each at its own pace; pending counts end the search.
:class:`DeltaAsyncSolver` is the host side (it doubles a ring slot's capacity and runs again on overflow).
Design, termination and complexity: docs/solvers/deltastep.md.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import SolverError
from .persistent import PersistentSSSP, block_add, relax_arc, tight_tree
from ..common.gate import kernel
from ..common.launch import TARGET, blocks_per_sm, cooperative_grid, fill_array
from .spec import ASYNC_BLOCKS_PER_SM, ASYNC_DELTA_WIDTH, MAX_BATCH, ring_capacity, ring_delta

EMPTY = -1
# control array: heads, tails, pending counts (one per ring slot), then the scalars below
CUR, TOTAL, ERR, RELAX, POPS, STALE, BATCHES, IDLE = range(8)
SCALARS = 8
ERR_OVERFLOW, ERR_STUCK = 1, 2
LOW32 = np.int64(0xFFFFFFFF)

if TARGET.simulator:

    def backoff():
        """No pause in the simulator (its threads are scheduled by Python)."""

else:

    @cuda.jit(device=True)
    def backoff():
        """Pause an idle poller so that the blocks with work get the counters' atomics."""
        cuda.nanosleep(np.uint32(200))


@cuda.jit(device=True)
def _read(ctl, i):
    """An atomic read of a counter (a plain load could be served from a stale L1 line or hoisted from a loop)."""
    return cuda.atomic.add(ctl, i, 0)


@cuda.jit(device=True)
def _publish(q, ctl, slot, entry, base):
    """Write an entry into its claimed slot once the claimer of the slot's previous lap has taken that one out."""
    while cuda.atomic.cas(q, slot, EMPTY, entry) != EMPTY:  # atomic: never overwrite an entry not yet taken
        if _read(ctl, base + ERR) != 0:
            return


@cuda.jit(device=True)
def _push(q, ctl, w, d, delta, nb, cap, base):
    """Queue vertex w at distance d in its bucket's ring slot; flags an overflow instead of overwriting."""
    k = (d // delta) % nb
    cuda.atomic.add(ctl, 2 * nb + k, 1)  # atomic: pending in the bucket, counted before the entry is visible
    cuda.atomic.add(ctl, base + TOTAL, 1)  # atomic: pending anywhere (termination)
    cuda.threadfence()  # both counts land before anybody can take the entry and retire it
    t = cuda.atomic.add(ctl, nb + k, 1)  # atomic: claim a tail slot
    if t - _read(ctl, k) >= cap:
        cuda.atomic.max(ctl, base + ERR, ERR_OVERFLOW)  # atomic: every block stops at its next poll
        return
    _publish(q, ctl, k * cap + (t & (cap - 1)), (np.int64(d) << 32) | w, base)


@cuda.jit(device=True)
def _claim(q, ctl, items, per, window, nb, cap, base, spin_limit):
    """Thread 0: fill ``items`` with a batch from the lowest buckets; returns (count, ring slot, idle polls),
    count 0 = stop."""
    polls = 0
    while True:
        if _read(ctl, base + ERR) != 0 or _read(ctl, base + TOTAL) == 0:
            return 0, 0, polls
        cur = _read(ctl, base + CUR)
        for b in range(cur, cur + window):
            k = b % nb
            h = _read(ctl, k)
            avail = _read(ctl, nb + k) - h
            if avail > 0:
                c = min(avail, per)
                if cuda.atomic.cas(ctl, k, h, h + c) == h:  # atomic: the batch h .. h + c - 1 is ours
                    for i in range(c):
                        slot = k * cap + ((h + i) & (cap - 1))
                        x = cuda.atomic.exch(q, slot, EMPTY)  # atomic: take the entry, leave the slot empty
                        while x == EMPTY:  # its writer holds the slot but has not written yet
                            if _read(ctl, base + ERR) != 0:
                                return 0, 0, polls
                            x = cuda.atomic.exch(q, slot, EMPTY)
                        items[i] = x
                    return c, k, polls
        if _read(ctl, 2 * nb + cur % nb) == 0:
            cuda.atomic.cas(ctl, base + CUR, cur, cur + 1)  # atomic: bucket cur is settled for good
            continue
        polls += 1
        if polls > spin_limit:
            cuda.atomic.max(ctl, base + ERR, ERR_STUCK)
            return 0, 0, polls
        backoff()


@kernel("void(int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], int64[::1], int64[::1], int64, int64, int32, "
        "int64, int64, int64, int64, int64, int64)", cases=[{"w": "int32"}])  # int32 only: packed (d, v) entries
@cuda.jit(cache=True)
def async_buckets(indptr, indices, weights, dist, parent, q, ctl, source, delta, inf, nb, window, lanes, claim,
                  tree, spin_limit):
    """Persistent grid: reset, then blocks claim, expand and push bucketed work until none is left; parents."""
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    nthreads = cuda.gridsize(1)
    n = dist.size
    cap = q.size // nb
    base = 3 * nb
    v = tid
    while v < n:
        dist[v] = inf
        parent[v] = -1
        v += nthreads
    i = tid
    while i < base + SCALARS:
        ctl[i] = 0
        i += nthreads
    grid.sync()  # barrier: the reset is complete before the source is queued
    if tid == 0:
        dist[source] = 0
        _push(q, ctl, np.int32(source), 0, delta, nb, cap, base)
    grid.sync()  # barrier: every block sees the source's entry

    items = cuda.shared.array(MAX_BATCH, dtype=np.int64)
    batch = cuda.shared.array(2, dtype=np.int64)  # entries claimed (0: stop), their ring slot
    t = cuda.threadIdx.x
    per = min(cuda.blockDim.x // lanes, claim, MAX_BATCH)
    group = t // lanes
    lane = t % lanes
    relaxed = 0
    polls = 0  # thread 0's counters, added to ctl once at the end
    pops = 0
    batches = 0
    while True:
        if t == 0:
            c, k, p = _claim(q, ctl, items, per, window, nb, cap, base, spin_limit)
            batch[0] = c
            batch[1] = k
            polls += p
            pops += c
            batches += 1
        cuda.syncthreads()  # barrier: the batch is in shared memory
        c = batch[0]
        if c == 0:
            break
        if group < c:
            x = items[group]
            u = np.int32(x & LOW32)
            du = x >> 32
            if dist[u] < du:
                if lane == 0:
                    cuda.atomic.add(ctl, base + STALE, 1)  # atomic: a lower entry of u exists
            else:
                e = indptr[u] + lane
                end = indptr[u + 1]
                while e < end:
                    relaxed += 1
                    w, cand, lowered = relax_arc(indices, weights, dist, e, du)
                    if lowered:
                        _push(q, ctl, w, cand, delta, nb, cap, base)
                    e += lanes
        cuda.syncthreads()  # barrier: the batch's pushes are counted (fenced in _push), every thread has read it
        if t == 0:
            cuda.atomic.add(ctl, 2 * nb + batch[1], -c)  # atomic: the batch leaves its bucket's pending count
            cuda.atomic.add(ctl, base + TOTAL, -c)  # atomic: and the total
    block_add(ctl, base + RELAX, relaxed)
    if t == 0:
        cuda.atomic.add(ctl, base + IDLE, polls)  # atomic: blocks add at once
        cuda.atomic.add(ctl, base + POPS, pops)  # atomic: blocks add at once
        cuda.atomic.add(ctl, base + BATCHES, batches - 1)  # atomic: blocks add at once (the last claim stopped)
    grid.sync()  # barrier: every distance is final before the tree pass reads it
    if tree and _read(ctl, base + ERR) == 0:
        tight_tree(indptr, indices, weights, dist, parent, inf, tid, nthreads)


SPIN_LIMIT = 1 << 26
MAX_RETRIES = 8


class DeltaAsyncSolver(PersistentSSSP):
    """deltastep_async: blocks claim bucketed work from a device ring of queues, no grid barrier per round."""

    def __init__(self, graph, *, delta, lanes, block, grid, buckets, window, claim, capacity, paths):
        super().__init__(graph, delta=delta, lanes=lanes, block=block, grid=grid, buckets=buckets, window=window,
                         claim=claim, capacity=capacity, paths=paths)
        if graph.has_negative_weights:
            raise SolverError("deltastep_async needs non-negative weights (delta-stepping)")
        if graph.dtype != np.int32:
            raise SolverError("deltastep_async packs distances into 32 bits; this graph's path lengths need int64")
        if window >= buckets:
            raise SolverError(f"window must be below buckets ({buckets}), not {window}")
        self.block = block
        self.lanes = min(lanes, block)
        self.buckets = buckets
        self.window = window
        self.claim = claim
        max_w = int(graph.weights.max()) if graph.m else 1
        self.delta = ring_delta(delta or graph.default_delta(ASYNC_DELTA_WIDTH), max_w, buckets, window)
        self.capacity = capacity or ring_capacity(graph.n)  # doubled on overflow
        if self.capacity & (self.capacity - 1):
            raise SolverError(f"capacity must be a power of two, not {self.capacity}")
        self.want_grid = grid
        self.inf = graph.dtype.type(graph.inf)
        self.grid = None
        self.dirty = False

    def upload(self):
        self.upload_arrays(np.int32)
        self.d_ctl = cuda.device_array(3 * self.buckets + SCALARS, dtype=np.int64)
        self._alloc_queue()
        self.want_grid = self.want_grid or blocks_per_sm(ASYNC_BLOCKS_PER_SM)

    def _alloc_queue(self):
        self.d_q = cuda.device_array(self.buckets * self.capacity, dtype=np.int64)
        fill_array(self.d_q, np.int64(EMPTY))

    def _args(self, source):
        dg = self.dg
        return (dg.indptr, dg.indices, dg.weights, self.d_dist, self.d_parent, self.d_q, self.d_ctl,
                np.int64(source), np.int64(self.delta), self.inf, np.int64(self.buckets), np.int64(self.window),
                np.int64(self.lanes), np.int64(self.claim), self.tree_flag(), np.int64(SPIN_LIMIT))

    def run(self, source):
        retries = 0
        while True:
            if self.dirty:  # an aborted run left entries behind
                fill_array(self.d_q, np.int64(EMPTY))
                self.dirty = False
            args = self._args(source)
            if self.grid is None:
                self.grid = cooperative_grid(async_buckets, args, self.block, self.want_grid)
            async_buckets[self.grid, self.block](*args)
            ctl = self.d_ctl.copy_to_host()
            err = int(ctl[3 * self.buckets + ERR])
            if err == 0:
                break
            self.dirty = True
            if err == ERR_STUCK or retries == MAX_RETRIES:
                raise SolverError(f"deltastep_async: {'no progress' if err == ERR_STUCK else 'queue overflow'} "
                                  f"(capacity {self.capacity}, source {source})")
            self.capacity *= 2  # a bucket held more live entries than a ring slot: grow and run again
            self._alloc_queue()
            retries += 1
        launches = 1 + retries + self.host_tree(source, self.block)
        s = ctl[3 * self.buckets:]
        return {"relaxations": int(s[RELAX]), "pops": int(s[POPS]), "stale": int(s[STALE]),
                "batches": int(s[BATCHES]), "buckets": int(s[CUR]), "idle_polls": int(s[IDLE]),
                "iterations": int(s[BATCHES]), "launches": launches, "delta": self.delta, "lanes": self.lanes,
                "grid": self.grid, "capacity": self.capacity, "retries": retries, "window": self.window}

