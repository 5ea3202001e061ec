"""Paper 004 (An): Bellman-Ford with an active-vertex mask, edge-parallel and vertex-parallel.

All four solvers run the same outer loop on the host. Round ``r`` relaxes only edges whose tail
changed its distance in round ``r - 1`` (the *mask*); every head it lowers goes into the *next mask*
and raises the round's *flag*; the host reads the flag once per round (one 8-byte copy into pinned
memory) and stops after the first round that changed nothing (early termination). The source starts
alone in the mask.

Mask bookkeeping. The paper keeps two 0/1 arrays and runs a swap kernel after every round that copies
``mask1`` into ``mask`` and clears ``mask1``. Here the two arrays hold *round stamps* instead: a vertex is
in round ``r``'s mask when ``mask[u] == r - 1``, and joins the next mask by ``next[v] = r``. The swap is
then a host-side exchange of the two references, and nothing ever needs clearing (the array being
written last served as a mask two rounds ago, so its stale stamps are at most ``r - 2`` and never
match). Likewise the flag is "``flag[0] == r``", so it needs no reset launch either: one launch and one
flag copy per round.

Negative weights and cycles. Every stored distance is the length of a real walk from the source, so
after round ``k`` each vertex is at least as good as its best path of at most ``k`` edges (also with the
mask: a tail skipped in round ``k`` already pushed its current value in the round after its last change).
Without a reachable negative cycle nothing can change in round ``|V|``; a change there raises
:class:`~gpusp.errors.NegativeCycleError`. As an earlier and overflow-proof test, a candidate below
``-(n - 1) max|w|`` (shorter than any simple path can be) is never stored; it sets ``flag[1]``, which also
raises NegativeCycleError at the end of that round. Tails at INF are never relaxed, and with a dense
matrix INF entries are skipped, so ``INF + negative`` never looks finite.

Variants
* ``edgebf_coo`` (CooSolver) - paper 004 sec. IV-B/C: COO arrays (src, dst, w); ``grid = ceil(m / (k *
  block))`` blocks, so each of the ``T = grid * block`` threads handles about ``k = edges_per_thread``
  edges ``t, t + T, t + 2T, ...`` (coalesced: a warp reads consecutive edges at every step). A masked edge
  is relaxed in place with ``cuda.atomic.min``; the atomic's old value tells whether it lowered the head.
  Per round O(m) work; at most |V| rounds. ``relaxations`` counts edges examined (rounds * m).
  ``dst`` and ``w`` are the CSR ``indices`` / ``weights`` (CSR order is COO sorted by source), shared with
  the CSR upload that :func:`~gpusp.solvers.common.build_parents` uses.
* ``edgebf_dense`` (DenseSolver) - sec. III: the dense n x n matrix (``graph.to_dense()``: lightest of
  parallel edges, diagonal ``min(0, self-loop)``), a 2-D launch with one thread per entry ``(i, j)``
  (x = column, so a warp reads a contiguous piece of row ``i`` and tests one mask word); rows stride by
  the grid height beyond 65535 blocks. Per round O(n^2) work; ``relaxations`` = rounds * n^2. Memory
  w n^2: no CSR is uploaded, so the shortest-path tree is built from the matrix by in-edge (column)
  scans.
* ``vertexbf_pull`` (PullSolver) - sec. IV-D, "incoming": thread per vertex ``v`` scans its in-edges
  (reverse CSR, ``graph.reverse()``) from masked tails and writes ``min(dist[v], ...)`` to a second
  distance buffer (Jacobi double buffering: no atomics, no write races). Per round O(n + m) work (every
  in-edge's tail stamp is read); ``relaxations`` = rounds * m. The tree is built on the reverse CSR too
  (thread ``v`` picks a tight in-edge; no forward CSR is uploaded, in the spirit of paper 001's recording
  kernel on the inverted graph).
* ``vertexbf_push`` (PushSolver) - sec. IV-D, "outgoing": thread per vertex ``u``; only a ``u`` that
  changed last round pushes ``dist[u] + w`` along its out-edges with ``cuda.atomic.min``, as the paper's
  outgoing kernel does (it tests ``mask[idx]`` first). Decision: a mask rather than a plain push from every
  finite vertex, because the unmasked pushes cannot lower anything (their tails already pushed their
  current value) and only cost atomics. Per round O(n + sum of out-degrees of masked vertices); no
  ``relaxations`` counter (it would need device-side counting).

Streams and pinned memory (sec. IV-A) for the matrix transfer of ``edgebf_dense``: parameter ``transfer``
('pageable', 'pinned', 'streams' with ``chunks`` row pieces), see :class:`DenseSolver`. The per-round
flag copy of every variant goes through pinned memory.

Counters: ``iterations`` (rounds, including the final quiet one), ``relaxations`` where known without
extra device work, ``launches`` (kernel launches in ``run`` including the tree).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..device import capture_graph
from ..errors import NegativeCycleError, SolverError
from .base import Solver, launch_grid
from .common import DeviceGraph, build_parents, put

MAX_GRID_Y = 65535


# ---- state reset and relaxation kernels ---------------------------------------------------------------
@cuda.jit(cache=True)
def reset(dist, mask, nxt, flag, source, inf):
    """Thread per vertex: dist INF (0 at the source), stamps -1 (0 at the source = in round 1's mask)."""
    v = cuda.grid(1)
    if v >= dist.size:
        return
    if v == source:
        dist[v] = 0
        mask[v] = 0
    else:
        dist[v] = inf
        mask[v] = -1
    nxt[v] = -1
    if v == 0:
        flag[0] = 0
        flag[1] = 0


@cuda.jit(device=True)
def _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, e, stride):
    """Relax edges e, e + stride, ... whose source changed in round r - 1 (the body of coo_relax)."""
    m = src.size
    prev = r - 1
    while e < m:
        u = src[e]
        if mask[u] == prev:
            du = dist[u]
            if du != inf:
                cand = du + weights[e]
                v = dst[e]
                if cand < floor:
                    flag[1] = r  # shorter than any simple path: a negative cycle (benign race, all write r)
                elif cand < dist[v]:
                    # atomic: concurrent tails may lower v; the old value says whether this one won
                    old = cuda.atomic.min(dist, v, cand)
                    if cand < old:
                        nxt[v] = r  # benign races: every writer stores the same round stamp
                        flag[0] = r
        e += stride


