"""The masked Bellman-Ford rounds that paper 004's families ``edgebf`` and ``vertexbf`` share: the state reset, a
source's lane of device state, the host round loop, device-resident rounds (one cooperative kernel, or CUDA graphs of
batched rounds) and trees grown from in-edges. The round protocol (mask stamps, flag words, the floor test, launch
modes, lanes): docs/solvers/common.md.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import NegativeCycleError, SolverError
from .base import Solver
from .gate import DISTANCES, kernel
from .launch import TARGET, Launch, NativeRead, blocks_per_sm, capture_graph, cooperative_grid, launch_grid, put
from .spec import PERSISTENT_BLOCKS_PER_SM


# ---- the state reset --------------------------------------------------------------------------------------------
@kernel("void({w}[::1], int32[::1], int32[::1], int32[::1], int64, {w})", cases=DISTANCES)
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


# ---- device-resident rounds: one cooperative kernel, or CUDA graphs of batched rounds ------------------------------
@cuda.jit(device=True)
def round_over(flag, r, limit):
    """After round r's barrier: stop on a cycle found by round r, on a quiet round, or at the round limit.

    Reads only what round r + 1 cannot change in a way that flips the answer (a thread already in round
    r + 1 writes stamps r + 1, which neither test below counts), so every thread decides alike."""
    cycle = flag[1]
    return (cycle != 0 and cycle <= r) or flag[0] < r or r >= limit


def persistent_rounds(name: str, one_round, doc: str):
    """The cooperative kernel ``name``: every round of ``one_round`` (_push_round or _coo_round, inlined), a
    grid-wide barrier after each, until :func:`round_over`; ``out[0]`` = rounds run. ``g0, g1, g2`` are the
    graph arrays the round takes (CSR or COO, with the weights)."""

    def persistent(g0, g1, g2, dist, mask_a, mask_b, flag, inf, floor, limit, out):
        grid = cuda.cg.this_grid()
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        r = 1
        while True:
            one_round(g0, g1, g2, dist, mask_a, mask_b, flag, r, inf, floor, start, stride)
            grid.sync()  # barrier: round r's distances, stamps and flags are visible to every thread
            if round_over(flag, r, limit):
                break
            r += 1
        if start == 0:
            out[0] = r

    persistent.__name__ = persistent.__qualname__ = name
    persistent.__doc__ = doc
    return cuda.jit(cache=True)(persistent)


@cuda.jit(device=True)
def batch_idle(flag, r, n):
    """In a replayed batch: round r has nothing to do once an earlier round was quiet or found a cycle,
    or past round n (a change in round n already proves a negative cycle)."""
    return flag[1] != 0 or flag[0] < r - 1 or r > n


@kernel("void(int64[::1], int64)")
@cuda.jit(cache=True)
def advance(base, rounds):
    """Last node of a batch: the next replay starts ``rounds`` rounds later."""
    if cuda.grid(1) == 0:
        base[0] += rounds


# ---- trees from in-edges ---------------------------------------------------------------------------------------------
@kernel("void(int32[::1], int32[::1], int32[::1], int64)")
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


class InEdgeTree:
    """Tree building by in-edge scans for one source's state (thread v picks its own parent): ``tight`` (one pass)
    and ``per_level`` kernels over ``graph_args`` (the reverse CSR, or the matrix), launched on
    ``stream``; the level buffers are its own, so trees of several sources can grow at once."""

    def __init__(self, tight, per_level, graph_args, *, n, block, stream, native, nonpositive, inf):
        grid = launch_grid(n, block)
        self.graph_args, self.nonpositive, self.inf = graph_args, nonpositive, inf
        self.tight = Launch(tight, grid, block, stream, native=native)
        if nonpositive:  # the one-pass tree needs no level array
            self.init = Launch(tree_init, grid, block, stream, native=native)
            self.per_level = Launch(per_level, grid, block, stream, native=native)
            self.level = cuda.device_array(n, dtype=np.int32)
            self.grew = cuda.device_array(1, dtype=np.int32)
            self.read_grew = NativeRead(self.grew, native=native, stream=stream)

    def build(self, dist, parent, source) -> int:
        """Fill ``parent`` from the converged ``dist``; returns launches."""
        if not self.nonpositive:
            # every weight > 0: a tight in-edge always comes from a strictly closer vertex, so any will do
            self.tight(*self.graph_args, dist, parent, self.inf)
            return 1
        # zero or negative weights: grow the tree level by level so a tight zero cycle cannot close a loop
        self.init(self.level, parent, self.grew, source)
        launches, depth = 1, 0
        while True:
            self.per_level(*self.graph_args, dist, self.level, parent, depth, self.grew, self.inf)
            launches += 1
            if self.read_grew()[0] != depth + 1:  # stamp: nobody joined level depth + 1
                return launches
            depth += 1


# ---- the host side ---------------------------------------------------------------------------------------------------
class Lane:
    """One source's state on the device, with the launches of its rounds: distances, masks, flag words, parents,
    the tree's buffers, all on ``stream`` (0: the legacy default stream). A solver runs one; bellmanford_allsources
    runs several on streams of their own, sharing the solver's device graph (read only), so that several sources'
    rounds are in flight at once. A round is ``issue()`` (the relaxation launches and the flag copy, queued) and
    ``settle()`` (wait for the flag, test it, swap the masks)."""

    def __init__(self, solver, stream=0):
        n, native = solver.n, solver.native
        self.solver, self.stream = solver, stream
        self.d_dist = cuda.device_array(n, dtype=solver.dtype)
        self.d_mask = cuda.device_array(n, dtype=np.int32)
        self.d_next = cuda.device_array(n, dtype=np.int32)
        self.d_parent = cuda.device_array(n, dtype=np.int32)
        self.d_flag = cuda.device_array(2, dtype=np.int32)
        self.h_flag = cuda.pinned_array(2, dtype=np.int32)
        self.d_other = cuda.device_array(n, dtype=solver.dtype) if solver.double_buffered else None
        self.reset = Launch(reset, launch_grid(n, solver.block), solver.block, stream, native=native)
        self.read_flag = NativeRead(self.d_flag, self.h_flag, native=native, stream=stream)
        self.relax = solver._relax_launch(stream)
        self.tree = solver._tree_of(stream)
        self.mask, self.nxt, self.r, self.launches = self.d_mask, self.d_next, 0, 0

    def start(self, source) -> None:
        """Queue the reset for ``source``: round 1's mask holds the source alone."""
        self.reset(self.d_dist, self.d_mask, self.d_next, self.d_flag, source, self.solver.inf)
        self.mask, self.nxt, self.r, self.launches = self.d_mask, self.d_next, 0, 1

    def issue(self) -> None:
        """Queue the next round's relaxation and its flag copy."""
        self.r += 1
        self.launches += self.solver._relax(self, self.r, self.mask, self.nxt)
        self.read_flag.issue()

    def settle(self) -> bool:
        """Wait for the round's flag (the round's only synchronisation); True when it changed nothing (converged).
        Raises NegativeCycleError."""
        flag = self.read_flag.wait()
        if flag[0] != self.r:
            self.check_cycle(0)
            return True
        self.check_cycle(self.r)
        self.mask, self.nxt = self.nxt, self.mask  # swap: this round's next mask is the next round's mask
        return False

    def check_cycle(self, last_changed: int) -> None:
        """Raise NegativeCycleError when the floor test fired or round n still changed something."""
        if self.h_flag[1]:
            raise NegativeCycleError(f"negative-weight cycle reachable from the source (found in round "
                                     f"{int(self.h_flag[1])})")
        if last_changed >= self.solver.n:
            raise NegativeCycleError(f"negative-weight cycle reachable from the source (change in round "
                                     f"{last_changed})")

    def finish(self, source) -> dict:
        """Queue the shortest-path tree of the converged distances; return the source's counters."""
        launches = self.launches + self.tree.build(self.d_dist, self.d_parent, source)
        return self.solver._counters(self.r, launches)

    def download_into(self, dist, parent) -> None:
        """Copy the distances and parents into host rows (behind the tree on this lane's stream)."""
        self.d_dist.copy_to_host(dist, stream=self.stream)
        self.d_parent.copy_to_host(parent, stream=self.stream)
        if self.stream:
            self.stream.synchronize()


