"""One rank of blockedfw_dist (:class:`Band`: its tile rows of the matrix on its GPU and the round schedule of
:mod:`.layout` as a program that yields its collectives) and the two ways collectives happen: :class:`Nccl` (one
process a GPU, NCCL through CuPy's binding, on the stream the kernels use) and :class:`Lockstep` (every rank in one
process, stepped together, copies on the host: the CUDA simulator's stand-in).
"""

from __future__ import annotations

import time

import numpy as np
from numba import cuda

from ....data.graph import Graph
from ..fast.solver import FastSolver
from . import layout
from .kernels import KINDS, arcs, band_kernels, diagonal, fill

THREADS = 256  # per block of the fill, arcs and diagonal kernels


def fast_config(graph: Graph, params: dict) -> FastSolver:
    """blockedfw_fast's choices for the graph (tile, register block, kernel kind and variant, phase 2, the hop
    tie-break and its INF) with every vertex a pivot and no paths: the same on every rank."""
    keep = ("tile", "regblock", "arith", "p12", "inner", "unroll", "stage", "phase2")
    return FastSolver(graph, **{k: params[k] for k in keep}, paths=False, launch="host", pivots="all")


class Band:
    """Rank ``rank`` of ``size``: tile rows I = rank, rank + size, ... of the padded matrix and one slot row of tiles
    for the round's pivot row, on the GPU this process sees."""

    def __init__(self, rank: int, size: int, graph: Graph, params: dict):
        self.rank, self.size, self.graph = rank, size, graph
        self.cfg = cfg = fast_config(graph, params)
        self.T, self.r, self.n_pad = cfg.T, cfg.r, cfg.n_pad
        self.rows = layout.local_rows(self.r, size, rank)
        self.dtype = np.dtype(cfg.device_dtype())
        self.inf = self.dtype.type(np.inf if self.dtype.kind == "f" else cfg.inf)
        self.comm = None
        self.d = None

    def upload(self) -> dict:
        """Allocate the band, copy the arcs, compile every kernel (launches that cover no tile); returns the
        seconds each took."""
        t0 = time.perf_counter()
        g, cfg = self.graph, self.cfg
        self.d = cuda.device_array(layout.band_shape(self.n_pad, self.T, self.size, self.rank), dtype=self.dtype)
        self.p = cuda.device_array((1, 1), dtype=np.int32)  # no paths: the kernels never touch it
        self.flag = cuda.device_array(1, dtype=np.int32)
        self.indptr = cuda.to_device(g.indptr)
        self.indices = cuda.to_device(g.indices)
        self.weights = cuda.to_device(cfg.tie.weights.astype(self.dtype))
        cuda.synchronize()
        upload_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.ks = band_kernels(self.T, self.R, cfg.kind, False, **cfg.variant)
        for name in ("relax", "update"):  # a row step with r = 1 covers no tile: compiles only
            self.ks[name][1, self.block](self.d, self.p, KINDS["row"], 0, 0, 1, 0, 0, -1)
        self.reset()
        diagonal[1, THREADS](self.d, self.flag, self.T, self.size, self.rank, g.n)
        cuda.synchronize()
        return {"upload_s": upload_s, "compile_s": time.perf_counter() - t0}

    @property
    def R(self) -> int:
        return self.cfg.R

    @property
    def block(self) -> tuple[int, int]:
        return (self.T // self.R, self.T // self.R)

    def reset(self) -> None:
        """The band's initial values: INF, 0 on the diagonal, the lightest arc per pair."""
        cells = self.d.shape[0] * self.d.shape[1]
        fill[min(65535, -(-cells // THREADS)), THREADS](self.d, self.inf, self.T, self.size, self.rank, self.graph.n)
        rows = self.rows * self.T
        if rows and self.graph.m:
            arcs[-(-rows // THREADS), THREADS](self.d, self.indptr, self.indices, self.weights, self.T, self.size,
                                                self.rank, rows)

    def program(self):
        """Every round's launches on this rank; yields ('bcast', root, rows) and, with negative weights, ('max',
        flag) for the communicator to carry out before the program goes on."""
        self.reset()
        relax, update = self.ks["relax"], self.ks["update"]
        product = self.cfg.phase2 == "product"
        T, r = self.T, self.r
        for t in range(r):
            for step in layout.round_steps(t, r, self.size, self.rank):
                if step.kind == "bcast":
                    yield "bcast", step.root, self.d[step.tp * T:(step.tp + 1) * T]
                    continue
                tiles = layout.tile_count(step, r)
                if not tiles:
                    continue
                k = relax if step.kind == "pivot" or (step.kind != "rest" and not product) else update
                k[tiles, self.block](self.d, self.p, KINDS[step.kind], t, step.tp, r, step.lo, step.hi, step.skip)
        if self.cfg.negative:
            self.flag.copy_to_device(np.zeros(1, dtype=np.int32))
            diagonal[-(-max(1, self.rows * T) // THREADS), THREADS](self.d, self.flag, T, self.size, self.rank,
                                                                    self.graph.n)
            yield "max", -1, self.flag

    def connect(self, uid) -> None:
        """Join the NCCL communicator ``uid`` (every rank at once) and carry out one small collective, so that NCCL's
        connections are made here and not in the first timed run."""
        self.comm = Nccl(self.rank, self.size, uid)
        self.comm.perform("max", -1, self.flag)
        cuda.synchronize()

    def run(self) -> dict:
        """The whole program with NCCL collectives, timed with CUDA events on this rank; its device ms and
        whether a negative cycle was found (the flag after the all-reduce)."""
        start, end = cuda.event(), cuda.event()
        start.record()
        for op, root, buf in self.program():
            if self.comm is not None:  # a lone rank's max is its own flag
                self.comm.perform(op, root, buf)
        end.record()
        end.synchronize()
        return {"rank_ms": cuda.event_elapsed_time(start, end), "negative_cycle": self.negative_cycle()}

    def negative_cycle(self) -> bool:
        return bool(self.cfg.negative and self.flag.copy_to_host()[0])

    def rows_of(self, vertices) -> dict:
        """Rows of the given global vertices that this rank holds, as {vertex: row} (host arrays, n columns): one
        copy per tile row they fall in."""
        out, T = {}, self.T
        vertices = np.asarray(vertices, dtype=np.int64)
        mine = vertices[(vertices // T) % self.size == self.rank]
        for I in np.unique(mine // T):
            L = int(I) // self.size
            block = self.d[L * T:(L + 1) * T].copy_to_host()
            for v in mine[mine // T == I]:
                out[int(v)] = block[int(v) % T, :self.graph.n]
        return out

    def write_rows(self, folder: str) -> list[str]:
        """Each of this rank's tile rows to ``folder/tilerow-I.npy`` (the device's values of rows I T .. I T + T - 1
        that are vertices, n columns; the hop tie-break, if any, not undone), written atomically; the file names."""
        from pathlib import Path

        from ....atomic import atomic_path

        T, n, names = self.T, self.graph.n, []
        for L in range(self.rows):
            I = layout.global_row(L, self.size, self.rank)
            rows = min(T, n - I * T)
            if rows <= 0:
                continue
            path = Path(folder) / f"tilerow-{I}.npy"
            with atomic_path(path, ".npy") as tmp:
                np.save(tmp, self.d[L * T:L * T + rows].copy_to_host()[:, :n])
            names.append(path.name)
        return names

    def checksum(self) -> dict:
        """Per rank: reachable pairs and the int64 sum of their distances over its rows (n x n cells only), so that
        ranks' shares add up to the whole matrix's without gathering it."""
        count, total = 0, 0
        T, n = self.T, self.graph.n
        step = max(T, (1 << 28) // max(1, self.n_pad) // T * T)  # whole tiles, about 2^28 cells a copy
        for lo in range(0, self.rows * T, step):
            block = self.d[lo:min(self.rows * T, lo + step)].copy_to_host()
            rows = layout.global_vertex(np.arange(lo, lo + block.shape[0]), T, self.size, self.rank)
            block = block[rows < n, :n]
            seen = block != self.inf
            count += int(seen.sum())
            total += int(block[seen].astype(np.int64).sum())
        return {"reachable": count, "sum": total}


class Nccl:
    """NCCL collectives on the legacy default stream (the one Numba's launches use) through CuPy's binding."""

    def __init__(self, rank: int, size: int, uid):
        from cupy.cuda import nccl

        self.nccl = nccl
        self.comm = nccl.NcclCommunicator(size, uid, rank)

    def perform(self, op: str, root: int, buf) -> None:
        nccl = self.nccl
        kinds = {np.dtype(np.int32): nccl.NCCL_INT32, np.dtype(np.int64): nccl.NCCL_INT64,
                 np.dtype(np.float32): nccl.NCCL_FLOAT32}
        ptr = buf.__cuda_array_interface__["data"][0]
        if op == "bcast":
            self.comm.broadcast(ptr, ptr, buf.size, kinds[np.dtype(buf.dtype)], root, 0)
        else:
            self.comm.allReduce(ptr, ptr, buf.size, kinds[np.dtype(buf.dtype)], nccl.NCCL_MAX, 0)


class Lockstep:
    """Every rank's program in this process, advanced together to its next collective, which is then carried out
    on the host: a broadcast copies the root's rows into the others' slots, a max is written back to every rank.
    The schedules must agree: every rank reaches the same collective in the same order (else an error)."""

    def run(self, bands: list[Band]) -> dict:
        start = time.perf_counter()
        programs = [b.program() for b in bands]
        while True:
            asks = [next(p, None) for p in programs]
            if all(a is None for a in asks):
                break
            if any(a is None for a in asks) or len({(a[0], a[1]) for a in asks}) != 1:
                raise RuntimeError(f"ranks disagree on the next collective: {asks}")
            op, root, _ = asks[0]
            if op == "bcast":
                rows = asks[root][2].copy_to_host()
                for q, (_, _, buf) in enumerate(asks):
                    if q != root:
                        buf.copy_to_device(rows)
            else:
                top = max(int(a[2].copy_to_host()[0]) for a in asks)
                for _, _, buf in asks:
                    buf.copy_to_device(np.full(1, top, dtype=np.int32))
        return {"rank_ms": (time.perf_counter() - start) * 1e3}

