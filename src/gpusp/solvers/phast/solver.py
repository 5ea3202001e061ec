"""``phast_gpu``: PHAST's downward sweeps on the GPU over a contraction hierarchy (:mod:`.contraction`).

The solver builds the hierarchy when it is constructed (host), runs the upward searches on host threads in ``run`` and
sweeps a batch of sources level by level in one cooperative kernel (:func:`_kernel`), parents over tight arcs and the
rows out in the same launch; ``sweep`` hands each batch's distances to a reduction instead (:mod:`.sweep`). Algorithm,
parameters, complexity and the paper: docs/solvers/phast.md.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from . import contraction, sweep
from .core import CoreSearch
from ..common.base import Solver
from ..common.dense import Result
from ..common.gate import DISTANCES, kernel
from ..common.johnson import reweighting
from ..common.launch import Launch, blocks_per_sm, cooperative_grid
from ..common.spec import refuse_split
from .spec import (CORE_DEGREE, PHAST_BLOCKS_PER_SM, ROAD_MAX_DEGREE, ROAD_MEAN_DEGREE,
                    phast_batch)

WARP = 32
TILE = (WARP, WARP + 1)  # a 32 x 32 transpose tile, padded against bank conflicts
# control array (int64): round number, zero-weight rounds, then three round counters used in rotation
ROUND, ZERO_ROUNDS, FLAG = 0, 1, 2
CTL_SIZE = 5

_WTYPES = {"int32": numba.int32, "int64": numba.int64}
U32, I32 = numba.uint32, numba.int32


def auto_core_degree(graph, core_degree: int) -> int:
    """core_degree -1: 0 (contract everything) on road-like graphs, whose small separators keep the hierarchy thin
    (mean out-degree <= ROAD_MEAN_DEGREE and no vertex over ROAD_MAX_DEGREE arcs), else CORE_DEGREE: a social graph's
    dense core does not contract in bounded time."""
    if core_degree >= 0:
        return core_degree
    degree = np.diff(graph.indptr)
    road = graph.m <= ROAD_MEAN_DEGREE * max(graph.n, 1) and int(degree.max(initial=0)) <= ROAD_MAX_DEGREE
    return 0 if road else CORE_DEGREE


# --- device functions ------------------------------------------------------------------------------------------------
def _sweep_fns(w: str):
    """(scatter, pull) for distances of type ``w``."""
    in_min = sweep.in_min_fn(w)

    @cuda.jit(device=True)
    def scatter(space_row, space_v, space_d, dist, e0, e1, base, sshift, start, stride):
        """Write the batch's upward search spaces (entries e0 .. e1 - 1) into its distance slots."""
        for e in range(e0 + start, e1, stride):
            dist[U32((space_v[U32(e)] << sshift) + space_row[U32(e)] - base)] = space_d[U32(e)]

    @cuda.jit(device=True)
    def pull(down_ptr, down_tail, down_w, dist, lo, hi, sshift, ns, start, stride, inf):
        """Vertices lo .. hi - 1 (one level) x the batch's sources: each takes min(dist[u] + w) over its in-arcs."""
        smask = I32((1 << sshift) - 1)
        items = I32((hi - lo) << sshift)
        for i in range(start, items, stride):
            s = I32(i & smask)
            if s < ns:
                v = I32(lo + (i >> sshift))
                vs = U32((v << sshift) + s)
                dist[vs] = in_min(down_ptr, down_tail, down_w, dist, v, s, sshift, dist[vs], inf)

    return scatter, pull