@cuda.jit(cache=True)
def coo_relax(src, dst, weights, dist, mask, nxt, flag, r, inf, floor):
    """Thread t relaxes edges t, t + T, ... (T threads in all) whose source changed in round r - 1."""
    _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, cuda.grid(1), cuda.gridsize(1))


@cuda.jit(device=True)
def _dense_rows(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1):
    """Rows row0 .. row1-1 of the matrix, thread per entry (i, j) (x = column j): relax i -> j when row
    i changed in round r - 1."""
    j, i = cuda.grid(2)
    n = dist.size
    if j >= n:
        return
    rows = cuda.gridsize(2)[1]
    prev = r - 1
    i += row0
    while i < row1:
        if mask[i] == prev:
            a = mat[i, j]
            di = dist[i]
            if a != inf and di != inf:
                cand = di + a
                if cand < floor:
                    flag[1] = r  # shorter than any simple path: a negative cycle (stamped with the round)
                elif cand < dist[j]:
                    # atomic: every row of column j may lower dist[j] in the same round
                    old = cuda.atomic.min(dist, j, cand)
                    if cand < old:
                        nxt[j] = r
                        flag[0] = r
        i += rows


@cuda.jit(cache=True)
def dense_relax(mat, dist, mask, nxt, flag, r, inf, floor):
    """Thread per matrix entry: relax i -> j when row i changed in round r - 1."""
    _dense_rows(mat, dist, mask, nxt, flag, r, inf, floor, 0, dist.size)


@cuda.jit(cache=True)
def dense_relax_rows(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1):
    """dense_relax over rows row0 .. row1-1 only (one streamed piece of the matrix)."""
    _dense_rows(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1)


