"""The host side of the paper 004 family: the round loop shared by every solver (launched from the host, replayed
as CUDA graphs of batched rounds, or one cooperative kernel) and the four solvers of
:mod:`gpusp.solvers.edgebf`.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import NegativeCycleError
from ..base import Solver
from ..csr import DeviceGraph, build_parents
from ..launch import TARGET, blocks_per_sm, capture_graph, cooperative_grid, launch_grid, put
from ..rules import PERSISTENT_BLOCKS_PER_SM
from .kernels import (advance, coo_batched, coo_persistent, coo_relax, dense_relax, dense_relax_rows, pull_relax,
                      push_batched, push_persistent, push_relax, reset)
from .tree import (InEdgeTree, dense_tight_parents, dense_tree_level, pull_tight_parents, pull_tree_level,
                   tree_init)

MAX_GRID_Y = 65535


class _MaskedBellmanFord(Solver):
    """Shared host loop: reset, one relax launch + one flag copy per round, mask swap, cycle tests.

    Solvers that define ``_device_rounds`` also run their rounds without a host round trip per round
    (``launch='persistent'``: one cooperative kernel; ``launch='graph'``: CUDA graphs of ``BATCH``
    rounds, one flag read per replay); the relaxation body is the same device function in all three.
    """

    device = "gpu"
    BATCH = 32  # rounds per replayed graph; even, so that round r always uses the same mask order
    # how rounds are driven: the launch parameter of edgebf_coo and vertexbf_push; vertexbf_pull and edgebf_dense
    # have no such parameter (nor device-resident round kernels) and always launch each round from the host
    launch = "host"

    def __init__(self, graph, **params):
        """``params``: the solver's registry parameters, each named by its ``__init__``."""
        super().__init__(graph, **params)
        self.block = params["block"]
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
        """Every round in one cooperative kernel (grid: PERSISTENT_BLOCKS_PER_SM blocks per multiprocessor, capped
        at the co-resident maximum)."""
        kernel, _, _, graph_args = self._device_rounds()
        args = (*graph_args, self.d_dist, self.d_mask, self.d_next, self.d_flag, self.inf, self.floor,
                np.int64(self.n), self.d_out)
        if self.coop_grid is None:
            self.coop_grid = cooperative_grid(kernel, args, self.block, blocks_per_sm(PERSISTENT_BLOCKS_PER_SM))
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

    def __init__(self, graph, *, block, edges_per_thread, launch):
        super().__init__(graph, block=block, edges_per_thread=edges_per_thread, launch=launch)
        self.launch = launch
        self.k = edges_per_thread
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

    def __init__(self, graph, *, block, launch):
        super().__init__(graph, block=block, launch=launch)
        self.launch = launch

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


class PullSolver(InEdgeTree, _MaskedBellmanFord):
    """vertexbf_pull: thread per vertex takes the minimum over its in-edges into a second buffer."""

    def __init__(self, graph, *, block):
        super().__init__(graph, block=block)
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


class DenseSolver(InEdgeTree, _MaskedBellmanFord):
    """edgebf_dense: thread per entry of the dense n x n matrix, atomic min into the column's vertex.

    ``transfer`` (paper 004 sec. IV-A): 'pageable' uploads the matrix from ordinary host memory;
    'pinned' from page-locked memory (staged there when the solver is built, so the timed upload is the
    DMA alone); 'streams' moves the upload into every timed run: the matrix, in ``chunks`` row pieces
    from pinned memory, is copied on one stream per piece, and each piece's first-round relaxation is
    queued on its stream right behind its copy, so later pieces travel while earlier ones are relaxed.
    Compare the default's h2d_ms + median with the streamed median (which includes the transfer)."""

    def __init__(self, graph, *, block, transfer, chunks):
        super().__init__(graph, block=block, transfer=transfer, chunks=chunks)
        self.transfer, self.chunks = transfer, max(1, min(chunks, self.n))  # a piece holds at least one row
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
    """(label, kernel, signature) for the offline sm_90 compile gate, for int32 and int64 distances: the round
    kernels (:mod:`.kernels`) and the tree kernels (:mod:`.tree`)."""
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
            (f"dense_relax[{w}]", dense_relax, f"void({mat}, {d}, {step})"),
            (f"dense_relax_rows[{w}]", dense_relax_rows, f"void({mat}, {d}, {step}, int64, int64)"),
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
    out.append(("tree_init", tree_init, f"void({i32}, {i32}, {i32}, int64)"))
    out.append(("advance", advance, "void(int64[::1], int64)"))
    return out
