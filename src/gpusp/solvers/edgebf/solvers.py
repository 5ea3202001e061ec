"""The host side of the paper 004 family: the round loop shared by every solver (launched from the host, replayed
as CUDA graphs of batched rounds, or one cooperative kernel) and the four solvers of
:mod:`gpusp.solvers.edgebf`.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import NegativeCycleError, SolverError
from ..base import Solver
from ..csr import DeviceGraph, TreeLaunches
from ..launch import TARGET, Launch, NativeRead, blocks_per_sm, capture_graph, cooperative_grid, launch_grid, put
from ..rules import PERSISTENT_BLOCKS_PER_SM
from .kernels import (advance, coo_batched, coo_persistent, coo_relax, dense_kernel, pull_relax, push_batched,
                      push_persistent, push_relax, reset)
from .tree import (InEdgeTree, dense_tight_parents, dense_tree_level, pull_tight_parents,
                   pull_tree_level, tree_init)

MAX_GRID_Y = 65535


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


class _MaskedBellmanFord(Solver):
    """Shared host loop: reset, one relax launch + one flag copy per round, mask swap, cycle tests.

    Every kernel of a host-driven round goes through a :class:`~gpusp.solvers.launch.Launch` built once (per
    :class:`Lane`) and the flag through :class:`~gpusp.solvers.launch.NativeRead` on the lane's stream (``launcher``
    'native'), or through Numba's dispatcher and ``copy_to_host`` every time ('numba'). Solvers that define
    ``_device_rounds`` also run their rounds without a host round trip per round (``launch='persistent'``: one
    cooperative kernel; ``launch='graph'``: CUDA graphs of ``BATCH`` rounds, one flag read per replay); the
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


class CooSolver(_MaskedBellmanFord):
    """edgebf_coo: thread per edge (k edges per thread, grid-strided) on COO arrays, atomic min."""

    def __init__(self, graph, *, block, edges_per_thread, launch, launcher):
        super().__init__(graph, block=block, edges_per_thread=edges_per_thread, launch=launch, launcher=launcher)
        self.launch = launch
        self.k = edges_per_thread
        self.src = graph.coo()[0]
        # enough blocks that the grid-stride loop gives each thread about k edges
        self.grid = launch_grid(-(-graph.m // self.k), self.block)

    def _upload_graph(self):
        self.dg = DeviceGraph(self.graph).upload()
        self.d_src = cuda.to_device(self.src)

    def _relax_launch(self, stream):
        return Launch(coo_relax, self.grid, self.block, stream, native=self.native)

    def _tree_of(self, stream):
        return TreeLaunches(self.dg, block=self.block, stream=stream, native=self.native)

    def _relax(self, lane, r, mask, nxt):
        dg = self.dg
        lane.relax(self.d_src, dg.indices, dg.weights, lane.d_dist, mask, nxt, lane.d_flag, r, self.inf, self.floor)
        return 1

    def _device_rounds(self):
        dg = self.dg
        return coo_persistent, coo_batched, self.grid, (self.d_src, dg.indices, dg.weights)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.graph.m, "launches": launches}


class PushSolver(_MaskedBellmanFord):
    """vertexbf_push: thread per changed vertex pushes along its out-edges with atomic min."""

    def __init__(self, graph, *, block, launch, launcher):
        super().__init__(graph, block=block, launch=launch, launcher=launcher)
        self.launch = launch

    def _upload_graph(self):
        self.dg = DeviceGraph(self.graph).upload()

    def _relax_launch(self, stream):
        return Launch(push_relax, launch_grid(self.n, self.block), self.block, stream, native=self.native)

    def _tree_of(self, stream):
        return TreeLaunches(self.dg, block=self.block, stream=stream, native=self.native)

    def _relax(self, lane, r, mask, nxt):
        dg = self.dg
        lane.relax(dg.indptr, dg.indices, dg.weights, lane.d_dist, mask, nxt, lane.d_flag, r, self.inf, self.floor)
        return 1

    def _device_rounds(self):
        dg = self.dg
        return push_persistent, push_batched, launch_grid(self.n, self.block), (dg.indptr, dg.indices, dg.weights)


class PullSolver(_MaskedBellmanFord):
    """vertexbf_pull: thread per vertex takes the minimum over its in-edges into a second buffer."""

    double_buffered = True

    def __init__(self, graph, *, block, launcher):
        super().__init__(graph, block=block, launcher=launcher)
        self.rev = graph.reverse()

    def _upload_graph(self):
        self.rg = DeviceGraph(self.rev).upload()

    def _relax_launch(self, stream):
        return Launch(pull_relax, launch_grid(self.n, self.block), self.block, stream, native=self.native)

    def _tree_of(self, stream):
        rg = self.rg
        return InEdgeTree(pull_tight_parents, pull_tree_level, (rg.indptr, rg.indices, rg.weights), n=self.n,
                          block=self.block, stream=stream, native=self.native, nonpositive=self.nonpositive,
                          inf=self.inf)

    def _relax(self, lane, r, mask, nxt):
        rg = self.rg
        read, write = lane.d_dist, lane.d_other
        lane.relax(rg.indptr, rg.indices, rg.weights, read, write, mask, nxt, lane.d_flag, r, self.inf, self.floor)
        # the buffer just written holds the newest distances (also after the final quiet round)
        lane.d_dist, lane.d_other = write, read
        return 1

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.graph.m, "launches": launches}


