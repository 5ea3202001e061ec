"""What the frontier SSSP solvers that run a whole source in one persistent kernel share (deltastep_gpu,
deltastep_async): the host side (graph, distances and parents on the device; the host-grown tree for zero weights)
and device functions for relaxing an arc, summing a counter once per block and building the tree inside the kernel.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..common.base import Solver
from ..common.csr import DeviceGraph, build_parents


class PersistentSSSP(Solver):
    """Host side of a one-kernel-per-source SSSP solver: the graph, distances and parents on the device, and parents
    grown by the host level by level when zero weights make the in-kernel tight-arc pass (:func:`tight_tree`)
    unsafe."""

    device = "gpu"

    def upload_arrays(self, dtype, parents: bool = True):
        """The CSR graph, distances (``dtype``) and parents on the device (without ``parents``, one placeholder)."""
        n = self.graph.n
        self.dg = DeviceGraph(self.graph).upload()
        self.d_dist = cuda.device_array(n, dtype=dtype)
        self.d_parent = cuda.device_array(n if parents else 1, dtype=np.int32)

    def upload_source(self):
        """The source in pinned host memory that the kernel reads (a launch, or a replayed graph, per source without new
        arguments), and the event that says the last kernel has read it."""
        self.d_source = cuda.mapped_array(1, dtype=np.int64)
        self.done = cuda.event()

    def put_source(self, source) -> None:
        """Write the next source once the previous trial's kernel has read its own; call :meth:`launched` after the
        launch."""
        self.done.synchronize()
        self.d_source[0] = source

    def launched(self) -> None:
        self.done.record()

    @property
    def paths(self) -> bool:
        """Whether the solver builds the shortest-path tree (parameter ``paths``; false: distances alone)."""
        return bool(self.params.get("paths", True))

    def tree_flag(self):
        """The kernel's ``tree`` argument: the in-kernel tight-arc pass runs where parents are asked for and every
        weight is positive (zero weights: :meth:`host_tree` grows them instead)."""
        return np.int64(self.paths and not self.dg.nonpositive)

    def host_tree(self, source, block: int) -> int:
        """Parents by tree levels when parents are asked for and some weight is zero (launches used), else nothing
        (0)."""
        if not self.paths or not self.dg.nonpositive:
            return 0
        return build_parents(self.dg, self.d_dist, self.d_parent, source, block)

    def download(self):
        if not self.paths:
            return self.d_dist.copy_to_host(), None
        return self.d_dist.copy_to_host(), self.d_parent.copy_to_host()


@cuda.jit(device=True)
def lowers(dist, w, cand):
    """Whether ``cand`` lowers dist[w], with dist[w] = min(dist[w], cand): a plain read first (most candidates lose
    and then cost no atomic), and the atomic's old value says whether this thread won against the others."""
    if cand < dist[w]:
        return cand < cuda.atomic.min(dist, w, cand)  # atomic: several tails may lower w at once
    return False


@cuda.jit(device=True)
def relax_arc(indices, weights, dist, e, du):
    """Relax arc e from a tail at distance ``du``: (its head, the candidate distance, whether it lowered the head)."""
    w = indices[e]
    cand = du + weights[e]
    return w, cand, lowers(dist, w, cand)


@cuda.jit(device=True)
def block_add(ctl, slot, value):
    """ctl[slot] += the sum of ``value`` over the block's threads: one global atomic per block."""
    total = cuda.shared.array(1, dtype=np.int64)
    if cuda.threadIdx.x == 0:
        total[0] = 0
    cuda.syncthreads()  # barrier: the block's total is cleared before anyone adds
    cuda.atomic.add(total, 0, value)  # atomic: the block's threads add at once
    cuda.syncthreads()  # barrier: every thread of the block has added
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(ctl, slot, total[0])  # atomic: blocks add at once


@cuda.jit(device=True)
def tight_tree(indptr, indices, weights, dist, parent, inf, tid, nthreads):
    """Parents from final distances; every weight > 0, so any tight in-arc comes from a strictly closer vertex and
    will do. Each thread takes an equal run of consecutive arcs (its first arc's tail found by binary search in
    indptr), so a hub's arcs are shared by many threads instead of holding one thread while the rest of the GPU
    waits."""
    n = dist.size
    m = indices.size
    per = (m + nthreads - 1) // nthreads
    e = tid * per
    end = min(e + per, m)
    if e >= end:
        return
    lo = 0
    hi = n - 1
    while lo < hi:  # the last u with indptr[u] <= e (empty vertices before it skipped)
        mid = (lo + hi + 1) // 2
        if indptr[mid] <= e:
            lo = mid
        else:
            hi = mid - 1
    u = lo
    nxt = indptr[u + 1]
    du = dist[u]
    while e < end:
        while e >= nxt:
            u += 1
            nxt = indptr[u + 1]
            du = dist[u]
        w = indices[e]
        if du != inf and w != u and du + weights[e] == dist[w]:
            parent[w] = u  # benign race: every writer holds a tight arc
        e += 1
