"""``phast_gpu``'s sweep of every tree (``PhastSolver.sweep``): one cooperative launch per batch of sources that writes
only the batch's vertex-major distances (no parents, no rows) for a reduction to read, and the host's upward searches
of the next batch running on host threads while the device sweeps this one. Design: docs/solvers/phast.md, "All
trees".
"""

from __future__ import annotations

import functools
import time

import numba
import numpy as np
from numba import cuda

from ..common.gate import DISTANCES, kernel

I32, U32 = numba.int32, numba.uint32
COUNTS = 2  # touched-vertex counters used in turn by consecutive launches (each zeroes the next one's)


@functools.cache
def in_min_fn(w: str):
    """The device function ``in_min(down_ptr, down_tail, down_w, dist, v, s, sshift, d, inf)``: min(d, dist[u] + w)
    over the downward in-arcs (u, v, w) of v for source slot s, for distances of type ``w``."""
    WT = {"int32": numba.int32, "int64": numba.int64}[w]

    @cuda.jit(device=True)
    def low(d, du, weight, inf):
        via = WT(du + weight)  # computed whether or not du is reached, so the weight's load is not left behind a branch
        return min(d, via) if du != inf else d

    @cuda.jit(device=True)
    def in_min(down_ptr, down_tail, down_w, dist, v, s, sshift, d, inf):
        a, end = down_ptr[v], down_ptr[v + 1]
        # A level's time is its longest chain of dependent loads, set by its largest in-degree (up to ~30 arcs on a
        # road hierarchy's upper levels, each one tail load and one distance load): four arcs' loads are issued
        # before any result is used, so four arcs cost one round trip of each.
        while a + 3 < end:
            t0, t1, t2, t3 = down_tail[U32(a)], down_tail[U32(a + 1)], down_tail[U32(a + 2)], down_tail[U32(a + 3)]
            d0, d1 = dist[U32((t0 << sshift) + s)], dist[U32((t1 << sshift) + s)]
            d2, d3 = dist[U32((t2 << sshift) + s)], dist[U32((t3 << sshift) + s)]
            d = low(d, d0, down_w[U32(a)], inf)
            d = low(d, d1, down_w[U32(a + 1)], inf)
            d = low(d, d2, down_w[U32(a + 2)], inf)
            d = low(d, d3, down_w[U32(a + 3)], inf)
            a += 4
        while a < end:
            d = low(d, dist[U32((down_tail[U32(a)] << sshift) + s)], down_w[U32(a)], inf)
            a += 1
        return d

    return in_min


@kernel("void(Tuple((int32[::1], int32[::1], {w}[::1], int32[::1])), Tuple((int32[::1], int32[::1], {w}[::1])), "
        "Tuple(({w}[::1], int32[::1], int32[::1], int32[::1])), int64, int64, int64, int64, {w})", cases=DISTANCES)