@cuda.jit(cache=True)
def pull_relax(rindptr, rindices, rweights, dist, dist_next, mask, nxt, flag, r, inf, floor):
    """Thread per vertex v: dist_next[v] = min(dist[v], dist[u] + w over in-edges from masked u); no atomics."""
    v = cuda.grid(1)
    if v >= dist.size:
        return
    dv = dist[v]
    best = dv
    prev = r - 1
    e = rindptr[v]
    end = rindptr[v + 1]
    while e < end:
        u = rindices[e]
        if mask[u] == prev:
            du = dist[u]
            if du != inf:
                cand = du + rweights[e]
                if cand < floor:
                    flag[1] = r  # shorter than any simple path: a negative cycle (stamped with the round)
                elif cand < best:
                    best = cand
        e += 1
    dist_next[v] = best  # only thread v writes v; dist (read) and dist_next (written) are distinct buffers
    if best < dv:
        nxt[v] = r
        flag[0] = r  # benign race: every writer stores r


@cuda.jit(device=True)
def _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u):
    """If u changed in round r - 1, atomic-min dist[u] + w into its out-neighbours (push_relax's body)."""
    if mask[u] != r - 1:
        return
    du = dist[u]
    if du == inf:
        return
    e = indptr[u]
    end = indptr[u + 1]
    while e < end:
        v = indices[e]
        cand = du + weights[e]
        if cand < floor:
            flag[1] = r  # shorter than any simple path: a negative cycle
        elif cand < dist[v]:
            # atomic: several tails may push into v in the same round
            old = cuda.atomic.min(dist, v, cand)
            if cand < old:
                nxt[v] = r
                flag[0] = r
        e += 1


@cuda.jit(cache=True)
def push_relax(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor):
    """Thread per vertex u that changed in round r - 1: atomic-min dist[u] + w into every out-neighbour."""
    u = cuda.grid(1)
    if u < dist.size:
        _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u)


# ---- device-resident rounds: one cooperative kernel, or CUDA graphs of batched rounds --------------------
@cuda.jit(device=True)
def _round_over(flag, r, limit):
    """After round r's barrier: stop on a cycle found by round r, on a quiet round, or at the round limit.

    Reads only what round r + 1 cannot change in a way that flips the answer (a thread already in round
    r + 1 writes stamps r + 1, which neither test below counts), so every thread decides alike."""
    cycle = flag[1]
    return (cycle != 0 and cycle <= r) or flag[0] < r or r >= limit


@cuda.jit(cache=True)
def push_persistent(indptr, indices, weights, dist, mask_a, mask_b, flag, inf, floor, limit, out):
    """Every round of push_relax in one cooperative launch (grid-stride over vertices); out[0] = rounds."""
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    r = 1
    while True:
        u = start
        while u < dist.size:
            if r % 2 == 1:
                _push_vertex(indptr, indices, weights, dist, mask_a, mask_b, flag, r, inf, floor, u)
            else:
                _push_vertex(indptr, indices, weights, dist, mask_b, mask_a, flag, r, inf, floor, u)
            u += stride
        grid.sync()  # barrier: round r's distances, stamps and flags are visible to every thread
        if _round_over(flag, r, limit):
            break
        r += 1
    if start == 0:
        out[0] = r


@cuda.jit(cache=True)
def coo_persistent(src, dst, weights, dist, mask_a, mask_b, flag, inf, floor, limit, out):
    """Every round of coo_relax in one cooperative launch; out[0] = rounds."""
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    r = 1
    while True:
        if r % 2 == 1:
            _coo_edges(src, dst, weights, dist, mask_a, mask_b, flag, r, inf, floor, start, stride)
        else:
            _coo_edges(src, dst, weights, dist, mask_b, mask_a, flag, r, inf, floor, start, stride)
        grid.sync()  # barrier: round r's distances, stamps and flags are visible to every thread
        if _round_over(flag, r, limit):
            break
        r += 1
    if start == 0:
        out[0] = r


@cuda.jit(device=True)
def _batch_idle(flag, r, n):
    """In a replayed batch: round r has nothing to do once an earlier round was quiet or found a cycle,
    or past round n (a change in round n already proves a negative cycle)."""
    return flag[1] != 0 or flag[0] < r - 1 or r > n


@cuda.jit(cache=True)
def push_batched(indptr, indices, weights, dist, mask, nxt, flag, base, offset, inf, floor):
    """push_relax for round base[0] + offset, exiting at once after convergence (a CUDA-graph node)."""
    r = base[0] + offset
    u = cuda.grid(1)
    if u < dist.size and not _batch_idle(flag, r, dist.size):
        _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u)