def _parent_fns(WT):
    """(tight_pass, zero_round) for distances ``WT``."""

    @cuda.jit(device=True)
    def tight_pass(in_ptr, in_tail, in_w, dist, parent, hop, sources, base, ns, sshift, q, strict, inf):
        """Each (vertex, source) takes its first tight in-arc (``strict``: of weight > 0 only, marking round q)."""
        n = in_ptr.size - 1
        smask = I32((1 << sshift) - 1)
        for i in range(cuda.grid(1), n << sshift, cuda.gridsize(1)):
            s = I32(i & smask)
            if s < ns:
                v = I32(i >> sshift)
                vs = U32(i)
                dv = dist[vs]
                if v == sources[U32(base + s)]:
                    if strict:
                        hop[vs] = q
                elif dv != inf:
                    for a in range(in_ptr[v], in_ptr[v + 1]):
                        w = in_w[U32(a)]
                        u = in_tail[U32(a)]
                        du = dist[U32((u << sshift) + s)]
                        if du != inf and du + w == dv and (w > 0 or not strict):
                            parent[vs] = u
                            if strict:
                                hop[vs] = q
                            break

    @cuda.jit(device=True)
    def zero_round(in_ptr, in_tail, in_w, dist, parent, hop, ns, sshift, q, inf):
        """Round q: a reached vertex without parent takes a zero-weight tight in-arc from a vertex of an earlier
        round; returns whether this thread gave any vertex a parent."""
        n = in_ptr.size - 1
        smask = I32((1 << sshift) - 1)
        changed = False
        for i in range(cuda.grid(1), n << sshift, cuda.gridsize(1)):
            s = I32(i & smask)
            vs = U32(i)
            if s < ns and hop[vs] < 0 and dist[vs] != inf:
                v = I32(i >> sshift)
                dv = dist[vs]
                for a in range(in_ptr[v], in_ptr[v + 1]):
                    if in_w[U32(a)] == 0:
                        us = U32((in_tail[U32(a)] << sshift) + s)
                        hu = hop[us]
                        # a mark of this round reads as -1 or q: neither is taken, so the rounds strictly fall
                        if hu >= 0 and hu < q and dist[us] == dv:
                            parent[vs] = in_tail[U32(a)]
                            hop[vs] = q
                            changed = True
                            break
        return changed

    return tight_pass, zero_round


