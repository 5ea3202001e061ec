"""``deltastep_gpu``: near-far delta-stepping (Davidson, Baxter, Garland and Owens, IPDPS'14) in one persistent
cooperative kernel per source. The kernel (:func:`nearfar_kernel`) runs the reset, every near round, every far split and
the tight-arc tree with grid barriers between its steps; its options are hub splitting (``split``), path-following
chains (``chain``), block-local fusion of small rounds (``fuse='block'``), warp-aggregated queue claims (``push``),
register caps and distances without the tree (``paths``).
:class:`DeltaStepSolver` is the host side: one launch per source, replayed from a CUDA graph on a GPU.
Algorithm, design, correctness, complexity and counters: docs/solvers/deltastep.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from .persistent import PersistentSSSP, block_add, tight_tree
from ..common.gate import OFFSETS, kernel
from ..common.launch import TARGET, blocks_per_sm, capture_graph, cooperative_grid
from .spec import (NEARFAR_BLOCKS_PER_SM, NEARFAR_REGISTERS, block_fuse_limit, nearfar_delta, nearfar_lanes,
                   nearfar_split)

# control array layout (int64): near counts, far counts, far minimum (three slots each), then outputs,
# then the fused rounds of the last two steps (one slot per step parity), the fusion counters and the far-pile
# entries the splits read
NEAR, FAR, FMIN, ROUNDS, SPLITS, RELAX = 0, 3, 6, 9, 10, 11
FUSED, BLOCK_STEPS, FUSED_ROUNDS, GRID_STEPS, FAR_SCANNED = 12, 14, 15, 16, 17
CTL_SIZE = 18
FMIN_EMPTY = np.iinfo(np.int64).max
WARP_INTRINSICS = TARGET.warp_intrinsics  # the simulator has no activemask / shfl: one atomic per push there


@cuda.jit(device=True)
def _claim(ctl, slot, warp):
    """One queue slot (the old ctl[slot], then ctl[slot] += 1). With ``warp`` the lanes of a warp that claim at
    the same time share one atomic: the highest active lane adds their number, the others take the slots after
    its old value in lane order (the aggregated increment of the CUDA programming guide)."""
    if not WARP_INTRINSICS or warp == 0:
        return cuda.atomic.add(ctl, slot, 1)  # atomic: a slot of the queue
    mask = cuda.activemask()
    lane = cuda.laneid
    leader = 31 - cuda.clz(mask)
    base = np.int64(0)
    if lane == leader:
        base = cuda.atomic.add(ctl, slot, cuda.popc(mask))  # atomic: the active lanes' slots at once
    base = cuda.shfl_sync(mask, base, leader)  # the leader's old count to every active lane
    return base + cuda.popc(mask & numba.uint32((1 << lane) - 1))


@cuda.jit(device=True)
def _push_near(nearq, chunkq, stamp, ctl, w, tick, wbuf, wslot, indptr, split, warp):
    """Queue w for round tick + 1 unless it already is (the first to stamp it queues it); with ``split`` > 0
    as one entry per ``split`` arcs (the vertex in ``nearq``, the chunk's index in ``chunkq``), so a hub is
    expanded by several lane groups. A vertex of one entry claims its slot as whole vertices do (shared by the
    warp's lanes with ``warp``); a hub claims all its entries with one atomic of its own."""
    if cuda.atomic.max(stamp, w, tick + 1) < tick + 1:  # atomic: one stamp per vertex and round
        chunks = 1
        if split > 0:
            chunks = max(1, (indptr[w + 1] - indptr[w] + split - 1) // split)
        if chunks == 1:
            at = _claim(ctl, wslot, warp)
            nearq[wbuf, at] = w
            if split > 0:
                chunkq[wbuf, at] = 0
            return
        at = cuda.atomic.add(ctl, wslot, chunks)  # atomic: claim the hub's queue slots
        for c in range(chunks):
            nearq[wbuf, at + c] = w
            chunkq[wbuf, at + c] = c


@cuda.jit(device=True)
def _arc_range(indptr, nearq, chunkq, buf, i, split):
    """The vertex of near-queue entry i and the arcs it stands for."""
    u = nearq[buf, i]
    lo = indptr[u]
    end = indptr[u + 1]
    if split == 0:
        return u, lo, end
    lo += chunkq[buf, i] * split
    return u, lo, min(lo + split, end)


@cuda.jit(device=True)
def _push_far(farq, infar, ctl, bound, w, d, fbuf, fslot, warp):
    """Put w (now at distance d >= threshold) on the far pile unless it is there already. The pile's lower bound is
    kept per block in shared memory (``bound``) and folded into ``ctl[FMIN + fslot]`` once per block and step (the
    kernel's loop), so that no push waits on a global word the whole grid lowers."""
    if d < bound[0]:  # the bound only falls during a step: most pushes need no atomic on it
        cuda.atomic.min(bound, 0, d)  # atomic: the block's threads lower it at once
    if cuda.atomic.exch(infar, w, 1) == 0:  # atomic: w enters the pile once until a split takes it out
        farq[fbuf, _claim(ctl, FAR + fslot, warp)] = w


@cuda.jit(device=True)
def _follow(graph, dist, queues, x, dx, threshold, hops, tick, wbuf, wslot, fbuf, fslot, bound, split, warp):
    """Expand x (just lowered to dx) at once, then the first near vertex that lowers, up to ``hops``
    vertices; the others it lowers are queued, and so is the last one when the budget runs out.
    Returns the arcs examined. Correct with stale dx: whoever lowers x further queues it again."""
    indptr, indices, weights = graph
    nearq, chunkq, farq, stamp, infar, ctl = queues
    relaxed = 0
    while hops > 0:
        hops -= 1
        nxt = -1
        dn = dx
        e = indptr[x]
        end = indptr[x + 1]
        while e < end:
            relaxed += 1
            y = indices[e]
            cand = dx + weights[e]
            if cand < dist[y]:
                old = cuda.atomic.min(dist, y, cand)  # atomic: the old value says whether this won
                if cand < old:
                    if cand >= threshold:
                        _push_far(farq, infar, ctl, bound, y, cand, fbuf, fslot, warp)
                    elif nxt < 0:
                        nxt = y
                        dn = cand
                    else:
                        _push_near(nearq, chunkq, stamp, ctl, y, tick, wbuf, wslot, indptr, split, warp)
            e += 1
        if nxt < 0:
            return relaxed
        x = nxt
        dx = dn
    _push_near(nearq, chunkq, stamp, ctl, x, tick, wbuf, wslot, indptr, split, warp)
    return relaxed


@cuda.jit(device=True)
def _lower(graph, dist, queues, w, cand, threshold, chain, tick, wbuf, wslot, fbuf, fslot, bound, split, warp):
    """A grid round's arc into w offers ``cand``, below the distance read a moment ago: lower w unless another tail
    got lower first, then queue it far or near (or, with ``chain``, follow the path from it). Returns the arcs a
    followed path examined."""
    nearq, chunkq, farq, stamp, infar, ctl = queues
    old = cuda.atomic.min(dist, w, cand)  # atomic: several tails may lower w at once; the old value says who won
    if cand < old:
        if cand >= threshold:
            _push_far(farq, infar, ctl, bound, w, cand, fbuf, fslot, warp)
        elif chain > 0:
            return _follow(graph, dist, queues, w, cand, threshold, chain, tick, wbuf, wslot, fbuf, fslot, bound, split,
                           warp)
        else:
            _push_near(nearq, chunkq, stamp, ctl, w, tick, wbuf, wslot, graph[0], split, warp)
    return 0


@cuda.jit(device=True)
def _push_local(localq, lcnt, nearq, stamp, ctl, w, tick, lbuf, lslot, wbuf, wslot, warp):
    """Queue w for the block's next fused round; past the local capacity spill it to the global near queue."""
    if cuda.atomic.max(stamp, w, tick + 1) < tick + 1:  # atomic: one stamp per vertex and round
        k = cuda.atomic.add(lcnt, lslot, 1)  # atomic: claim a block-local slot (a count past capacity = spill)
        if k < localq.shape[1]:
            localq[lbuf, k] = w
        else:
            nearq[wbuf, _claim(ctl, wslot, warp)] = w  # spill: a global queue slot


@cuda.jit(device=True)
def _fused_rounds(graph, dist, queues, localq, lcnt, count, rbuf, threshold, tick, lanes, limit, wbuf, wslot, fbuf,
                  fslot, bound, warp):
    """Block-local near rounds while the queue stays small, then hand it back; returns (rounds, arcs)."""
    indptr, indices, weights = graph
    nearq, chunkq, farq, stamp, infar, ctl = queues
    t = cuda.threadIdx.x
    group = t // lanes
    lane = t % lanes
    groups = cuda.blockDim.x // lanes
    cap = localq.shape[1]
    if t == 0:
        lcnt[0] = 0
    cuda.syncthreads()  # barrier: round 0's counter is clear before anyone pushes
    relaxed = 0
    r = 0
    c = count
    while True:
        lslot = r % 3
        lbuf = r % 2
        if t == 0:
            lcnt[(r + 1) % 3] = 0  # read after the barrier before last, written after the next one
        i = group
        while i < c:
            if r == 0:
                u = nearq[rbuf, i]
            else:
                u = localq[1 - lbuf, i]
            du = dist[u]
            e = indptr[u] + lane
            end = indptr[u + 1]
            while e < end:
                relaxed += 1
                w = indices[e]
                cand = du + weights[e]
                if cand < dist[w]:
                    old = cuda.atomic.min(dist, w, cand)  # atomic: the old value says whether this won
                    if cand < old:
                        if cand >= threshold:
                            _push_far(farq, infar, ctl, bound, w, cand, fbuf, fslot, warp)
                        else:
                            _push_local(localq, lcnt, nearq, stamp, ctl, w, tick + r, lbuf, lslot, wbuf, wslot, warp)
                e += lanes
            i += groups
        r += 1
        cuda.syncthreads()  # barrier: the round's pushes and its counter are complete
        raw = lcnt[lslot]
        c = min(raw, cap)
        if raw == 0 or raw > limit or raw > cap:
            break
    # hand back: what the last round queued locally is the next grid step's near queue
    i = t
    while i < c:
        nearq[wbuf, _claim(ctl, wslot, warp)] = localq[(r - 1) % 2, i]
        i += cuda.blockDim.x
    return r, relaxed


@cuda.jit(device=True)
def _far_split(dist, queues, indptr, fcount, threshold, delta, epoch, tick, wbuf, wslot, split, warp):
    """Raise the threshold by delta (or to the pile's lowest bucket), move the pile's vertices that fell below it
    to the near queue and keep the rest in the other pile; returns the new threshold."""
    nearq, chunkq, farq, stamp, infar, ctl = queues
    tid = cuda.grid(1)
    low = threshold
    jump = (ctl[FMIN + epoch % 3] // delta + 1) * delta
    threshold = max(threshold + delta, jump)
    nslot = (epoch + 1) % 3
    if tid == 0:
        ctl[FAR + (epoch + 2) % 3] = 0  # read at the previous split, written from this one on
        ctl[FMIN + (epoch + 2) % 3] = FMIN_EMPTY
    rbuf = epoch % 2
    i = tid
    while i < fcount:
        w = farq[rbuf, i]
        d = dist[w]
        if d < threshold:
            infar[w] = 0  # no other thread touches w's flag during a split
            if d >= low:  # below the old threshold it was already expanded at this distance
                _push_near(nearq, chunkq, stamp, ctl, w, tick, wbuf, wslot, indptr, split, warp)
        else:
            farq[1 - rbuf, _claim(ctl, FAR + nslot, warp)] = w
            if d < ctl[FMIN + nslot]:
                cuda.atomic.min(ctl, FMIN + nslot, d)  # atomic: the new pile's lower bound
        i += cuda.gridsize(1)
    return threshold


def nearfar(graph, dist, parent, queues, srcbuf, search, localq, modes):
    """Persistent grid: reset, near rounds (small ones fused in one block) and far splits, then parents."""
    indptr, indices, weights = graph
    nearq, chunkq, farq, stamp, infar, ctl = queues
    delta, inf, lanes, chain, tree = search
    fuse_limit, fuse_lanes, split, warp = modes
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    nthreads = cuda.gridsize(1)
    n = dist.size
    v = tid
    while v < n:
        dist[v] = inf
        parent[v] = -1
        stamp[v] = -1
        infar[v] = 0
        v += nthreads
    if tid < 3:
        ctl[NEAR + tid] = 0
        ctl[FAR + tid] = 0
        ctl[FMIN + tid] = FMIN_EMPTY
    if tid == 0:
        ctl[RELAX] = 0
    bound = cuda.shared.array(1, dtype=np.int64)  # the far pushes' lowest distance in this block and step
    if cuda.threadIdx.x == 0:
        bound[0] = FMIN_EMPTY
    grid.sync()  # barrier: the reset is complete before the source is queued
    if tid == 0:
        source = srcbuf[0]  # host memory mapped into the device: a replayed graph reads each trial's source
        dist[source] = 0
        _push_near(nearq, chunkq, stamp, ctl, source, -1, 0, NEAR, indptr, split, 0)  # stamped 0: step 0 expands it
    grid.sync()  # barrier: step 0 sees the source in the near queue

    lcnt = cuda.shared.array(3, dtype=np.int32)
    group = tid // lanes
    lane = tid % lanes
    ngroups = nthreads // lanes
    threshold = delta
    step = 0
    tick = 0
    epoch = 0
    relaxed = 0
    block_steps = 0
    fused_rounds = 0
    far_scanned = 0
    while True:
        count = ctl[NEAR + step % 3]
        wslot = NEAR + (step + 1) % 3
        wbuf = (step + 1) % 2
        fused = count > 0 and count <= fuse_limit
        if tid == 0:
            ctl[NEAR + (step + 2) % 3] = 0  # read last step (before the barrier), written next step
        if fused:
            # a small near queue: block 0 settles rounds alone while the others wait at the barrier
            if cuda.blockIdx.x == 0:
                rounds, arcs = _fused_rounds(graph, dist, queues, localq, lcnt, count, step % 2, threshold, tick,
                                             fuse_lanes, fuse_limit, wbuf, wslot, epoch % 2, epoch % 3, bound, warp)
                relaxed += arcs
                if tid == 0:
                    ctl[FUSED + step % 2] = rounds  # read after this barrier, rewritten two steps on
                    block_steps += 1
                    fused_rounds += rounds
        elif count > 0:
            # near round: expand every queued vertex, lanes threads per vertex
            rbuf = step % 2
            fslot = epoch % 3
            fbuf = epoch % 2
            i = group
            while i < count:
                u, e, end = _arc_range(indptr, nearq, chunkq, rbuf, i, split)
                du = dist[u]
                e += lane
                while e < end:
                    relaxed += 1
                    w = indices[e]
                    cand = du + weights[e]
                    if cand < dist[w]:
                        relaxed += _lower(graph, dist, queues, w, cand, threshold, chain, tick, wbuf, wslot, fbuf,
                                          fslot, bound, split, warp)
                    e += lanes
                i += ngroups
        else:
            # far split: raise the threshold, move what fell below it to the near queue
            fcount = ctl[FAR + epoch % 3]
            if fcount == 0:
                break
            far_scanned += fcount
            threshold = _far_split(dist, queues, indptr, fcount, threshold, delta, epoch, tick, wbuf, wslot,
                                   split, warp)
            epoch += 1
        cuda.syncthreads()  # barrier: the block's far pushes of this step have lowered its bound
        if cuda.threadIdx.x == 0 and bound[0] != FMIN_EMPTY:
            cuda.atomic.min(ctl, FMIN + epoch % 3, bound[0])  # atomic: the blocks fold their bounds into the pile's
            bound[0] = FMIN_EMPTY
        grid.sync()  # barrier: this step's pushes, bounds and counters are visible to the next step
        if fused:
            tick += ctl[FUSED + step % 2]
        else:
            tick += 1
        step += 1

    block_add(ctl, RELAX, relaxed)
    if tid == 0:
        ctl[ROUNDS] = step - epoch - block_steps + fused_rounds  # near rounds, grid-wide or fused
        ctl[SPLITS] = epoch
        ctl[GRID_STEPS] = step
        ctl[BLOCK_STEPS] = block_steps
        ctl[FUSED_ROUNDS] = fused_rounds
        ctl[FAR_SCANNED] = far_scanned
    if tree:
        tight_tree(indptr, indices, weights, dist, parent, inf, tid, nthreads)


# the records: graph = (indptr, indices, weights), queues = (near queue, its chunk indices, far pile, stamps, in-far
# flags, control words), search = (delta, inf, lanes, chain, tree), modes = (fuse_limit, fuse_lanes, split, warp)
@kernel("void(Tuple(({o}[::1], int32[::1], {w}[::1])), {w}[::1], int32[::1], "
        "Tuple((int32[:, ::1], int32[:, ::1], int32[:, ::1], int32[::1], int32[::1], int64[::1])), int64[::1], "
        "Tuple((int64, {w}, int64, int64, int64)), int32[:, ::1], UniTuple(int64, 4))",
        cases=OFFSETS, registers=NEARFAR_REGISTERS)
@functools.cache
def nearfar_kernel(registers: int = 0):
    """The persistent kernel (:func:`nearfar`) with at most ``registers`` registers per thread (0: as the compiler
    chooses). A capped build is not cached on disk: the cache would not tell it from the uncapped one."""
    cap = TARGET.register_cap(registers)
    return cuda.jit(cache=not cap, **cap)(nearfar)


class DeltaStepSolver(PersistentSSSP):
    """deltastep_gpu: near-far delta-stepping, every round inside one cooperative kernel."""

    ROUNDS_AT = ROUNDS  # the word of ``d_ctl`` that counts a run's rounds (read on the device by phast_gpu's core)

    def __init__(self, graph, *, delta, lanes, chain, block, grid, fuse, fuse_limit, fuse_queue, fuse_lanes, split,
                 push, launch, registers, paths):
        super().__init__(graph, delta=delta, lanes=lanes, chain=chain, block=block, grid=grid, fuse=fuse,
                         fuse_limit=fuse_limit, fuse_queue=fuse_queue, fuse_lanes=fuse_lanes, split=split,
                         push=push, launch=launch, registers=registers, paths=paths)
        self.chain = chain
        self.fuse = fuse
        self.fuse_queue = fuse_queue
        if split > 0 and fuse == "block":
            raise SolverError("split and fuse=block exclude each other (the block-local queue holds whole vertices)")
        self._near_far(delta, lanes, block, grid, split, push, launch, fused=fuse == "block")
        self.fuse_lanes = nearfar_lanes(fuse_lanes or self.lanes, block)
        self.fuse_limit = block_fuse_limit(fuse_limit, block, self.fuse_lanes) if fuse == "block" else 0
        self.registers = registers
        self.kernel = nearfar_kernel(registers)

    def _near_far(self, delta, lanes, block, grid, split, push, launch, fused=False):
        """The settings of the near-far kernels (this one and deltastep_lean's), resolved for the graph."""
        graph = self.graph
        self.delta = nearfar_delta(delta, graph)
        self.block = block
        depth = graph.hop_landmarks()[0] if not lanes else 0  # the automatic lanes read the hop depth
        self.lanes = nearfar_lanes(lanes, block, graph.n, depth, graph.m)
        self.max_degree = int(np.diff(graph.indptr).max()) if graph.n else 0
        self.split = nearfar_split(split, self.lanes, self.max_degree, fused, graph.m / max(graph.n, 1))
        self.push = push
        # 'auto': the kernel's launch captured into a CUDA graph and replayed (the simulator has no graphs)
        self.asked = launch
        self.launch = "graph" if launch != "direct" and TARGET.gpu else "direct"
        self.want_grid = grid
        self.dtype = graph.dtype
        self.inf = graph.dtype.type(graph.inf)
        self.grid = None
        self.replay = None  # (graph, stream) once captured

    def upload(self):
        n = self.graph.n
        self.upload_arrays(self.dtype)
        entries = n + self.graph.m // self.split + 1 if self.split else 0  # a vertex: at most 1 + degree / split
        self.d_near = cuda.device_array((2, entries or n), dtype=np.int32)
        self.d_chunk = cuda.device_array((2, entries or 1), dtype=np.int32)
        self.d_far = cuda.device_array((2, n), dtype=np.int32)
        self.d_stamp = cuda.device_array(n, dtype=np.int32)
        self.d_infar = cuda.device_array(n, dtype=np.int32)
        self.d_ctl = cuda.device_array(CTL_SIZE, dtype=np.int64)
        self.d_local = cuda.device_array((2, self.fuse_queue if self.fuse_limit else 1), dtype=np.int32)
        self.upload_source()
        self.want_grid = self.want_grid or blocks_per_sm(NEARFAR_BLOCKS_PER_SM)

    def _args(self):
        """The kernel's arguments, grouped in the records of :func:`nearfar`."""
        dg = self.dg
        queues = (self.d_near, self.d_chunk, self.d_far, self.d_stamp, self.d_infar, self.d_ctl)
        search = (np.int64(self.delta), self.inf, np.int64(self.lanes), np.int64(self.chain),
                  self.tree_flag())
        modes = (np.int64(self.fuse_limit), np.int64(self.fuse_lanes), np.int64(self.split),
                 np.int64(self.push == "warp"))
        return ((dg.indptr, dg.indices, dg.weights), self.d_dist, self.d_parent, queues, self.d_source, search,
                self.d_local, modes)

    def _launch(self, stream=0):
        self.kernel[self.grid, self.block, stream](*self._args())

    def _capture(self):
        """The launch as a CUDA graph; with launch='auto' a driver that cannot capture a cooperative launch
        falls back to direct launches (counter ``launch``), with 'graph' it is an error."""
        try:
            return capture_graph(self._launch)
        except Exception as exc:  # the driver's refusal, whatever its type
            if self.asked == "graph":
                raise SolverError(f"deltastep_gpu launch=graph: capturing the cooperative launch failed: {exc}")
            self.launch = "direct"
            return None

    def run(self, source):
        self.put_source(source)
        if self.grid is None:  # compiles once; the limit depends on the kernel's registers
            self.grid = cooperative_grid(self.kernel, self._args(), self.block, self.want_grid)
            self._launch()  # the first run (the harness's warm-up) launches directly, then captures the graph
            if self.launch == "graph":
                self.replay = self._capture()
        elif self.launch == "graph":
            self.replay[0].launch(self.replay[1])
        else:
            self._launch()
        self.launched()
        launches = 1 + self.host_tree(source, self.block)

        return lambda: self._counters(self.d_ctl.copy_to_host(), launches)  # after the trial's clock

    def _near_far_counters(self, ctl, launches) -> dict:
        """The counters the near-far kernels (this one and deltastep_lean's) share: control words and settings."""
        return {"iterations": int(ctl[ROUNDS]), "buckets": int(ctl[SPLITS]), "relaxations": int(ctl[RELAX]),
                "far_scanned": int(ctl[FAR_SCANNED]), "launches": launches, "delta": self.delta, "lanes": self.lanes,
                "grid": self.grid, "grid_steps": int(ctl[GRID_STEPS]), "split": self.split, "push": self.push,
                "launch": self.launch, "paths": self.paths}

    def _counters(self, ctl, launches) -> dict:
        """A run's counters from its control words and the settings used."""
        return {**self._near_far_counters(ctl, launches), "chain": self.chain, "block_steps": int(ctl[BLOCK_STEPS]),
                "fused_steps": int(ctl[FUSED_ROUNDS]), "fuse_limit": self.fuse_limit, "fuse_lanes": self.fuse_lanes,
                "registers": self.registers}