@cuda.jit(cache=True)
def coo_batched(src, dst, weights, dist, mask, nxt, flag, base, offset, inf, floor):
    """coo_relax for round base[0] + offset, exiting at once after convergence (a CUDA-graph node)."""
    r = base[0] + offset
    if not _batch_idle(flag, r, dist.size):
        _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, cuda.grid(1), cuda.gridsize(1))


@cuda.jit(cache=True)
def advance(base, rounds):
    """Last node of a batch: the next replay starts ``rounds`` rounds later."""
    if cuda.grid(1) == 0:
        base[0] += rounds


# ---- shortest-path tree from in-edges (pull and dense; no forward CSR on the device) ------------------
@cuda.jit(cache=True)
def tree_init(level, parent, grew, source):
    """Thread per vertex: no parent; level 0 at the source, -1 (not in the tree) elsewhere; grew cleared."""
    v = cuda.grid(1)
    if v >= parent.size:
        return
    parent[v] = -1
    level[v] = 0 if v == source else -1
    if v == 0:
        grew[0] = 0


@cuda.jit(cache=True)
def pull_tight_parents(rindptr, rindices, rweights, dist, parent, inf):
    """Thread per vertex v (all weights > 0): parent = first in-neighbour u != v with dist[u] + w == dist[v]."""
    v = cuda.grid(1)
    if v >= dist.size:
        return
    found = -1
    dv = dist[v]
    if dv != inf:
        e = rindptr[v]
        end = rindptr[v + 1]
        while e < end:
            u = rindices[e]
            du = dist[u]
            if u != v and du != inf and du + rweights[e] == dv:
                found = u
                break
            e += 1
    parent[v] = found  # the source has no tight in-edge when every weight is positive


@cuda.jit(cache=True)
def pull_tree_level(rindptr, rindices, rweights, dist, level, parent, depth, grew, inf):
    """Thread per vertex v not yet in the tree: join under an in-neighbour on level depth over a tight edge."""
    v = cuda.grid(1)
    if v >= dist.size or level[v] != -1:
        return
    dv = dist[v]
    if dv == inf:
        return
    e = rindptr[v]
    end = rindptr[v + 1]
    while e < end:
        u = rindices[e]
        # level[u] can only move from -1 to depth + 1 in this launch, never to or from depth: no race
        if level[u] == depth and dist[u] + rweights[e] == dv:
            level[v] = depth + 1  # only thread v writes v's entries: no atomic needed
            parent[v] = u
            grew[0] = depth + 1
            return
        e += 1


@cuda.jit(cache=True)
def dense_tight_parents(mat, dist, parent, inf):
    """Thread per vertex j (all weights > 0): parent = first row i != j with dist[i] + mat[i, j] == dist[j]."""
    j = cuda.grid(1)
    n = dist.size
    if j >= n:
        return
    found = -1
    dj = dist[j]
    if dj != inf:
        i = 0
        while i < n:  # column scan: neighbouring threads read neighbouring words of row i
            a = mat[i, j]
            di = dist[i]
            if i != j and a != inf and di != inf and di + a == dj:
                found = i
                break
            i += 1
    parent[j] = found


@cuda.jit(cache=True)
def dense_tree_level(mat, dist, level, parent, depth, grew, inf):
    """Thread per vertex j not yet in the tree: join under a row i on level depth over a tight entry."""
    j = cuda.grid(1)
    n = dist.size
    if j >= n or level[j] != -1:
        return
    dj = dist[j]
    if dj == inf:
        return
    i = 0
    while i < n:
        # level[i] can only move from -1 to depth + 1 in this launch, never to or from depth: no race
        if level[i] == depth:
            a = mat[i, j]
            if a != inf and dist[i] + a == dj:
                level[j] = depth + 1  # only thread j writes j's entries: no atomic needed
                parent[j] = i
                grew[0] = depth + 1
                return
        i += 1