def _rows_fn(WT):
    """write_rows for distances ``WT``."""

    @cuda.jit(device=True)
    def write_rows(dist, parent, hop, position, order, out_dist, out_parent, row0, ns, sshift, rounds, inf):
        """Copy the batch into rows row0 .. row0 + ns - 1 (original vertex order) and reset every slot read."""
        n = position.size
        S = I32(1 << sshift)
        if S < WARP:  # thread per (source, vertex): coalesced writes, reads through the renumbering
            for idx in range(cuda.grid(1), ns * n, cuda.gridsize(1)):
                s = I32(idx // n)
                v = I32(idx - s * n)
                vs = U32((position[U32(v)] << sshift) + s)
                p = parent[vs]
                out_dist[row0 + s, v] = dist[vs]
                out_parent[row0 + s, v] = order[U32(p)] if p >= 0 else -1
                dist[vs] = inf
                parent[vs] = -1
                if rounds:
                    hop[vs] = -1
            return
        tile_d = cuda.shared.array(TILE, WT)
        tile_p = cuda.shared.array(TILE, numba.int32)
        tx = I32(cuda.threadIdx.x % WARP)
        ty = I32(cuda.threadIdx.x // WARP)
        rows = I32(cuda.blockDim.x // WARP)
        tiles_s = I32((ns + WARP - 1) // WARP)
        for t in range(cuda.blockIdx.x, ((n + WARP - 1) // WARP) * tiles_s, cuda.gridDim.x):
            v0 = I32((t // tiles_s) * WARP)
            s0 = I32((t % tiles_s) * WARP)
            for i in range(ty, WARP, rows):
                if v0 + i < n and s0 + tx < ns:
                    vs = U32((position[U32(v0 + i)] << sshift) + s0 + tx)
                    p = parent[vs]
                    tile_d[i, tx] = dist[vs]
                    tile_p[i, tx] = order[U32(p)] if p >= 0 else -1
                    dist[vs] = inf
                    parent[vs] = -1
                    if rounds:
                        hop[vs] = -1
            cuda.syncthreads()  # the tile is staged
            for i in range(ty, WARP, rows):
                if s0 + i < ns and v0 + tx < n:
                    out_dist[row0 + s0 + i, v0 + tx] = tile_d[tx, i]
                    out_parent[row0 + s0 + i, v0 + tx] = tile_p[tx, i]
            cuda.syncthreads()  # the tile is consumed before the next one overwrites it

    return write_rows


# --- the cooperative kernel -----------------------------------------------------------------------------------------
@kernel("void(Tuple((int32[::1], int32[::1], {w}[::1], int32[::1])), Tuple((int32[::1], int32[::1], {w}[::1])), "
        "int32[::1], int32[::1], Tuple((int32[::1], int64[::1], int32[::1], int32[::1], {w}[::1])), "
        "Tuple(({w}[::1], int32[::1], int32[::1], int64[::1])), Tuple(({w}[:, ::1], int32[:, ::1])), "
        "int64, int64, int64, int64, int64, boolean, boolean, boolean, {w})", cases=DISTANCES)
@functools.cache
def _kernel(w: str):
    """The cooperative sweep kernel for distances of type ``w``."""
    WT = _WTYPES[w]
    scatter, pull = _sweep_fns(w)
    tight_pass, zero_round = _parent_fns(WT)
    write_rows = _rows_fn(WT)

    @cuda.jit
    def sweep_batches(sweep, inarcs, order, position, space, work, out, first, last, nsrc, sshift, fused, fill, staged,
                      rounds, inf):
        """Batches first .. last - 1 of 2^sshift sources: scatter, sweep levels, parents, rows. The records: ``sweep``
        the downward graph by head and the level offsets, ``inarcs`` the original graph's in-arcs, ``space`` the
        sources and their upward search spaces, ``work`` the batch's working arrays, ``out`` the result's rows."""
        down_ptr, down_tail, down_w, level_ptr = sweep
        in_ptr, in_tail, in_w = inarcs
        sources, space_ptr, space_row, space_v, space_d = space
        dist, parent, hop, ctl = work
        out_dist, out_parent = out
        grid = cuda.cg.this_grid()
        tid = cuda.grid(1)
        nthreads = cuda.gridsize(1)
        nlev = level_ptr.size - 1
        S = 1 << sshift
        if fill:  # the launch's first batch starts from INF / -1; each batch's write-out resets what it read
            for i in range(tid, dist.size, nthreads):
                dist[i] = inf
                parent[i] = -1
                if rounds:
                    hop[i] = -1
            grid.sync()  # the working arrays are reset before any search space lands in them
        q = ctl[ROUND]
        zero_rounds = 0
        for b in range(first, last):
            base = b * S
            ns = min(S, nsrc - base)
            scatter(space_row, space_v, space_d, dist, space_ptr[base], space_ptr[base + ns], base, sshift, tid,
                    nthreads)
            grid.sync()  # every search space is in place before the first level pulls from it
            if fused > 0:
                if cuda.blockIdx.x == 0:
                    for lev in range(1, fused + 1):
                        pull(down_ptr, down_tail, down_w, dist, level_ptr[lev], level_ptr[lev + 1], sshift, ns,
                             cuda.threadIdx.x, cuda.blockDim.x, inf)
                        cuda.syncthreads()  # level lev is final before level lev + 1 reads it
                grid.sync()  # the top levels swept by block 0 are visible to every block
            for lev in range(fused + 1, nlev):
                pull(down_ptr, down_tail, down_w, dist, level_ptr[lev], level_ptr[lev + 1], sshift, ns, tid,
                     nthreads, inf)
                grid.sync()  # level lev is final before level lev + 1 reads it
            if tid == 0:
                ctl[FLAG + (q + 1) % 3] = 0  # read by everybody two rounds ago; counts round q + 1
            tight_pass(in_ptr, in_tail, in_w, dist, parent, hop, sources, base, ns, sshift, q, rounds, inf)
            q += 1
            grid.sync()  # every parent of a positive tight arc (and its round mark) is written
            while rounds:
                if tid == 0:
                    ctl[FLAG + (q + 1) % 3] = 0  # the counter read after round q - 2, for round q + 1
                if zero_round(in_ptr, in_tail, in_w, dist, parent, hop, ns, sshift, q, inf):
                    cuda.atomic.add(ctl, FLAG + q % 3, 1)  # atomic: counts the threads that gave out a parent
                grid.sync()  # round q is complete and counted
                zero_rounds += 1
                q += 1
                if ctl[FLAG + (q - 1) % 3] == 0:
                    break
            write_rows(dist, parent, hop, position, order, out_dist, out_parent, 0 if staged else base, ns, sshift,
                       rounds, inf)
            grid.sync()  # the rows are out and the slots reset before the next batch scatters
        if tid == 0:  # every thread read ctl[ROUND] before its first barrier
            ctl[ROUND] = q
            ctl[ZERO_ROUNDS] += zero_rounds

    return sweep_batches


def _fits_int32(n: int, S: int) -> None:
    """Refuse a batch whose n x S slots overflow the kernels' int32 indices."""
    if n * S >= 2**31:
        raise SolverError(f"phast_gpu: n x batch = {n} x {S} overflows the kernel's int32 indices; use a smaller batch")


CLOSURES_FROM = 8  # 'auto' composes every space once from a sweep of n / 8 sources up (12x cheaper than searches)


class PhastSolver(Solver):
    """phast_gpu: contraction hierarchy on the host, upward searches on the host, batched downward sweeps on the
    device in one cooperative kernel."""

    device = "gpu"

    def __init__(self, graph, *, batch, block, grid, fuse, parents, settle, hops, core_degree, threads, reweight,
                 upward="auto", core_search="host", gpus=1):
        refuse_split("phast_gpu", gpus)  # an every-tree sweep builds it with gpus=1 and splits the sources itself
        # negative weights: the hierarchy (witness searches, upward Dijkstra: w >= 0) is built on reduced ones
        self.johnson = reweighting(graph, reweight, "phast_gpu")
        graph = self.johnson.reduced if self.johnson else graph
        super().__init__(graph, batch=batch, block=block, grid=grid, fuse=fuse, parents=parents, settle=settle,
                         hops=hops, core_degree=core_degree, threads=threads, reweight=reweight, upward=upward,
                         core_search=core_search)
        if core_search == "device" and batch > 1:
            raise SolverError("phast_gpu core_search=device answers one source a launch: batch must be 0 or 1")
        positive = graph.m == 0 or int(graph.weights.min()) > 0
        if parents == "tight" and not positive:
            raise SolverError("phast_gpu parents=tight needs every weight > 0 (a zero-weight cycle is all tight, "
                              "and a local pick could close a loop); use parents=rounds or auto")
        self.rounds = not (parents == "tight" or (parents == "auto" and positive))
        self.host_compile_s = contraction.warm()  # the host's JIT apart: the build's time is the build's
        self.h = contraction.build(graph, settle=settle, hops=hops, core_degree=auto_core_degree(graph, core_degree))
        self.threads = threads or os.cpu_count() or 1
        self.pool = None  # the host threads of the upward searches (_host_pool)
        self.scratch = threading.local()  # each host thread's upward-search scratch (_search), made at first use
        if upward == "closures" and self.h.core:
            raise SolverError(f"phast_gpu upward=closures needs a hierarchy without a core ({self.h.core} core "
                              "vertices are left: their arcs run both ways, so spaces cannot be composed in rank "
                              "order); use core_degree=0 or upward=search")
        self.upward = upward
        # the core searched by deltastep_gpu from each query's entries (.core), where there is one
        self.core = CoreSearch(self.h, graph, block) if core_search == "device" and self.h.core else None
        if self.core:
            batch = 1
        self.closures = None  # every vertex's upward space (contraction.upward_closures): see prepare_sweep
        self.closures_ms = 0.0
        self.preprocess_s = self.h.seconds + (self.johnson.seconds if self.johnson else 0.0)
        inf = int(graph.inf)
        h = self.h
        self.down = (h.down_ptr.astype(np.int32), h.down_tail, np.minimum(h.down_w, inf).astype(graph.dtype))
        src, dst, w = contraction.simple_arcs(graph)
        # int32 keys, as the build groups its arcs: the grouping compiled (or warmed) there serves here too
        in_ptr, in_tail, in_w = contraction.group_arcs(graph.n, h.position[dst], h.position[src], w)
        self.inarcs = (in_ptr.astype(np.int32), in_tail, in_w.astype(graph.dtype))
        self.level_ptr = h.level_ptr.astype(np.int32)
        self.preprocess_bytes = h.nbytes + sum(a.nbytes for a in self.down) + self.level_ptr.nbytes + \
            2 * 4 * graph.n + (self.johnson.nbytes if self.johnson else 0)
        self.kernel = _kernel(graph.dtype.name)
        self.block, self.want_grid, self.batch, self.fuse = block, grid, batch, fuse
        self.S = self.grid = self.sweep_grid = None
        self.out = self.parent_w = None
        self.epoch = 0  # launches of sweep(): the marks of one launch's search spaces
        self.marks = self.spaces = None  # a sweep's marks, touched list and counters; its search-space buffers

    def __getstate__(self):
        """The built solver's host state, the hierarchy with it, shipped to a sweep's ranks (spawned processes:
        :mod:`gpusp.measure.alltrees_ranks`) before upload; the compiled kernel and the host threads stay behind."""
        if getattr(self, "d_down", None) is not None:
            raise SolverError("phast_gpu: a solver ships to another process before its upload, not after")
        if self.core:
            raise SolverError("phast_gpu core_search=device answers sources one at a time (run); an every-tree sweep "
                              "searches the core on the host (core_search=host)")
        return {key: value for key, value in vars(self).items() if key not in ("kernel", "pool", "scratch")}

    def __setstate__(self, state):
        self.__dict__.update(state, pool=None, scratch=threading.local())
        self.kernel = _kernel(self.graph.dtype.name)

    def upload(self):
        h = self.h
        self.d_down = tuple(cuda.to_device(a) for a in self.down)
        self.d_in = tuple(cuda.to_device(a) for a in self.inarcs)
        self.d_level_ptr = cuda.to_device(self.level_ptr)
        self.d_order = cuda.to_device(h.order)
        self.d_position = cuda.to_device(h.position)
        self.ctl = cuda.device_array(CTL_SIZE, dtype=np.int64)
        if self.core:
            self.core.upload()

    def _setup(self, k: int):
        """Working arrays, result and grid for K sources (kept while K and S stay the same)."""
        g, n = self.graph, self.graph.n
        S = self.batch or phast_batch(k, n, g.dtype.itemsize)
        _fits_int32(n, S)
        if self.S != S or self.parent_w is None:  # a sweep's arrays hold no parents
            self.S = S
            self.dist = cuda.device_array(n * S, dtype=g.dtype)
            self.parent_w = cuda.device_array(n * S, dtype=np.int32)
            self.hop = cuda.device_array(n * S if self.rounds else 1, dtype=np.int32)
            self.grid = None
        if self.out is None or self.out.rows != k:
            self.out = None  # the old result is freed before the new one is sized
            self.out = Result(g, k, S)
        self.fused = self._fused(S)

    def _fused(self, S: int) -> int:
        """How many levels below the top block 0 sweeps alone: each at most ``fuse`` vertex x source items."""
        sizes = np.diff(self.h.level_ptr)
        limit = self.block if self.fuse < 0 else self.fuse
        fused = 0
        while fused + 1 < len(sizes) and (int(sizes[fused + 1]) << (S.bit_length() - 1)) <= limit:
            fused += 1
        return fused

    def _args(self, space, first, last, fill):
        out = self.out
        return ((*self.d_down, self.d_level_ptr), self.d_in, self.d_order, self.d_position, space,
                (self.dist, self.parent_w, self.hop, self.ctl), (out.dist, out.parent), np.int64(first),
                np.int64(last), np.int64(out.rows), np.int64(self.S.bit_length() - 1), np.int64(self.fused), fill,
                not out.on_device, self.rounds, self.graph.dtype.type(self.graph.inf))

    def _host_pool(self) -> ThreadPoolExecutor | None:
        """The host threads of the upward searches, made at first use (None on one thread); the searches release
        the GIL, so each takes a chunk of a batch's sources."""
        if self.pool is None and self.threads > 1:
            self.pool = ThreadPoolExecutor(self.threads)
        return self.pool

    def _search(self, part: np.ndarray):
        """The upward searches from ``part`` (new ids) with stall-on-demand over the downward arcs: about a third of
        a plain search's entries on NY, in under half its time."""
        h = self.h
        scratch = getattr(self.scratch, "arrays", None)
        if scratch is None:  # 16 bytes a vertex a thread, kept: clearing them costs more than a search's few hundred
            scratch = self.scratch.arrays = contraction.search_scratch(h.n)
        # with the core searched on the device its vertices are kept, not expanded
        return contraction.upward_spaces(h.up_ptr, h.up_head, h.up_w, part, h.down_ptr, h.down_tail, h.down_w,
                                         self.core.in_core if self.core else None, scratch)

    def _upward(self, sources: np.ndarray):
        """The upward searches of every source on the host, copied to the device: (sources, ptr, row, vertex,
        distance) device arrays and the number of settled vertices."""
        h, g = self.h, self.graph
        new = h.position[sources].astype(np.int64)
        (rows, verts, dists), _ = sweep.batch_spaces(self._search, new, int(g.inf), g.dtype, self._host_pool(),
                                                      self.threads)
        ptr = np.zeros(len(new) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(new)), out=ptr[1:])
        space = (new.astype(np.int32), ptr, rows, verts, dists)
        return tuple(cuda.to_device(a) for a in space), int(verts.size)

    def run(self, sources):
        sources = np.asarray(sources, dtype=np.int64).reshape(-1)
        if sources.size == 0:
            raise SolverError("phast_gpu: no sources given")
        k = sources.size
        self.sources = sources
        self._setup(k)
        if self.core:
            return self._run_core(sources)
        t0 = time.perf_counter()
        space, settled = self._upward(sources)
        upward_ms = (time.perf_counter() - t0) * 1e3
        self.ctl.copy_to_device(np.zeros(CTL_SIZE, dtype=np.int64))
        S = self.S
        batches = (k + S - 1) // S
        if self.grid is None:  # compiles once; the co-resident limit depends on the kernel's registers
            largest = int(np.diff(self.h.level_ptr).max(initial=1)) * S
            want = self.want_grid or min(blocks_per_sm(PHAST_BLOCKS_PER_SM), -(-largest // self.block))
            self.grid = cooperative_grid(self.kernel, self._args(space, 0, 1, True), self.block, want)
        spans = [(0, batches)] if self.out.on_device else [(b, b + 1) for b in range(batches)]
        for i, (first, last) in enumerate(spans):
            self.kernel[self.grid, self.block](*self._args(space, first, last, i == 0))
            self.out.keep(first * S, min(S, k - first * S))
        h = self.h
        grid_levels = h.levels - 1 - self.fused
        counters = {"iterations": (h.levels - 1) * batches, "levels": h.levels, "grid_levels": grid_levels,
                    "block_levels": self.fused, "shortcuts": h.shortcuts, "core": h.core, "settled": settled,
                    "upward_ms": upward_ms, "preprocess_s": self.preprocess_s, "host_compile_s": self.host_compile_s,
                    "preprocess_bytes": self.preprocess_bytes, "batches": batches, "batch": S, "grid": self.grid,
                    "launches": len(spans), "zero_weight_parents": int(self.rounds), **self.out.counters(),
                    **(self.johnson.counters() if self.johnson else {})}
        per_batch = 3 + grid_levels + (1 if self.fused else 0)  # scatter, levels, parents, rows

        def read_back():
            zero_rounds = int(self.ctl.copy_to_host()[ZERO_ROUNDS])
            return {**counters, "zero_rounds": zero_rounds, "barriers": len(spans) + per_batch * batches + zero_rounds}

        return read_back

    def _run_core(self, sources):
        """core_search=device: the upward searches on the host up to the core, then per source the core searched from
        its entries on the device, the core's distances placed beside the search space outside the core, the sweep:
        four launches a source, nothing copied or read back between them (core.py)."""
        h, g, core = self.h, self.graph, self.core
        k = sources.size
        t0 = time.perf_counter()
        (rows, verts, dists), _ = sweep.batch_spaces(self._search, h.position[sources].astype(np.int64), int(g.inf),
                                                      g.dtype, self._host_pool(), self.threads)
        upward_ms = (time.perf_counter() - t0) * 1e3
        entry = core.in_core[verts]
        core.stage(verts[~entry], dists[~entry], verts[entry], dists[entry])
        outside = np.searchsorted(rows[~entry], np.arange(k + 1))  # the rows come in source order
        entries = np.searchsorted(rows[entry], np.arange(k + 1))
        size = int(np.diff(outside).max(initial=0)) + core.core_new.size
        space = (cuda.to_device(h.position[sources].astype(np.int32)), cuda.to_device(np.zeros(k + 1, np.int64)),
                 cuda.device_array(size, dtype=np.int32), cuda.device_array(size, dtype=np.int32),
                 cuda.device_array(size, dtype=g.dtype))  # sources, ptr, row, vertex, distance
        self.ctl.copy_to_device(np.zeros(CTL_SIZE, dtype=np.int64))
        if self.grid is None:  # compiles once; the co-resident limit depends on the kernel's registers
            largest = int(np.diff(h.level_ptr).max(initial=1))
            want = self.want_grid or min(blocks_per_sm(PHAST_BLOCKS_PER_SM), -(-largest // self.block))
            self.grid = cooperative_grid(self.kernel, self._args(space, 0, 1, True), self.block, want)
            self.launch_sweep = Launch(self.kernel, self.grid, self.block)
        for b in range(k):
            core.query(b, (outside[b], outside[b + 1] - outside[b]), (entries[b], entries[b + 1] - entries[b]),
                       (space[3], space[4], space[2], space[1]))
            self.launch_sweep(*self._args(space, b, b + 1, b == 0))
            self.out.keep(b, 1)
        grid_levels = h.levels - 1 - self.fused
        counters = {"iterations": (h.levels - 1) * k, "levels": h.levels, "grid_levels": grid_levels,
                    "block_levels": self.fused, "shortcuts": h.shortcuts, "core": h.core, "core_search": "device",
                    "core_arcs": core.arcs, "core_entries": int(entry.sum()), "settled": int(verts.size),
                    "upward_ms": upward_ms, "preprocess_s": self.preprocess_s, "host_compile_s": self.host_compile_s,
                    "preprocess_bytes": self.preprocess_bytes, "batches": k, "batch": 1, "grid": self.grid,
                    "launches": 4 * k, "zero_weight_parents": int(self.rounds), **self.out.counters(),
                    **(self.johnson.counters() if self.johnson else {})}

        def read_back():
            zero_rounds = int(self.ctl.copy_to_host()[ZERO_ROUNDS])
            return {**counters, "core_rounds": core.rounds(), "zero_rounds": zero_rounds,
                    "barriers": k * (4 + grid_levels + (1 if self.fused else 0)) + zero_rounds}

        return read_back

    def sweep_batch(self, k: int) -> int:
        """Sources per launch of a sweep of K sources (``batch``, or the rule for distances alone); sizes the
        working arrays."""
        if self.core:
            raise SolverError("phast_gpu core_search=device answers sources one at a time (run); an every-tree sweep "
                              "searches the core on the host (core_search=host)")
        g, n = self.graph, self.graph.n
        S = self.batch or phast_batch(k, n, g.dtype.itemsize, sweep=True)
        _fits_int32(n, S)
        if self.S != S or self.dist is None:
            self.S, self.parent_w, self.grid, self.sweep_grid = S, None, None, None
            self.dist = None  # the old arrays are freed before the new ones are sized
            self.dist = cuda.device_array(n * S, dtype=g.dtype)
        if self.marks is None:
            self.marks = (cuda.to_device(np.full(n, -1, np.int32)), cuda.device_array(n, np.int32),
                          cuda.to_device(np.zeros(sweep.COUNTS, np.int32)))
            self.spaces = sweep.SpaceBuffers(g.dtype)
        return S

    def dist_rows(self, vertices) -> np.ndarray:
        """Where a sweep keeps vertices' distances: vertex v of source slot s at dist[dist_rows(v) * S + s] (the
        hierarchy's sweep order)."""
        return self.h.position[np.asarray(vertices, dtype=np.int64)].astype(np.int64)

    def uses_closures(self, k: int) -> bool:
        """Whether a sweep of k sources takes every vertex's upward space from :func:`contraction.upward_closures`
        (made once, about a twelfth of a search a vertex on NY) rather than searching from each source: 'closures',
        or 'auto' when the hierarchy has no core and k >= n / CLOSURES_FROM."""
        if self.upward == "search" or self.h.core:
            return False
        return self.upward == "closures" or k * CLOSURES_FROM >= self.h.n

    def prepare_sweep(self, k: int) -> None:
        """Before a sweep of k sources: every vertex's upward space composed once when the sweep gathers them
        (:meth:`uses_closures`), so that a caller times it as preprocessing, apart from the first batch's JIT."""
        if self.closures is None and self.uses_closures(k):
            h, t0 = self.h, time.perf_counter()
            self.closures = contraction.upward_closures(h.up_ptr, h.up_head, h.up_w, h.down_ptr, h.down_tail,
                                                        h.down_w, h.rank, min(self.threads, numba.get_num_threads()))
            self.closures_ms = (time.perf_counter() - t0) * 1e3

    def share_with_ranks(self, k: int) -> None:
        """Before an every-tree sweep's ranks start (:mod:`gpusp.measure.alltrees_ranks`): the upward spaces composed
        here once when a slice of ``k`` sources uses them, so that every rank receives them with the hierarchy (a
        rank's ``closures_ms`` stays 0: the parent's wall is the timing's ``ranks_shared_s``)."""
        self.prepare_sweep(k)
        self.closures_ms = 0.0

    def sweep(self, srcs, after_batch) -> dict:
        """Every source of ``srcs`` (device or host array of original ids), a launch per batch of S with no rows and
        no parents: after each launch ``after_batch(base, count)`` runs while the batch's distances are in
        ``self.dist`` (source ``srcs[base + s]``, vertex v at ``dist[dist_rows(v) * S + s]``). The upward searches
        of batch b + 1 run on the host threads while the device sweeps batch b. Returns the counters."""
        host = np.asarray(srcs.copy_to_host() if hasattr(srcs, "copy_to_host") else srcs, dtype=np.int64).reshape(-1)
        if host.size == 0:
            raise SolverError("phast_gpu: no sources given")
        k, h, g = host.size, self.h, self.graph
        S = self.sweep_batch(k)
        new = h.position[host].astype(np.int64)
        kern = sweep.sweep_kernel(g.dtype.name)
        fused, inf = self._fused(S), g.dtype.type(g.inf)
        pool = self._host_pool()
        threads, closed = self.threads, self.uses_closures(k)
        if closed:
            self.prepare_sweep(k)
            threads = 1  # a batch's spaces are a gather of stored ones: no searches to share out

            def search(part):
                return contraction.gather_spaces(*self.closures, part)
        else:
            search = self._search

        def spaces(b):
            return sweep.batch_spaces(search, new[b * S:(b + 1) * S], int(g.inf), g.dtype, pool, threads)

        def args(space, ns):
            return ((*self.d_down, self.d_level_ptr), space, (self.dist, *self.marks), np.int64(ns),
                    np.int64(S.bit_length() - 1), np.int64(self.epoch), np.int64(fused), inf)

        batches = (k + S - 1) // S
        ready, upward_s = spaces(0)
        settled = wait_ms = 0
        for b in range(batches):
            t0 = time.perf_counter()
            space = self.spaces.load(*ready)  # waits for the launch before: the buffers are reused
            wait_ms += (time.perf_counter() - t0) * 1e3
            settled += ready[1].size
            ns = min(S, k - b * S)
            self.epoch += 1
            if self.sweep_grid is None:  # compiles once; the co-resident limit depends on the kernel's registers
                largest = int(np.diff(h.level_ptr).max(initial=1)) * S
                want = self.want_grid or min(blocks_per_sm(PHAST_BLOCKS_PER_SM), -(-largest // self.block))
                self.sweep_grid = cooperative_grid(kern, args(space, ns), self.block, want)
            kern[self.sweep_grid, self.block](*args(space, ns))
            after_batch(b * S, ns)
            if b + 1 < batches:  # the host searches the next batch while the device sweeps this one
                ready, seconds = spaces(b + 1)
                upward_s += seconds
        grid_levels = h.levels - 1 - fused
        return {"levels": h.levels, "grid_levels": grid_levels, "block_levels": fused, "shortcuts": h.shortcuts,
                "core": h.core, "settled": settled, "upward_ms": upward_s * 1e3, "space_copy_ms": wait_ms,
                "upward": "closures" if closed else "search",
                "closures_ms": self.closures_ms,
                "contraction_s": self.preprocess_s, "host_compile_s": self.host_compile_s,
                "preprocess_bytes": self.preprocess_bytes, "batches": batches,
                "batch": S, "grid": self.sweep_grid, "launches": batches, "threads": self.threads,
                "barriers": batches * (3 + grid_levels + (1 if fused else 0))}

    def download(self):
        dist, parent = self.out.download()
        return (self.johnson.restore(dist, self.sources) if self.johnson else dist), parent