class MaskedBellmanFord(Solver):
    """Shared host loop: reset, one relax launch + one flag copy per round, mask swap, cycle tests.

    Every kernel of a host-driven round goes through a :class:`~gpusp.solvers.common.launch.Launch` built once (per
    :class:`Lane`) and the flag through :class:`~gpusp.solvers.common.launch.NativeRead` on the lane's stream
    (``launcher`` 'native'), or through Numba's dispatcher and ``copy_to_host`` every time ('numba'). Solvers that
    define ``_device_rounds`` also run their rounds without a host round trip per round (``launch='persistent'``:
    one cooperative kernel; ``launch='graph'``: CUDA graphs of ``BATCH`` rounds, one flag read per replay); the
    relaxation body is the same device function in all three.
    """

    device = "gpu"
    BATCH = 32  # rounds per replayed graph; even, so that round r always uses the same mask order
    # how rounds are driven: the launch parameter of edgebf_coo and vertexbf_push; vertexbf_pull and edgebf_dense
    # have no such parameter (nor device-resident round kernels) and always launch each round from the host
    launch = "host"
    double_buffered = False  # a second distance buffer per lane (vertexbf_pull's Jacobi rounds)

    def __init__(self, graph, **params):
        """``params``: the solver's registry parameters, each named by its ``__init__``."""
        super().__init__(graph, **params)
        self.block = params["block"]
        self.n = graph.n
        self.dtype = graph.dtype
        self.inf = graph.dtype.type(graph.inf)
        self.floor = graph.dtype.type(-graph.path_bound)
        self.nonpositive = bool(graph.m and int(graph.weights.min()) <= 0)
        self.lane = None
        self.coop_grid = self.graph_exec = self.core_stream = None

    def upload(self):
        self._upload_graph()
        self.lane = Lane(self)
        self.d_base = cuda.device_array(1, dtype=np.int64)  # graph mode: rounds before this replay
        self.d_out = cuda.device_array(1, dtype=np.int64)  # persistent mode: rounds run

    def lanes(self, count: int) -> list[Lane]:
        """``count`` more lanes, each on a CUDA stream of its own, sharing this solver's uploaded graph (for
        bellmanford_allsources). Only host-driven rounds can interleave several sources."""
        if self.launch != "host":
            raise SolverError(f"sources on streams of their own need launch='host', not {self.launch!r}")
        return [Lane(self, cuda.stream()) for _ in range(count)]

    def _upload_graph(self) -> None:
        """Upload what every lane shares (the graph, read only)."""
        raise NotImplementedError

    def _relax_launch(self, stream):
        """The relaxation Launch of a lane on ``stream``."""
        raise NotImplementedError

    def _tree_of(self, stream):
        """The tree builder of a lane on ``stream`` (``build(dist, parent, source) -> launches``)."""
        raise NotImplementedError

    def _relax(self, lane, r, mask, nxt):
        """Launch round r's relaxation kernel of ``lane``; return the launch count."""
        raise NotImplementedError

    def _device_rounds(self):
        """(persistent kernel, batched kernel, its grid, graph arguments) for launch='persistent'/'graph'."""
        raise NotImplementedError

    def _rounds(self, source) -> tuple[int, int]:
        """Reset and iterate to convergence; return (rounds, launches). Raises NegativeCycleError."""
        lane = self.lane
        lane.start(source)
        if self.launch == "persistent":
            return self._rounds_persistent()
        if self.launch == "graph":
            return self._rounds_graph()
        while True:
            lane.issue()
            if lane.settle():
                return lane.r, lane.launches

    def _rounds_persistent(self) -> tuple[int, int]:
        """Every round in one cooperative kernel (grid: PERSISTENT_BLOCKS_PER_SM blocks per multiprocessor, capped
        at the co-resident maximum)."""
        lane = self.lane
        kernel, _, _, graph_args = self._device_rounds()
        args = (*graph_args, lane.d_dist, lane.d_mask, lane.d_next, lane.d_flag, self.inf, self.floor,
                np.int64(self.n), self.d_out)
        if self.coop_grid is None:
            self.coop_grid = cooperative_grid(kernel, args, self.block, blocks_per_sm(PERSISTENT_BLOCKS_PER_SM))
        kernel[self.coop_grid, self.block](*args)
        rounds = int(self.d_out.copy_to_host()[0])
        lane.d_flag.copy_to_host(lane.h_flag)
        lane.check_cycle(rounds if lane.h_flag[0] >= rounds else 0)
        return rounds, 2

    def _launch_batch(self, stream=0):
        """Issue one batch: BATCH rounds of the batched kernel, then the base advance."""
        lane = self.lane
        _, kernel, grid, graph_args = self._device_rounds()
        for offset in range(1, self.BATCH + 1):
            mask, nxt = (lane.d_mask, lane.d_next) if offset % 2 else (lane.d_next, lane.d_mask)
            kernel[grid, self.block, stream](*graph_args, lane.d_dist, mask, nxt, lane.d_flag, self.d_base,
                                             np.int64(offset), self.inf, self.floor)
        advance[1, 1, stream](self.d_base, np.int64(self.BATCH))

    def _capture(self):
        """The batch as a CUDA graph, captured once."""
        self._launch_batch()  # compiles every kernel before capture (and is a harmless idle batch)
        self.graph_exec, self.core_stream = capture_graph(self._launch_batch)

    def _rounds_graph(self) -> tuple[int, int]:
        """Replay BATCH-round graphs until one holds a quiet round; one flag read per replay."""
        lane = self.lane
        put[1, 1](self.d_base, 0, 0)
        if TARGET.gpu and self.graph_exec is None:
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
            lane.d_flag.copy_to_host(lane.h_flag)
            last = int(lane.h_flag[0])
            lane.check_cycle(last)
            if last < done:
                return last + 1, launches

    def run(self, source):
        rounds, launches = self._rounds(source)
        launches += self.lane.tree.build(self.lane.d_dist, self.lane.d_parent, source)
        return self._counters(rounds, launches)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "launches": launches}

    def download(self):
        return self.lane.d_dist.copy_to_host(), self.lane.d_parent.copy_to_host()