# ---- solvers ------------------------------------------------------------------------------------------
class _MaskedBellmanFord(Solver):
    """Shared host loop: reset, one relax launch + one flag copy per round, mask swap, cycle tests.

    Solvers that define ``_device_rounds`` also run their rounds without a host round trip per round
    (``launch='persistent'``: one cooperative kernel; ``launch='graph'``: CUDA graphs of ``BATCH``
    rounds, one flag read per replay); the relaxation body is the same device function in all three.
    """

    device = "gpu"
    BATCH = 32  # rounds per replayed graph; even, so that round r always uses the same mask order

    def __init__(self, graph, block=256, launch="host", **params):
        super().__init__(graph, block=block, launch=launch, **params)
        self.block = int(block)
        self.launch = launch
        self.n = graph.n
        self.dtype = graph.dtype
        self.inf = graph.dtype.type(graph.inf)
        self.floor = graph.dtype.type(-graph.path_bound)
        self.nonpositive = bool(graph.m and int(graph.weights.min()) <= 0)
        self.d_dist = self.d_parent = None
        self.coop_grid = self.graph_exec = self.core_stream = None

    def upload(self):
        n = self.n
        self.d_dist = cuda.device_array(n, dtype=self.dtype)
        self.d_mask = cuda.device_array(n, dtype=np.int32)
        self.d_next = cuda.device_array(n, dtype=np.int32)
        self.d_parent = cuda.device_array(n, dtype=np.int32)
        self.d_flag = cuda.device_array(2, dtype=np.int32)
        self.d_base = cuda.device_array(1, dtype=np.int64)  # graph mode: rounds before this replay
        self.d_out = cuda.device_array(1, dtype=np.int64)  # persistent mode: rounds run
        self.h_flag = cuda.pinned_array(2, dtype=np.int32)

    def _relax(self, r, mask, nxt):
        """Launch round r's relaxation kernel; return the launch count."""
        raise NotImplementedError

    def _device_rounds(self):
        """(persistent kernel, batched kernel, its grid, graph arguments) for launch='persistent'/'graph'."""
        raise NotImplementedError

    def _tree(self, source) -> int:
        """Fill self.d_parent from the converged self.d_dist; return launches."""
        raise NotImplementedError

    def _check_cycle(self, last_changed: int) -> None:
        """Raise NegativeCycleError when the floor test fired or round n still changed something."""
        if self.h_flag[1]:
            raise NegativeCycleError(f"negative-weight cycle reachable from the source (found in round "
                                     f"{int(self.h_flag[1])})")
        if last_changed >= self.n:
            raise NegativeCycleError(f"negative-weight cycle reachable from the source (change in round "
                                     f"{last_changed})")

    def _rounds(self, source) -> tuple[int, int]:
        """Reset and iterate to convergence; return (rounds, launches). Raises NegativeCycleError."""
        grid = launch_grid(self.n, self.block)
        reset[grid, self.block](self.d_dist, self.d_mask, self.d_next, self.d_flag, source, self.inf)
        if self.launch == "persistent":
            return self._rounds_persistent()
        if self.launch == "graph":
            return self._rounds_graph()
        mask, nxt = self.d_mask, self.d_next
        r, launches = 0, 1
        while True:
            r += 1
            launches += self._relax(r, mask, nxt)
            self.d_flag.copy_to_host(self.h_flag)  # the round's only synchronisation
            if self.h_flag[0] != r:
                self._check_cycle(0)
                return r, launches
            self._check_cycle(r)
            mask, nxt = nxt, mask  # swap: this round's next mask is the next round's mask

    def _rounds_persistent(self) -> tuple[int, int]:
        """Every round in one cooperative kernel (grid: two blocks per multiprocessor, co-resident)."""
        from ..device import multiprocessors
        from .deltastep import cooperative_grid

        kernel, _, _, graph_args = self._device_rounds()
        args = (*graph_args, self.d_dist, self.d_mask, self.d_next, self.d_flag, self.inf, self.floor,
                np.int64(self.n), self.d_out)
        if self.coop_grid is None:
            self.coop_grid = cooperative_grid(kernel, args, self.block, 2 * multiprocessors())
        kernel[self.coop_grid, self.block](*args)
        rounds = int(self.d_out.copy_to_host()[0])
        self.d_flag.copy_to_host(self.h_flag)
        self._check_cycle(rounds if self.h_flag[0] >= rounds else 0)
        return rounds, 2

    def _launch_batch(self, stream=0):
        """Issue one batch: BATCH rounds of the batched kernel, then the base advance."""
        _, kernel, grid, graph_args = self._device_rounds()
        for offset in range(1, self.BATCH + 1):
            mask, nxt = (self.d_mask, self.d_next) if offset % 2 else (self.d_next, self.d_mask)
            kernel[grid, self.block, stream](*graph_args, self.d_dist, mask, nxt, self.d_flag, self.d_base,
                                             np.int64(offset), self.inf, self.floor)
        advance[1, 1, stream](self.d_base, np.int64(self.BATCH))

    def _capture(self):
        """The batch as a CUDA graph, captured once."""
        self._launch_batch()  # compiles every kernel before capture (and is a harmless idle batch)
        self.graph_exec, self.core_stream = capture_graph(self._launch_batch)

    def _rounds_graph(self) -> tuple[int, int]:
        """Replay BATCH-round graphs until one holds a quiet round; one flag read per replay."""
        from ..device import mode

        put[1, 1](self.d_base, 0, 0)
        if mode() == "gpu" and self.graph_exec is None:
            self._capture()
            put[1, 1](self.d_base, 0, 0)
        launches, done = 2, 0
        while True:
            if self.graph_exec is not None:
                self.graph_exec.launch(self.core_stream)
            else:  # the simulator has no graphs: the same launches, one by one
                self._launch_batch()
            launches += 1
            done += self.BATCH
            self.d_flag.copy_to_host(self.h_flag)
            last = int(self.h_flag[0])
            self._check_cycle(last)
            if last < done:
                return last + 1, launches

    def run(self, source):
        rounds, launches = self._rounds(source)
        launches += self._tree(source)
        return self._counters(rounds, launches)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "launches": launches}

    def download(self):
        return self.d_dist.copy_to_host(), self.d_parent.copy_to_host()


