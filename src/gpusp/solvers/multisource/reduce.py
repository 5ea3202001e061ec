"""What a sweep over every tree keeps of a batch (docs/solvers/multisource.md, "All trees"): per source the
eccentricity (largest finite distance), the count and int64 sum of the reachable distances, a histogram of them in
HIST_BINS bins of one width (the last bin open), and the distances to chosen targets, all read from the batch's
vertex-major distances on the device by :func:`reduce_batch`; :func:`reduce_rows` computes the same from host rows.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..common.gate import DISTANCES, kernel

WARP = 32
HIST_BINS = 64  # bins of the per-source histogram: HIST_BINS - 1 of the graph's width, the last one open
HIST_SLOTS = HIST_BINS * WARP  # the block's shared histogram: a compile-time size
REDUCE_BLOCK = 256  # threads per block: 32 sources (a lane each) x 8 warps over the vertices
REDUCE_BLOCKS_PER_SM = 8  # blocks the launch aims at per multiprocessor (the vertices are cut into slabs for them)
I64 = numba.int64


@kernel("void({w}[::1], int64, int64, int64, {w}, int64, int64[::1], int64[::1], int64[::1], int32[:, ::1], "
        "int32[::1], {w}[:, ::1])", cases=DISTANCES)
@cuda.jit
def reduce_batch(dist, ns, S, base, inf, width, ecc, total, reach, hist, targets, od):
    """Block (x: a word of 32 sources, y: a slab of vertices): lane s of every warp reads dist[v * S + s] of its
    source for the warp's vertices v (32 lanes, one coalesced segment), folds the finite ones into its largest,
    count and sum, and counts them into the block's shared histogram; then one atomic per lane and quantity into
    the outputs at position base + s (ecc, total, reach, hist[base + s, bin]) and the targets' distances into
    od[j, base + s]. The outputs start at 0 (ecc: every source reaches itself at 0)."""
    lane = cuda.threadIdx.x % WARP
    warp = cuda.threadIdx.x // WARP
    warps = cuda.blockDim.x // WARP
    s = cuda.blockIdx.x * WARP + lane
    n = dist.size // S
    bins = cuda.shared.array(HIST_SLOTS, numba.int32)  # bins[b * 32 + lane]: a bank per lane
    for i in range(cuda.threadIdx.x, HIST_SLOTS, cuda.blockDim.x):
        bins[i] = 0
    cuda.syncthreads()  # the block's histogram is zero before any lane counts into it
    if s < ns:
        far = I64(0)
        tot = I64(0)
        cnt = I64(0)
        step = cuda.gridDim.y * warps
        v = I64(cuda.blockIdx.y * warps + warp)
        while v < n:
            d = dist[v * S + s]
            if d != inf:
                dl = I64(d)  # int64 before any sum: n distances of up to 2^31 each
                far = max(far, dl)
                tot += dl
                cnt += 1
                cuda.atomic.add(bins, min(dl // width, HIST_BINS - 1) * WARP + lane, 1)  # atomic: the block's warps
            v += step
        j = I64(cuda.blockIdx.y * warps + warp)
        while j < targets.size:
            od[j, base + s] = dist[I64(targets[j]) * S + s]  # lanes write consecutive positions: coalesced
            j += step
        if cnt > 0:
            cuda.atomic.max(ecc, base + s, far)  # atomic: the slabs of one source meet here
            cuda.atomic.add(total, base + s, tot)  # atomic: as above
            cuda.atomic.add(reach, base + s, cnt)  # atomic: as above
    cuda.syncthreads()  # every count of the block is in its histogram
    for i in range(cuda.threadIdx.x, HIST_SLOTS, cuda.blockDim.x):
        if bins[i] != 0:  # only lanes of sources < ns counted
            cuda.atomic.add(hist, (base + cuda.blockIdx.x * WARP + i % WARP, i // WARP), bins[i])  # atomic: slabs


def reduce_grid(n: int, ns: int, block: int, multiprocessors: int) -> tuple[int, int]:
    """(words of 32 sources, slabs of vertices): about REDUCE_BLOCKS_PER_SM blocks per multiprocessor, at least one
    slab per word and no slab without a vertex."""
    words = (ns + WARP - 1) // WARP
    warps = block // WARP
    slabs = max(1, min((max(n, 1) + warps - 1) // warps, REDUCE_BLOCKS_PER_SM * multiprocessors // words))
    return words, slabs


class Reductions:
    """The device arrays a sweep of K sources reduces into (positions in the order solved), zeroed, and the launch of
    :func:`reduce_batch` for each batch."""

    def __init__(self, k: int, targets: np.ndarray, dtype, inf: int, width: int, block: int = REDUCE_BLOCK,
                 timed: bool = False):
        from ...device import multiprocessors

        self.k, self.inf, self.width, self.block = k, dtype.type(inf), int(width), block
        self.events = [] if timed else None  # CUDA events around each launch: the reductions' share of a sweep
        self.ecc = cuda.to_device(np.zeros(k, dtype=np.int64))
        self.total = cuda.to_device(np.zeros(k, dtype=np.int64))
        self.reach = cuda.to_device(np.zeros(k, dtype=np.int64))
        self.hist = cuda.to_device(np.zeros((k, HIST_BINS), dtype=np.int32))
        self.targets = cuda.to_device(np.asarray(targets, dtype=np.int32))
        self.od = cuda.device_array((len(targets), k), dtype=dtype)
        self.sms = multiprocessors()

    def launch(self, dist, n: int, S: int, base: int, count: int) -> None:
        """Reduce the batch whose ``count`` sources are at positions base .. base + count - 1."""
        grid = reduce_grid(n, count, self.block, self.sms)
        if self.events is not None:
            self.events.append((cuda.event(), cuda.event()))
            self.events[-1][0].record()
        reduce_batch[grid, self.block](dist, np.int64(count), np.int64(S), np.int64(base), self.inf,
                                       np.int64(self.width), self.ecc, self.total, self.reach, self.hist,
                                       self.targets, self.od)
        if self.events is not None:
            self.events[-1][1].record()

    def elapsed_ms(self) -> float:
        """Milliseconds of the timed launches together (waits for the last)."""
        if not self.events:
            return 0.0
        self.events[-1][1].synchronize()
        return float(sum(cuda.event_elapsed_time(start, end) for start, end in self.events))

    def download(self) -> dict:
        """The reductions on the host: eccentricity, total, reach, histogram (K rows) and od (K x targets)."""
        return {"eccentricity": self.ecc.copy_to_host(), "total": self.total.copy_to_host(),
                "reach": self.reach.copy_to_host(), "histogram": self.hist.copy_to_host(),
                "od": np.ascontiguousarray(self.od.copy_to_host().T)}


def reduce_rows(dist: np.ndarray, inf: int, width: int, targets) -> dict:
    """:func:`reduce_batch`'s quantities from host rows (one per source), the reference the sampled check and the
    tests compare with."""
    dist = np.atleast_2d(np.asarray(dist))
    finite = dist != inf
    values = np.where(finite, dist, 0).astype(np.int64)
    bins = np.minimum(values // int(width), HIST_BINS - 1)
    hist = np.zeros((dist.shape[0], HIST_BINS), dtype=np.int32)
    for i in range(dist.shape[0]):
        hist[i] = np.bincount(bins[i][finite[i]], minlength=HIST_BINS)
    return {"eccentricity": values.max(axis=1, initial=0), "total": values.sum(axis=1),
            "reach": finite.sum(axis=1).astype(np.int64), "histogram": hist,
            "od": dist[:, np.asarray(targets, dtype=np.int64)]}