class DenseSolver(_MaskedBellmanFord):
    """edgebf_dense: thread per entry of the dense n x n matrix (or ``edges_per_thread`` entries in a 2-D
    grid-stride loop, Alg. 5), atomic min into the column's vertex; ``layout`` puts the column (coalesced) or the
    row (strided) on x.

    ``transfer`` (paper 004 sec. IV-A): 'pageable' uploads the matrix from ordinary host memory;
    'pinned' from page-locked memory (staged there when the solver is built, so the timed upload is the
    DMA alone); 'streams' moves the upload into every timed run: the matrix, in ``chunks`` row pieces
    from pinned memory, is copied on one stream per piece, and each piece's first-round relaxation is
    queued on its stream right behind its copy, so later pieces travel while earlier ones are relaxed.
    Compare the default's h2d_ms + median with the streamed median (which includes the transfer)."""

    def __init__(self, graph, *, block, transfer, chunks, layout, edges_per_thread, launcher):
        super().__init__(graph, block=block, transfer=transfer, chunks=chunks, layout=layout,
                         edges_per_thread=edges_per_thread, launcher=launcher)
        self.transfer, self.chunks = transfer, max(1, min(chunks, self.n))  # a piece holds at least one row
        self.layout, self.k = layout, edges_per_thread
        self.mat = graph.to_dense()
        if transfer != "pageable":  # page-locked staging copy, outside every timed step
            self.h_mat = cuda.pinned_array(self.mat.shape, dtype=self.mat.dtype)
            self.h_mat[...] = self.mat
        self.kernel = dense_kernel(layout == "strided", edges_per_thread > 1)
        self.bx = min(32, self.block)
        self.by = self.block // self.bx
        # Alg. 5's k entries per thread: ky rows of the y extent times kx of the x extent (ky >= kx, powers of 2)
        self.ky = 1 << ((edges_per_thread.bit_length()) // 2)
        self.kx = edges_per_thread // self.ky

    def grid_for(self, rows: int) -> tuple[int, int]:
        """The 2-D grid over ``rows`` matrix rows by n columns: x spans columns (coalesced) or rows (strided),
        shrunk by kx (ky) along x (y) for Alg. 5; y at most MAX_GRID_Y blocks (the kernel strides beyond)."""
        ext_x, ext_y = (rows, self.n) if self.layout == "strided" else (self.n, rows)
        return (max(1, -(-ext_x // (self.bx * self.kx))),
                max(1, min(MAX_GRID_Y, -(-ext_y // (self.by * self.ky)))))

    def _upload_graph(self):
        if self.transfer == "streams":
            self.d_mat = cuda.device_array(self.mat.shape, dtype=self.mat.dtype)  # filled inside each run
            bounds = np.linspace(0, self.n, self.chunks + 1).astype(np.int64)
            self.pieces = []
            for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
                if hi > lo:
                    stream = cuda.stream()
                    launch = Launch(self.kernel, self.grid_for(hi - lo), (self.bx, self.by), stream,
                                    native=self.native)
                    self.pieces.append((self.d_mat[lo:hi], self.h_mat[lo:hi], stream, launch, lo, hi))
        else:
            self.d_mat = cuda.to_device(self.mat if self.transfer == "pageable" else self.h_mat)

    def _relax_launch(self, stream):
        return Launch(self.kernel, self.grid_for(self.n), (self.bx, self.by), stream, native=self.native)

    def _tree_of(self, stream):
        return InEdgeTree(dense_tight_parents, dense_tree_level, (self.d_mat,), n=self.n, block=self.block,
                          stream=stream, native=self.native, nonpositive=self.nonpositive, inf=self.inf)

    def _relax(self, lane, r, mask, nxt):
        if self.transfer == "streams" and r == 1:
            return self._stream_first_round(lane, mask, nxt)
        lane.relax(self.d_mat, lane.d_dist, mask, nxt, lane.d_flag, r, self.inf, self.floor, 0, self.n)
        return 1

    def _stream_first_round(self, lane, mask, nxt) -> int:
        """Round 1 piece by piece: copy rows lo..hi-1 on the piece's stream, then relax them on the same stream.
        The streams block on the legacy default stream, so the reset before and the flag copy after are ordered."""
        for d_rows, h_rows, stream, launch, lo, hi in self.pieces:
            d_rows.copy_to_device(h_rows, stream=stream)
            launch(self.d_mat, lane.d_dist, mask, nxt, lane.d_flag, 1, self.inf, self.floor, lo, hi)
        return len(self.pieces)

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.n * self.n, "launches": launches,
                "transfer": self.transfer, "chunks": self.chunks if self.transfer == "streams" else 0}


def compile_targets():
    """(label, kernel, signature) for the offline sm_90 compile gate, for int32 and int64 distances: the round
    kernels (:mod:`.kernels`, the dense one per layout and with or without Alg. 5's loop) and the tree kernels
    (:mod:`.tree`)."""
    out = []
    i32 = "int32[::1]"
    for w in ("int32", "int64"):
        d = f"{w}[::1]"
        mat = f"{w}[:, ::1]"
        csr = f"{i32}, {i32}, {d}"
        step = f"{i32}, {i32}, {i32}, int64, {w}, {w}"  # mask, next, flag, r, inf, floor
        rounds = f"{i32}, {i32}, {i32}, {w}, {w}, int64, int64[::1]"  # masks, flag, inf, floor, limit, out
        batched = f"{i32}, {i32}, {i32}, int64[::1], int64, {w}, {w}"  # mask, next, flag, base, offset, ...
        level = f"{d}, {i32}, {i32}, int64, {i32}, {w}"  # dist, level, parent, depth, grew, inf
        out += [
            (f"reset[{w}]", reset, f"void({d}, {i32}, {i32}, {i32}, int64, {w})"),
            (f"coo_relax[{w}]", coo_relax, f"void({i32}, {i32}, {d}, {d}, {step})"),
            (f"pull_relax[{w}]", pull_relax, f"void({csr}, {d}, {d}, {step})"),
            (f"push_relax[{w}]", push_relax, f"void({csr}, {d}, {step})"),
            (f"coo_persistent[{w}]", coo_persistent, f"void({i32}, {i32}, {d}, {d}, {rounds})"),
            (f"push_persistent[{w}]", push_persistent, f"void({csr}, {d}, {rounds})"),
            (f"coo_batched[{w}]", coo_batched, f"void({i32}, {i32}, {d}, {d}, {batched})"),
            (f"push_batched[{w}]", push_batched, f"void({csr}, {d}, {batched})"),
            (f"pull_tight_parents[{w}]", pull_tight_parents, f"void({csr}, {d}, {i32}, {w})"),
            (f"pull_tree_level[{w}]", pull_tree_level, f"void({csr}, {level})"),
            (f"dense_tight_parents[{w}]", dense_tight_parents, f"void({mat}, {d}, {i32}, {w})"),
            (f"dense_tree_level[{w}]", dense_tree_level, f"void({mat}, {level})"),
        ]
        for layout in ("coalesced", "strided"):
            for multi in (False, True):
                label = f"dense_relax[{layout},{'k>1' if multi else 'k=1'},{w}]"
                out.append((label, dense_kernel(layout == "strided", multi), f"void({mat}, {d}, {step}, int64, int64)"))
    out.append(("tree_init", tree_init, f"void({i32}, {i32}, {i32}, int64)"))
    out.append(("advance", advance, "void(int64[::1], int64)"))
    return out