class CooSolver(_MaskedBellmanFord):
    """edgebf_coo: thread per edge (k edges per thread, grid-strided) on COO arrays, atomic min."""

    def __init__(self, graph, block=256, edges_per_thread=1, **params):
        super().__init__(graph, block=block, edges_per_thread=edges_per_thread, **params)
        self.k = int(edges_per_thread)
        self.src = graph.coo()[0]
        # enough blocks that the grid-stride loop gives each thread about k edges
        self.grid = launch_grid(-(-graph.m // self.k), self.block)

    def upload(self):
        super().upload()
        self.dg = DeviceGraph(self.graph).upload()
        self.d_src = cuda.to_device(self.src)

    def _relax(self, r, mask, nxt):
        dg = self.dg
        coo_relax[self.grid, self.block](self.d_src, dg.indices, dg.weights, self.d_dist, mask, nxt,
                                         self.d_flag, r, self.inf, self.floor)
        return 1

    def _device_rounds(self):
        dg = self.dg
        return coo_persistent, coo_batched, self.grid, (self.d_src, dg.indices, dg.weights)

    def _tree(self, source):
        return build_parents(self.dg, self.d_dist, self.d_parent, source, self.block)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.graph.m, "launches": launches}


class PushSolver(_MaskedBellmanFord):
    """vertexbf_push: thread per changed vertex pushes along its out-edges with atomic min."""

    def upload(self):
        super().upload()
        self.dg = DeviceGraph(self.graph).upload()

    def _relax(self, r, mask, nxt):
        dg = self.dg
        push_relax[launch_grid(self.n, self.block), self.block](dg.indptr, dg.indices, dg.weights, self.d_dist,
                                                                mask, nxt, self.d_flag, r, self.inf, self.floor)
        return 1

    def _device_rounds(self):
        dg = self.dg
        return push_persistent, push_batched, launch_grid(self.n, self.block), (dg.indptr, dg.indices, dg.weights)

    def _tree(self, source):
        return build_parents(self.dg, self.d_dist, self.d_parent, source, self.block)


class _InEdgeTree:
    """Tree building by in-edge scans (thread v picks its own parent), shared by pull and dense."""

    def _tree_kernels(self):
        """(one-pass kernel, level kernel, graph arguments)."""
        raise NotImplementedError

    def _tree(self, source):
        grid = launch_grid(self.n, self.block)
        tight, per_level, args = self._tree_kernels()
        if not self.nonpositive:
            # every weight > 0: a tight in-edge always comes from a strictly closer vertex, so any will do
            tight[grid, self.block](*args, self.d_dist, self.d_parent, self.inf)
            return 1
        # zero or negative weights: grow the tree level by level so a tight zero cycle cannot close a loop
        tree_init[grid, self.block](self.d_level, self.d_parent, self.d_grew, source)
        launches, depth = 1, 0
        while True:
            per_level[grid, self.block](*args, self.d_dist, self.d_level, self.d_parent, depth, self.d_grew,
                                        self.inf)
            launches += 1
            self.d_grew.copy_to_host(self.h_grew)
            if self.h_grew[0] != depth + 1:  # stamp: nobody joined level depth + 1
                return launches
            depth += 1

    def _tree_buffers(self):
        if not self.nonpositive:  # the one-pass tree needs no level array
            return
        self.d_level = cuda.device_array(self.n, dtype=np.int32)
        self.d_grew = cuda.device_array(1, dtype=np.int32)
        self.h_grew = cuda.pinned_array(1, dtype=np.int32)


class PullSolver(_InEdgeTree, _MaskedBellmanFord):
    """vertexbf_pull: thread per vertex takes the minimum over its in-edges into a second buffer."""

    def __init__(self, graph, block=256, **params):
        super().__init__(graph, block=block, **params)
        self.rev = graph.reverse()

    def upload(self):
        super().upload()
        self.rg = DeviceGraph(self.rev).upload()
        self.d_other = cuda.device_array(self.n, dtype=self.dtype)
        self._tree_buffers()

    def _relax(self, r, mask, nxt):
        rg = self.rg
        read, write = self.d_dist, self.d_other
        pull_relax[launch_grid(self.n, self.block), self.block](rg.indptr, rg.indices, rg.weights, read, write,
                                                                mask, nxt, self.d_flag, r, self.inf, self.floor)
        # the buffer just written holds the newest distances (also after the final quiet round)
        self.d_dist, self.d_other = write, read
        return 1

    def _tree_kernels(self):
        rg = self.rg
        return pull_tight_parents, pull_tree_level, (rg.indptr, rg.indices, rg.weights)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.graph.m, "launches": launches}