@functools.cache
def sweep_kernel(w: str):
    """The cooperative kernel that sweeps one batch for distances of type ``w``."""
    in_min = in_min_fn(w)

    @cuda.jit(device=True)
    def pull(down_ptr, down_tail, down_w, mark, dist, lo, hi, sshift, ns, epoch, start, stride, inf):
        """Vertices lo .. hi - 1 (one level) x the batch's sources: min(dist[u] + w) over the in-arcs, and the
        vertex's own slot only where a search space of this launch wrote it (else it holds an older batch's)."""
        smask = I32((1 << sshift) - 1)
        for i in range(start, I32((hi - lo) << sshift), stride):
            s = I32(i & smask)
            if s < ns:
                v = I32(lo + (i >> sshift))
                vs = U32((v << sshift) + s)
                d = dist[vs] if mark[v] == epoch else inf
                dist[vs] = in_min(down_ptr, down_tail, down_w, dist, v, s, sshift, d, inf)

    @cuda.jit
    def sweep_batch(sweep, space, work, ns, sshift, epoch, fused, inf):
        """Sources 0 .. ns - 1 of a batch of 2^sshift slots: ``sweep`` the downward graph by head and the level
        offsets, ``space`` the batch's upward search spaces (row, vertex, distance per entry), ``work`` the distances
        dist[v * S + s], a mark per vertex (the launch's ``epoch`` where some search space holds it), the touched
        vertices and their counters. Every slot of a source < ns is written, so nothing is reset between launches."""
        down_ptr, down_tail, down_w, level_ptr = sweep
        space_row, space_v, space_d = space
        dist, mark, touched, count = work
        grid = cuda.cg.this_grid()
        tid = cuda.grid(1)
        nthreads = cuda.gridsize(1)
        here = I32(epoch % COUNTS)
        if tid == 0:
            count[(epoch + 1) % COUNTS] = 0  # the next launch's counter; this one was zeroed by the launch before
        for e in range(tid, space_v.size, nthreads):  # each vertex of the search spaces listed once
            v = space_v[U32(e)]
            if cuda.atomic.max(mark, v, I32(epoch)) < epoch:  # atomic: the first entry of v this launch lists it
                touched[cuda.atomic.add(count, here, 1)] = v  # atomic: a slot of the list
        grid.sync()  # the marks and the list are complete
        S = I32(1 << sshift)
        smask = I32(S - 1)
        for i in range(tid, count[here] << sshift, nthreads):  # a listed vertex starts at INF for every source
            dist[U32((touched[U32(i >> sshift)] << sshift) + (i & smask))] = inf
        lo, hi = level_ptr[0], level_ptr[1]
        for i in range(tid, (hi - lo) << sshift, nthreads):  # level 0: INF where no search space reaches it
            v = I32(lo + (i >> sshift))
            if mark[v] != epoch and (i & smask) < ns:
                dist[U32(i + (lo << sshift))] = inf
        grid.sync()  # the listed vertices are reset before the search spaces land in them
        for e in range(tid, space_v.size, nthreads):
            dist[U32((space_v[U32(e)] << sshift) + space_row[U32(e)])] = space_d[U32(e)]
        grid.sync()  # every search space is in place before the first level pulls from it
        nlev = level_ptr.size - 1
        if fused > 0:
            if cuda.blockIdx.x == 0:
                for lev in range(1, fused + 1):
                    pull(down_ptr, down_tail, down_w, mark, dist, level_ptr[lev], level_ptr[lev + 1], sshift, ns,
                         epoch, cuda.threadIdx.x, cuda.blockDim.x, inf)
                    cuda.syncthreads()  # level lev is final before level lev + 1 reads it
            grid.sync()  # the top levels swept by block 0 are visible to every block
        for lev in range(fused + 1, nlev):
            pull(down_ptr, down_tail, down_w, mark, dist, level_ptr[lev], level_ptr[lev + 1], sshift, ns, epoch, tid,
                 nthreads, inf)
            grid.sync()  # level lev is final before level lev + 1 reads it

    return sweep_batch


class SpaceBuffers:
    """Device arrays that hold one batch's upward search spaces (row, vertex, distance), grown when a batch needs
    more, copied into by :meth:`load`."""

    def __init__(self, dtype):
        self.dtype, self.size = dtype, 0
        self.arrays = None

    def load(self, rows, verts, dists):
        """The batch's entries on the device: (row, vertex, distance) views of the buffers."""
        m = verts.size
        if m > self.size:
            self.size = max(m, 2 * self.size)
            self.arrays = (cuda.device_array(self.size, np.int32), cuda.device_array(self.size, np.int32),
                           cuda.device_array(self.size, self.dtype))
        views = tuple(a[:m] for a in self.arrays)
        for view, host in zip(views, (rows, verts, dists)):
            view.copy_to_device(host)
        return views


def batch_spaces(search, new_sources, inf, dtype, pool, threads):
    """The upward searches of one batch (``new_sources``: ids in sweep order) on ``threads`` host threads, as
    (row, vertex, distance) host arrays and the seconds they took."""
    t0 = time.perf_counter()
    parts = np.array_split(new_sources, min(new_sources.size, threads))
    found = [search(parts[0])] if len(parts) == 1 else list(pool.map(search, parts))
    ptr = np.concatenate([[0], np.cumsum(np.concatenate([np.diff(f[0]) for f in found]))])
    rows = np.repeat(np.arange(new_sources.size, dtype=np.int32), np.diff(ptr))
    verts = np.concatenate([f[1] for f in found])
    dists = np.minimum(np.concatenate([f[2] for f in found]), inf).astype(dtype)
    return (rows, verts, dists), time.perf_counter() - t0