class DenseSolver(_InEdgeTree, _MaskedBellmanFord):
    """edgebf_dense: thread per entry of the dense n x n matrix, atomic min into the column's vertex.

    ``transfer`` (paper 004 sec. IV-A): 'pageable' uploads the matrix from ordinary host memory;
    'pinned' from page-locked memory (staged there when the solver is built, so the timed upload is the
    DMA alone); 'streams' moves the upload into every timed run: the matrix, in ``chunks`` row pieces
    from pinned memory, is copied on one stream per piece, and each piece's first-round relaxation is
    queued on its stream right behind its copy, so later pieces travel while earlier ones are relaxed.
    Compare the default's h2d_ms + median with the streamed median (which includes the transfer)."""

    def __init__(self, graph, block=256, transfer="pageable", chunks=2, **params):
        super().__init__(graph, block=block, transfer=transfer, chunks=chunks, **params)
        if transfer not in ("pageable", "pinned", "streams"):
            raise SolverError(f"transfer must be pageable, pinned or streams, not {transfer!r}")
        self.transfer, self.chunks = transfer, max(1, min(int(chunks), max(1, self.n)))
        self.mat = graph.to_dense()
        if transfer != "pageable":  # page-locked staging copy, outside every timed step
            self.h_mat = cuda.pinned_array(self.mat.shape, dtype=self.mat.dtype)
            self.h_mat[...] = self.mat
        self.bx = min(32, self.block)
        self.by = self.block // self.bx
        self.grid2 = (max(1, -(-self.n // self.bx)), max(1, min(MAX_GRID_Y, -(-self.n // self.by))))

    def upload(self):
        super().upload()
        if self.transfer == "streams":
            self.d_mat = cuda.device_array(self.mat.shape, dtype=self.mat.dtype)  # filled inside each run
            self.streams = [cuda.stream() for _ in range(self.chunks)]
        else:
            self.d_mat = cuda.to_device(self.mat if self.transfer == "pageable" else self.h_mat)
        self._tree_buffers()

    def _relax(self, r, mask, nxt):
        if self.transfer == "streams" and r == 1:
            return self._stream_first_round(mask, nxt)
        dense_relax[self.grid2, (self.bx, self.by)](self.d_mat, self.d_dist, mask, nxt, self.d_flag, r, self.inf,
                                                     self.floor)
        return 1

    def _stream_first_round(self, mask, nxt) -> int:
        """Round 1 piece by piece: copy rows lo..hi-1 on stream k, then relax them on the same stream.
        The streams block on the default stream, so the reset before and the flag copy after are ordered."""
        bounds = np.linspace(0, self.n, self.chunks + 1).astype(np.int64)
        for k, stream in enumerate(self.streams):
            lo, hi = int(bounds[k]), int(bounds[k + 1])
            if hi > lo:
                self.d_mat[lo:hi].copy_to_device(self.h_mat[lo:hi], stream=stream)
                grid = (self.grid2[0], max(1, min(MAX_GRID_Y, -(-(hi - lo) // self.by))))
                dense_relax_rows[grid, (self.bx, self.by), stream](self.d_mat, self.d_dist, mask, nxt, self.d_flag, 1,
                                                                   self.inf, self.floor, lo, hi)
        return self.chunks

    def _tree_kernels(self):
        return dense_tight_parents, dense_tree_level, (self.d_mat,)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.n * self.n, "launches": launches,
                "transfer": self.transfer, "chunks": self.chunks if self.transfer == "streams" else 0}


def compile_targets():
    """(label, kernel, signature) for the offline sm_90 compile gate, for int32 and int64 distances."""
    out = []
    i32 = "int32[::1]"
    for w in ("int32", "int64"):
        d = f"{w}[::1]"
        csr = f"{i32}, {i32}, {d}"
        step = f"{i32}, {i32}, {i32}, int64, {w}, {w}"  # mask, next, flag, r, inf, floor
        rounds = f"{i32}, {i32}, {i32}, {w}, {w}, int64, int64[::1]"  # masks, flag, inf, floor, limit, out
        batched = f"{i32}, {i32}, {i32}, int64[::1], int64, {w}, {w}"  # mask, next, flag, base, offset, ...
        out += [
            (f"reset[{w}]", reset, f"void({d}, {i32}, {i32}, {i32}, int64, {w})"),
            (f"coo_relax[{w}]", coo_relax, f"void({i32}, {i32}, {d}, {d}, {step})"),
            (f"dense_relax[{w}]", dense_relax, f"void({w}[:, ::1], {d}, {step})"),
            (f"dense_relax_rows[{w}]", dense_relax_rows, f"void({w}[:, ::1], {d}, {step}, int64, int64)"),
            (f"pull_relax[{w}]", pull_relax, f"void({csr}, {d}, {d}, {step})"),
            (f"push_relax[{w}]", push_relax, f"void({csr}, {d}, {step})"),
            (f"coo_persistent[{w}]", coo_persistent, f"void({i32}, {i32}, {d}, {d}, {rounds})"),
            (f"push_persistent[{w}]", push_persistent, f"void({csr}, {d}, {rounds})"),
            (f"coo_batched[{w}]", coo_batched, f"void({i32}, {i32}, {d}, {d}, {batched})"),
            (f"push_batched[{w}]", push_batched, f"void({csr}, {d}, {batched})"),
            (f"pull_tight_parents[{w}]", pull_tight_parents, f"void({csr}, {d}, {i32}, {w})"),
            (f"pull_tree_level[{w}]", pull_tree_level, f"void({csr}, {d}, {i32}, {i32}, int64, {i32}, {w})"),
            (f"dense_tight_parents[{w}]", dense_tight_parents, f"void({w}[:, ::1], {d}, {i32}, {w})"),
            (f"dense_tree_level[{w}]", dense_tree_level,
             f"void({w}[:, ::1], {d}, {i32}, {i32}, int64, {i32}, {w})"),
        ]
    out.append(("tree_init", tree_init, f"void({i32}, {i32}, {i32}, int64)"))
    out.append(("advance", advance, "void(int64[::1], int64)"))
    return out
