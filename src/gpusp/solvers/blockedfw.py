"""Blocked Floyd-Warshall APSP on the GPU, the eight versions of paper 002 (Zuccato & Lena).

The algorithm (Venkataraman, Sahni & Mukhopadhyaya's blocked FW, as the paper uses it): pad the n x n
distance matrix to ``n_pad = r * B`` (``r = ceil(n / B)``; padded vertices are isolated: INF rows and
columns, 0 on the diagonal, so any n works and the answer is cropped at download) and cut it into
r x r blocks of B x B cells. Round t (t = 0 .. r-1) relaxes every d[i][j] through the B vertices
k of block t, in three phases:

1. the pivot block (t, t): plain Floyd-Warshall inside the block (B steps, each depending on the last);
2. the other blocks of pivot row t (read the pivot block and themselves) and of pivot column t;
3. every remaining block (I, J), I != t != J: it reads only (I, t) and (t, J), both final after phase 2,
   so the B steps need no ordering between threads and the cell can stay in a register.

One CUDA block of B x B threads computes one matrix block, one cell per thread (``threadIdx.x`` is
the column, so a warp reads consecutive addresses), with a ``syncthreads`` between the B steps of
phases 1 and 2. B is a compile-time constant (the kernels come from factories cached per B and distance
dtype); B = 24 gives 576-thread blocks. Work is n_pad^3 relaxations in every version (``relaxations``),
r rounds (``iterations``); the versions differ in how many launches and threads they spend and in
where the blocks live:

* **v10** (paper 1.0) - per round one launch for the pivot block, one launch per block of the pivot
  row/column and one per remaining block: r^2 single-block launches a round, r^3 in all.
* **v11** (1.1) - one kernel per phase, each launched over the full r x r grid; blocks outside the
  phase return at once (3r launches; phases 1 and 2 waste all but 1 and 2r-2 of r^2 blocks).
* **v12** (1.2) - rationalised grids: 1 block, 2(r-1) blocks (block b < r-1 is row block b, skipping
  t, the rest are column blocks) and (r-1)^2 blocks (index b maps to b + (b >= t)); 3r launches.
* **v20** (2.0) - v12 with the blocks each phase reads staged in shared memory: phase 1 the pivot block,
  phase 2 the pivot block and the own block, phase 3 blocks (I, t) and (t, J) (own cell in a register).
* **v21** (2.1) - v20 with bank-conflict prevention, applied only where the paper's rule says a conflict
  occurs. With 32 four-byte banks, rows i and i' of a shared B x B array with row stride S fall in the
  same bank for the same column when (i' - i) S = 0 (mod 32); the first such i' is lcm(S, 32) / S,
  so a column access ``A[i][k]`` by threads of different rows certainly conflicts when
  ``lcm(S, 32) <= (B - 1) * S`` (:func:`column_conflict`; with S = B: no conflict for B = 4, a
  conflict for 8, 16, 24 and 32). When it does (:func:`conflict_plan`), arrays read only by column
  (pivot block in row pieces, the own block in column pieces, block (I, t) in phase 3) are stored
  transposed, so the read becomes a row read; the pivot block in phase 1, read both ways, gets one
  padding column (stride B + 1) instead, when the rule says stride B + 1 is conflict-free; arrays
  read by row stay as they are (transposing them would create conflicts). The predecessor entries
  phase 1 and row pieces read (``P[k][j]``, by row) are staged untransposed.
* **v30** (3.0) - v21 with phase 2 split into four pieces (column blocks above / below the pivot, row
  blocks left / right of it: kernels for row and for column pieces) and phase 3 into the four
  quadrants around the pivot cross, launched on four ``cuda.stream()`` s; events make each quadrant
  wait for its two phase-2 pieces and the next round's phase 1 wait for every piece of this round.
  (In the simulator streams are synchronous, so this only checks the launch sequence.)
* **v40** (4.0) - the v30 sequence for all rounds (matrix reset, every piece, the negative-cycle check)
  captured once into a CUDA graph through a cuda.core ``GraphBuilder`` passed as the launch stream, with
  exactly v30's dependencies (``GraphBuilder.split`` forks a branch per dependent piece,
  ``GraphBuilder.join`` merges a piece's inputs); ``run`` replays it with one ``graph.launch``. The
  matrix is reset inside the graph by device-to-device copies from pristine copies. The first ``run``
  (a warm-up in the harness) launches the pieces plainly, which compiles every kernel, then captures;
  kernel arguments are baked into the graph, which is fine since the arrays live as long as the solver.
* **v41** (4.1) - the graph with the paper's relaxed inter-round dependencies: round t+1's phase 1 waits
  only for round t's lower-right quadrant, its upper and left phase-2 pieces also for round t's
  upper-right and lower-left quadrants, and its upper-left quadrant also for round t's upper-left one;
  everything else as in v40, so pieces of consecutive rounds may overlap. :func:`dependency_dag`
  builds both DAGs; the tests check them against the blocks every piece reads and writes.

Without a GPU (``gpusp.device.mode() != 'gpu'``) v40 and v41 launch their DAG's pieces one by one in
an adversarial topological order (latest round first), which checks the kernels and that the DAG's
dependencies suffice for those orders, not CUDA graph capture itself. On an H200 (numba-cuda 0.30.4,
cuda-core 1.2.2, driver 580) capture through ``GraphBuilder`` split / join, the in-graph memcpy reset
and replay were checked against SciPy, including after overwriting the matrices between replays.

Paths: the paper leaves a next-hop matrix as future work; here every version keeps a predecessor
matrix on the device (``p[i][j] = p[k][j]`` whenever going through k improves d[i][j]; -1 on the
diagonal and for unreachable pairs), the same O(1) extra work per improvement. Phases 2 (column pieces)
and 3 only remember the last improving k and read ``p[k][j]`` once at the end, since the block it comes
from does not change during those phases.

Zero-weight cycles: in a blocked round, phase 2 and 3 relax d[i][j] through k with d[i][k] (or d[k][j])
already relaxed through later vertices k' of the same block, so the walk behind a value may contain a
cycle; a zero-weight cycle then still gives a strict improvement and the predecessor chains can loop
(a pure-Python blocked FW did so on 6-7 of 100 random 13-vertex graphs with weights 0..3; the
sequential FW of ``floydwarshall_cpu`` did not). So when some weight is <= 0 the solver runs on
w' = w (n + 1) + 1 (counter ``hop_tiebreak``): ties are broken by edge count, every cycle gets a
positive length (a negative one stays negative: W (n + 1) + L <= -1 for L <= n edges), a shortest
w'-path is a shortest w-path with fewest edges, so predecessor chains strictly lose edges and end at
the source, and download recovers d = d' // (n + 1). The device matrix may widen to int64 for this
(counter ``matrix_dtype``); graphs with positive weights run unchanged.

Negative weights: INF operands are never added; sums are clamped at -INF so a negative cycle cannot
wrap the integers around; a negative diagonal entry after the last round raises NegativeCycleError (one
single-block check kernel and a one-word copy per run).

Complexity: Theta(n_pad^3) work, Theta(n_pad^2) memory (distance and predecessor matrices plus their
pristine copies), r sequential rounds; launches per run: v10 r^3, v11 / v12 / v20 / v21 3r, v30 up to
9r on four streams, v40 / v41 one graph launch (one check kernel extra everywhere).

The paper's findings on the blocking factor (K80, n = 80 .. 1200, B in {8, 16, 24, 32}): with shared
memory (2.x) B = 8 was never the best, larger B (16 to 32) won, the best depending on n (n = 640:
B = 32; n = 1200: B = 16 beat 24, 32 does not divide 1200) and the choice moved times only moderately;
with global memory (1.2) the trend reversed, smaller B being faster. 2.0 fell behind 2.1 / 3.0 at
B = 32 (bank conflicts), 3.0 was slowest at B = 8, 1.1 was the slowest measured version, and the graph
versions 4.0 and 4.1 were slow and alike (graph construction overhead).
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba import cuda

from ..device import mode
from ..errors import NegativeCycleError, SolverError
from ..data.graph import choose_dtype, inf_for
from .base import Solver
from .cpu import dense_predecessors

BANKS = 32
BLOCK_SIZES = (4, 8, 16, 24, 32)
DTYPES = ("int32", "int64")


# --- the paper's bank-conflict rule (version 2.1) ------------------------------------------------------
def column_conflict(B: int, stride: int | None = None, banks: int = BANKS) -> bool:
    """True when a column read of a B-row shared array with row ``stride`` surely hits one bank twice.

    Rows 0 and lcm(stride, banks) / stride share a bank for every column; that row exists when
    lcm(stride, banks) <= (B - 1) * stride (paper 002, sec. 2.4.2, with stride = B).
    """
    stride = B if stride is None else int(stride)
    return math.lcm(stride, banks) <= (B - 1) * stride


def conflict_plan(B: int, banks: int = BANKS) -> dict:
    """The v21 layout for blocking factor B: transpose column-read arrays and pad the pivot of phase 1
    only when :func:`column_conflict` predicts a conflict (and padding to stride B + 1 removes it)."""
    conflict = column_conflict(B, banks=banks)
    return {"conflict": conflict, "transpose": conflict,
            "pad": bool(conflict and not column_conflict(B, B + 1, banks))}


def _np_dtype(name):
    return np.dtype(name)


# --- kernels: global memory (versions 1.x) -------------------------------------------------------------
@functools.cache
def _global_kernels(B: int, dtype_name: str) -> dict:
    """The v10 / v11 / v12 kernels for blocking factor B and distance dtype (cells stay in global memory)."""
    DT = numba.int32 if dtype_name == "int32" else numba.int64
    INF = _np_dtype(dtype_name).type(inf_for(dtype_name))
    NEG = _np_dtype(dtype_name).type(-inf_for(dtype_name))

    @cuda.jit(device=True)
    def update(d, p, t, I, J):
        """Round t on block (I, J) in global memory, any phase: B ordered steps with a barrier each."""
        i = I * B + cuda.threadIdx.y
        j = J * B + cuda.threadIdx.x
        base = t * B
        for kk in range(B):
            k = base + kk
            dik = d[i, k]
            dkj = d[k, j]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < d[i, j]:
                    if s < NEG:
                        s = NEG
                    d[i, j] = s
                    p[i, j] = p[k, j]
            cuda.syncthreads()  # step kk's writes visible before row/column kk+1 is read

    @cuda.jit(device=True)
    def rest(d, p, t, I, J):
        """Phase 3 on block (I, J) in global memory: the cell in a register, no barrier needed."""
        i = I * B + cuda.threadIdx.y
        j = J * B + cuda.threadIdx.x
        base = t * B
        dij = d[i, j]
        kb = -1
        for kk in range(B):
            dik = d[i, base + kk]
            dkj = d[base + kk, j]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < dij:
                    dij = s
                    kb = kk
        if kb >= 0:
            if dij < NEG:
                dij = NEG
            d[i, j] = dij
            p[i, j] = p[base + kb, j]

    @cuda.jit(cache=True)
    def block(d, p, t, I, J):
        """v10: round t on the one block (I, J) of this single-block launch."""
        if cuda.blockIdx.x != 0:
            return
        update(d, p, t, I, J)

    @cuda.jit(cache=True)
    def full1(d, p, t):
        """v11 phase 1 over the full r x r grid: only block (t, t) works."""
        if cuda.blockIdx.x != t or cuda.blockIdx.y != t:
            return
        update(d, p, t, t, t)

    @cuda.jit(cache=True)
    def full2(d, p, t):
        """v11 phase 2 over the full r x r grid: only blocks of row t or column t, not the pivot, work."""
        I = cuda.blockIdx.y
        J = cuda.blockIdx.x
        if (I == t) == (J == t):
            return
        update(d, p, t, I, J)

    @cuda.jit(cache=True)
    def full3(d, p, t):
        """v11 phase 3 over the full r x r grid: only blocks outside row t and column t work."""
        I = cuda.blockIdx.y
        J = cuda.blockIdx.x
        if I == t or J == t:
            return
        rest(d, p, t, I, J)

    @cuda.jit(cache=True)
    def rat1(d, p, t):
        """v12 phase 1: one block, the pivot."""
        if cuda.blockIdx.x != 0:
            return
        update(d, p, t, t, t)

    @cuda.jit(cache=True)
    def rat2(d, p, t, r):
        """v12 phase 2 on 2(r-1) blocks: the first r-1 are row-t blocks, the rest column-t blocks."""
        b = cuda.blockIdx.x
        if b >= 2 * (r - 1):
            return
        if b < r - 1:
            update(d, p, t, t, b if b < t else b + 1)
        else:
            b -= r - 1
            update(d, p, t, b if b < t else b + 1, t)

    @cuda.jit(cache=True)
    def rat3(d, p, t):
        """v12 phase 3 on (r-1)^2 blocks: grid index b maps to block b + (b >= t)."""
        by = cuda.blockIdx.y
        bx = cuda.blockIdx.x
        rest(d, p, t, by if by < t else by + 1, bx if bx < t else bx + 1)

    return dict(block=block, full1=full1, full2=full2, full3=full3, rat1=rat1, rat2=rat2, rat3=rat3)


# --- kernels: shared memory (versions 2.x, 3.0, 4.x) ---------------------------------------------------
@functools.cache
def _shared_kernels(B: int, dtype_name: str, transpose: bool, pad: bool) -> dict:
    """The shared-memory kernels for B, dtype and a layout (transpose column-read arrays, pad phase 1)."""
    DT = numba.int32 if dtype_name == "int32" else numba.int64
    NPDT = _np_dtype(dtype_name).type
    INF = NPDT(inf_for(dtype_name))
    NEG = NPDT(-inf_for(dtype_name))
    TR = bool(transpose)
    W = B + (1 if pad else 0)

    @cuda.jit(device=True)
    def phase1(d, p, t):
        """Pivot block (t, t) staged in shared memory (padded row stride W), B ordered steps."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        i = t * B + ty
        j = t * B + tx
        A = cuda.shared.array((B, W), NPDT)
        P = cuda.shared.array((B, B), np.int32)
        dij = d[i, j]
        A[ty, tx] = dij
        P[ty, tx] = p[i, j]
        cuda.syncthreads()  # pivot block staged
        for k in range(B):
            dik = A[ty, k]
            dkj = A[k, tx]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < dij:
                    if s < NEG:
                        s = NEG
                    dij = s
                    A[ty, tx] = s
                    P[ty, tx] = P[k, tx]
            cuda.syncthreads()  # step k done before row/column k+1 is read
        d[i, j] = dij
        p[i, j] = P[ty, tx]

    @cuda.jit(device=True)
    def row(d, p, t, J):
        """Block (t, J) of the pivot row: pivot (read by column: transposed if TR) and own block shared."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * B
        i = base + ty
        j = J * B + tx
        PV = cuda.shared.array((B, B), NPDT)
        C = cuda.shared.array((B, B), NPDT)
        CP = cuda.shared.array((B, B), np.int32)
        if TR:
            PV[tx, ty] = d[i, base + tx]
        else:
            PV[ty, tx] = d[i, base + tx]
        dij = d[i, j]
        C[ty, tx] = dij
        CP[ty, tx] = p[i, j]
        cuda.syncthreads()  # pivot and own block staged
        for k in range(B):
            if TR:
                dik = PV[k, ty]
            else:
                dik = PV[ty, k]
            dkj = C[k, tx]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < dij:
                    if s < NEG:
                        s = NEG
                    dij = s
                    C[ty, tx] = s
                    CP[ty, tx] = CP[k, tx]
            cuda.syncthreads()  # step k done before own row k+1 is read
        d[i, j] = dij
        p[i, j] = CP[ty, tx]

    @cuda.jit(device=True)
    def col(d, p, t, I):
        """Block (I, t) of the pivot column: own block (read by column: transposed if TR) and pivot shared."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * B
        i = I * B + ty
        j = base + tx
        C = cuda.shared.array((B, B), NPDT)
        PV = cuda.shared.array((B, B), NPDT)
        dij = d[i, j]
        if TR:
            C[tx, ty] = dij
        else:
            C[ty, tx] = dij
        PV[ty, tx] = d[base + ty, j]
        cuda.syncthreads()  # own block and pivot staged
        kb = -1
        for k in range(B):
            if TR:
                dik = C[k, ty]
            else:
                dik = C[ty, k]
            dkj = PV[k, tx]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < dij:
                    if s < NEG:
                        s = NEG
                    dij = s
                    kb = k
                    if TR:
                        C[tx, ty] = s
                    else:
                        C[ty, tx] = s
            cuda.syncthreads()  # step k done before own column k+1 is read
        d[i, j] = dij
        if kb >= 0:
            p[i, j] = p[base + kb, j]  # the pivot block's predecessors are final in phase 2

    @cuda.jit(device=True)
    def quad(d, p, t, I, J):
        """Block (I, J) off the pivot cross: (I, t) (transposed if TR) and (t, J) shared, cell in a register."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * B
        i = I * B + ty
        j = J * B + tx
        R = cuda.shared.array((B, B), NPDT)
        Cb = cuda.shared.array((B, B), NPDT)
        if TR:
            R[tx, ty] = d[i, base + tx]
        else:
            R[ty, tx] = d[i, base + tx]
        Cb[ty, tx] = d[base + ty, j]
        dij = d[i, j]
        kb = -1
        cuda.syncthreads()  # blocks (I, t) and (t, J) staged; they do not change in phase 3
        for k in range(B):
            if TR:
                dik = R[k, ty]
            else:
                dik = R[ty, k]
            dkj = Cb[k, tx]
            if dik != INF and dkj != INF:
                s = DT(dik + dkj)
                if s < dij:
                    dij = s
                    kb = k
        if kb >= 0:
            if dij < NEG:
                dij = NEG
            d[i, j] = dij
            p[i, j] = p[base + kb, j]  # block (t, J) of p is final in phase 3

    @cuda.jit(cache=True)
    def k_p1(d, p, t):
        """Phase 1: one block, the pivot."""
        if cuda.blockIdx.x != 0:
            return
        phase1(d, p, t)

    @cuda.jit(cache=True)
    def k_p2(d, p, t, r):
        """Phase 2 on 2(r-1) blocks: the first r-1 are row-t blocks, the rest column-t blocks."""
        b = cuda.blockIdx.x
        if b >= 2 * (r - 1):
            return
        if b < r - 1:
            row(d, p, t, b if b < t else b + 1)
        else:
            b -= r - 1
            col(d, p, t, b if b < t else b + 1)

    @cuda.jit(cache=True)
    def k_p3(d, p, t):
        """Phase 3 on (r-1)^2 blocks: grid index b maps to block b + (b >= t)."""
        by = cuda.blockIdx.y
        bx = cuda.blockIdx.x
        quad(d, p, t, by if by < t else by + 1, bx if bx < t else bx + 1)

    @cuda.jit(cache=True)
    def k_row(d, p, t, j0):
        """Phase 2 piece: pivot-row blocks (t, j0 + blockIdx.x)."""
        row(d, p, t, j0 + cuda.blockIdx.x)

    @cuda.jit(cache=True)
    def k_col(d, p, t, i0):
        """Phase 2 piece: pivot-column blocks (i0 + blockIdx.x, t)."""
        col(d, p, t, i0 + cuda.blockIdx.x)

    @cuda.jit(cache=True)
    def k_quad(d, p, t, i0, j0):
        """Phase 3 piece: blocks (i0 + blockIdx.y, j0 + blockIdx.x) of one quadrant."""
        quad(d, p, t, i0 + cuda.blockIdx.y, j0 + cuda.blockIdx.x)

    return dict(p1=k_p1, p2=k_p2, p3=k_p3, row=k_row, col=k_col, quad=k_quad)


@cuda.jit(cache=True)
def negative_diagonal(d, n, flag):
    """One block: flag[0] = smallest i < n with d[i, i] < 0, else n."""
    if cuda.blockIdx.x != 0:
        return
    best = cuda.shared.array(1, np.int32)
    if cuda.threadIdx.x == 0:
        best[0] = n
    cuda.syncthreads()  # best initialised
    i = cuda.threadIdx.x
    while i < n:
        if d[i, i] < 0:
            cuda.atomic.min(best, 0, i)  # atomic: several threads may find negative entries
        i += cuda.blockDim.x
    cuda.syncthreads()  # every thread's minimum folded in
    if cuda.threadIdx.x == 0:
        flag[0] = best[0]


# --- the pieces of versions 3.0 / 4.x and their dependency DAGs ------------------------------------------
PIECES = ("p1", "up", "down", "left", "right", "ul", "ur", "dl", "dr")
_LANE = {"p1": 0, "up": 0, "ul": 0, "down": 1, "dr": 1, "left": 2, "dl": 2, "right": 3, "ur": 3}


def piece_ranges(kind: str, t: int, r: int):
    """Block-row range [i0, i1) and block-column range [j0, j1) that piece ``kind`` of round t writes."""
    lo, hi = (0, t), (t + 1, r)
    piv = (t, t + 1)
    return {"p1": (piv, piv), "up": (lo, piv), "down": (hi, piv), "left": (piv, lo), "right": (piv, hi),
            "ul": (lo, lo), "ur": (lo, hi), "dl": (hi, lo), "dr": (hi, hi)}[kind]


def piece_access(kind: str, t: int, r: int):
    """(reads, writes): the sets of blocks (I, J) a piece reads and writes (same for d and p)."""
    (i0, i1), (j0, j1) = piece_ranges(kind, t, r)
    writes = {(I, J) for I in range(i0, i1) for J in range(j0, j1)}
    reads = set(writes) | {(t, t)}
    if kind in ("ul", "ur", "dl", "dr"):
        reads = set(writes) | {(I, t) for I in range(i0, i1)} | {(t, J) for J in range(j0, j1)}
    return reads, writes


def dependency_dag(r: int, relaxed: bool = False):
    """The pieces of all r rounds in program order, with their dependencies.

    Returns a list of nodes ``(name, kind, t, deps)``: node 0 is ``("start", "start", -1, [])`` (the
    matrix reset), the last is ``("end", "end", r, [...])`` (the negative-cycle check), and in between
    every non-empty piece, ``name = f"{kind}{t}"``, ``deps`` indices of earlier nodes (transitively
    reduced). ``relaxed=False`` is v30 / v40 (a piece's round waits for the whole previous round),
    ``relaxed=True`` v41 (paper 4.1's inter-round dependencies).
    """
    want = {}  # (kind, t) -> list of (kind, t) it depends on, empty pieces included
    for t in range(r):
        if relaxed:
            want[("p1", t)] = [("dr", t - 1)] if t else [("start", -1)]
        else:
            want[("p1", t)] = [(k, t - 1) for k in PIECES] if t else [("start", -1)]
        for k in ("up", "down", "left", "right"):
            want[(k, t)] = [("p1", t)]
        if relaxed and t:
            want[("up", t)].append(("ur", t - 1))
            want[("left", t)].append(("dl", t - 1))
        want[("ul", t)] = [("up", t), ("left", t)] + ([("ul", t - 1)] if relaxed and t else [])
        want[("ur", t)] = [("up", t), ("right", t)]
        want[("dl", t)] = [("down", t), ("left", t)]
        want[("dr", t)] = [("down", t), ("right", t)]

    def empty(key):
        kind, t = key
        if kind == "start":
            return False
        (i0, i1), (j0, j1) = piece_ranges(kind, t, r)
        return i0 >= i1 or j0 >= j1

    @functools.cache
    def real(key):
        """The non-empty nodes standing for ``key`` (itself, or what an empty piece depends on)."""
        if not empty(key):
            return frozenset([key])
        out = set()
        for dep in want[key]:
            out |= real(dep)
        return frozenset(out)

    order = [("start", -1)] + [(k, t) for t in range(r) for k in PIECES if not empty((k, t))]
    index = {key: i for i, key in enumerate(order)}
    deps = [[]]
    for key in order[1:]:
        ds = set()
        for dep in want[key]:
            ds |= real(dep)
        deps.append(sorted(index[x] for x in ds))
    # the check waits for every sink
    used = {u for ds in deps for u in ds}
    deps.append([v for v in range(len(order)) if v not in used])
    order.append(("end", r))
    # transitive reduction (reach[v]: bitset of nodes v depends on, directly or not)
    reach = []
    for v, ds in enumerate(deps):
        bits = 0
        for u in ds:
            bits |= (1 << u) | reach[u]
        reach.append(bits)
    reduced = []
    for v, ds in enumerate(deps):
        keep = [u for u in ds if not any(w != u and (reach[w] >> u) & 1 for w in ds)]
        reduced.append(keep)
    return [(("start" if k == "start" else "end" if k == "end" else f"{k}{t}"), k, t, reduced[v])
            for v, (k, t) in enumerate(order)]


def adversarial_order(dag):
    """A topological order of ``dag`` that runs the latest-round ready piece first (for the simulator)."""
    indeg = [len(node[3]) for node in dag]
    users = [[] for _ in dag]
    for v, node in enumerate(dag):
        for u in node[3]:
            users[u].append(v)
    ready = [v for v in range(len(dag)) if indeg[v] == 0]
    out = []
    while ready:
        ready.sort(key=lambda v: (dag[v][2], v))
        v = ready.pop()
        out.append(v)
        for w in users[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return out


# --- solvers ---------------------------------------------------------------------------------------------
def _event():
    return cuda.event() if mode() != "gpu" else cuda.event(timing=False)


class _Launch:
    """A kernel with its launch configuration, configured once on a GPU (configuring costs more host
    time than launching) and per call in the simulator, whose ``kernel[...]`` mutates the kernel."""

    __slots__ = ("kernel", "config", "bound")

    def __init__(self, kernel, *config):
        self.kernel, self.config = kernel, config
        self.bound = kernel[config] if mode() == "gpu" else None

    def __call__(self, *args):
        if self.bound is not None:
            self.bound(*args)
        else:
            self.kernel[self.config](*args)


class _BlockedFW(Solver):
    """Shared state of every version: padded matrices on the device, reset, check, download."""

    device = "gpu"
    version = "?"

    def __init__(self, graph, block_size: int = 32, **params):
        super().__init__(graph, block_size=block_size, **params)
        if block_size not in BLOCK_SIZES:
            raise SolverError(f"block_size must be one of {BLOCK_SIZES}, not {block_size}")
        self.B = int(block_size)
        self.n = graph.n
        self.r = -(-self.n // self.B)
        self.n_pad = self.r * self.B
        # hop tie-break (see the module docstring): only needed when a zero-weight cycle can exist
        self.scale = self.n + 1 if graph.m and int(graph.weights.min()) <= 0 else 0
        if self.scale:
            w = graph.weights.astype(np.int64)
            ends = np.array([int(w.min()) * self.scale + 1, int(w.max()) * self.scale + 1], dtype=np.int64)
            self.dtype = choose_dtype(self.n, ends)
        else:
            self.dtype = np.dtype(graph.dtype)
        self.dtype_name = self.dtype.name
        self.inf = inf_for(self.dtype)
        self.launches = 0
        self.d = self.p = self.d0 = self.p0 = self.flag = None

    def host_matrices(self, graph=None):
        """Padded initial distance (INF off the graph, 0 on the diagonal) and predecessor matrices of ``graph``
        (default: the solver's)."""
        n, npad = self.n, self.n_pad
        d0 = np.full((npad, npad), self.inf, dtype=self.dtype)
        np.fill_diagonal(d0, 0)
        p0 = np.full((npad, npad), -1, dtype=np.int32)
        if n:
            dense = (graph or self.graph).to_dense(np.int64)
            p0[:n, :n] = dense_predecessors(dense, inf_for(np.int64))
            if self.scale:  # w -> w (n + 1) + 1 on edges; the diagonal (0 or a negative self-loop) likewise
                finite = dense != inf_for(np.int64)
                diag = np.diagonal(dense).copy()
                dense = np.where(finite, dense * self.scale + 1, self.inf)
                np.fill_diagonal(dense, np.where(diag < 0, diag * self.scale + 1, 0))
            d0[:n, :n] = np.where(dense == inf_for(np.int64), self.inf, dense)
        return d0, p0

    def upload(self):
        if self.n == 0:
            return
        d0, p0 = self.host_matrices()
        self.d0 = cuda.to_device(d0)
        self.p0 = cuda.to_device(p0)
        self.d = cuda.device_array_like(d0)
        self.p = cuda.device_array_like(p0)
        self.flag = cuda.device_array(1, dtype=np.int32)
        self.check_threads = 256 if mode() == "gpu" else 32
        self.B2 = (self.B, self.B)
        self.prepare()

    def prepare(self):
        """Version-specific set-up after the arrays exist (configured launchers, streams, events)."""

    def reset(self, stream=0):
        self.d.copy_to_device(self.d0, stream=stream)
        self.p.copy_to_device(self.p0, stream=stream)

    def check(self, stream=0):
        negative_diagonal[1, self.check_threads, stream](self.d, self.n, self.flag)

    def finish(self, stream=0):
        """Read the check's flag (a sync) and raise on a negative cycle."""
        v = int(self.flag.copy_to_host(stream=stream)[0])
        if stream:
            stream.synchronize()
        if v < self.n:
            raise NegativeCycleError(vertex=v)

    def counters(self, **extra):
        out = {"iterations": self.r, "launches": self.launches, "relaxations": self.n_pad ** 3,
               "hop_tiebreak": bool(self.scale), "matrix_dtype": self.dtype_name}
        out.update(extra)
        return out

    def run(self, source=None):
        if self.n == 0:
            self.launches = 0
            return self.counters()
        self.reset()
        self.launches = self.rounds() + 1
        self.check()
        self.finish()
        return self.counters()

    def rounds(self) -> int:
        raise NotImplementedError

    def download(self):
        n = self.n
        if n == 0:
            return np.zeros((0, 0), dtype=self.dtype), np.zeros((0, 0), dtype=np.int32)
        dist = self.d.copy_to_host()[:n, :n]
        parent = np.ascontiguousarray(self.p.copy_to_host()[:n, :n])
        if self.scale:  # d' = d (n + 1) + hops with 0 <= hops < n + 1
            dist = np.where(dist == self.inf, self.graph.inf, dist // self.scale)
        return np.ascontiguousarray(dist, dtype=self.graph.dtype), parent


class V10Solver(_BlockedFW):
    """1.0: every block of every phase is its own single-block launch (r^2 launches per round)."""

    version = "1.0"

    def prepare(self):
        self.k_block = _Launch(_global_kernels(self.B, self.dtype_name)["block"], 1, self.B2)

    def rounds(self):
        d, p, r, k = self.d, self.p, self.r, self.k_block
        for t in range(r):
            k(d, p, t, t, t)
            for J in range(r):
                if J != t:
                    k(d, p, t, t, J)
            for I in range(r):
                if I != t:
                    k(d, p, t, I, t)
            for I in range(r):
                if I == t:
                    continue
                for J in range(r):
                    if J != t:
                        k(d, p, t, I, J)
        return r ** 3


class V11Solver(_BlockedFW):
    """1.1: one kernel per phase, each over the full r x r grid (blocks outside the phase return)."""

    version = "1.1"

    def prepare(self):
        ks = _global_kernels(self.B, self.dtype_name)
        grid = (self.r, self.r)
        self.k = [_Launch(ks[name], grid, self.B2) for name in ("full1", "full2", "full3")]

    def rounds(self):
        d, p = self.d, self.p
        k1, k2, k3 = self.k
        for t in range(self.r):
            k1(d, p, t)
            k2(d, p, t)
            k3(d, p, t)
        return 3 * self.r


class _Rational(_BlockedFW):
    """Grids of 1, 2(r-1) and (r-1)^2 blocks (versions 1.2, 2.0, 2.1)."""

    def kernels(self) -> tuple:
        raise NotImplementedError

    def prepare(self):
        k1, k2, k3 = self.kernels()
        r = self.r
        self.k1 = _Launch(k1, 1, self.B2)
        self.k2 = _Launch(k2, max(1, 2 * (r - 1)), self.B2)
        self.k3 = _Launch(k3, (max(1, r - 1), max(1, r - 1)), self.B2)

    def rounds(self):
        d, p, r = self.d, self.p, self.r
        for t in range(r):
            self.k1(d, p, t)
            if r > 1:
                self.k2(d, p, t, r)
                self.k3(d, p, t)
        return r if r == 1 else 3 * r


class V12Solver(_Rational):
    """1.2: rationalised grids, global memory."""

    version = "1.2"

    def kernels(self):
        ks = _global_kernels(self.B, self.dtype_name)
        return ks["rat1"], ks["rat2"], ks["rat3"]


class V20Solver(_Rational):
    """2.0: v12 with the blocks each phase reads staged in shared memory."""

    version = "2.0"
    layout = {"transpose": False, "pad": False}

    def kernels(self):
        ks = _shared_kernels(self.B, self.dtype_name, self.layout["transpose"], self.layout["pad"])
        return ks["p1"], ks["p2"], ks["p3"]


class V21Solver(V20Solver):
    """2.1: v20 with transposition / padding where the paper's lcm rule predicts bank conflicts."""

    version = "2.1"
    layout = None  # None: conflict_plan(B); tests may force a layout

    def kernels(self):
        lay = self.layout or conflict_plan(self.B)
        ks = _shared_kernels(self.B, self.dtype_name, lay["transpose"], lay["pad"])
        return ks["p1"], ks["p2"], ks["p3"]


class V30Solver(_BlockedFW):
    """3.0: v21's kernels, phase 2 in four pieces and phase 3 in four quadrants on four streams."""

    version = "3.0"
    relaxed = False
    layout = None

    def prepare(self):
        lay = self.layout or conflict_plan(self.B)
        self.ks = _shared_kernels(self.B, self.dtype_name, lay["transpose"], lay["pad"])
        self.dag = dependency_dag(self.r, relaxed=self.relaxed)
        self.streams = [cuda.stream() for _ in range(4)]
        self.events = [_event() for _ in self.dag]
        self.lanes = [_LANE.get(kind, 0) for _, kind, _, _ in self.dag]
        self.kernel_nodes = sum(1 for _, kind, _, _ in self.dag if kind not in ("start", "end"))
        self.plan = None

    def piece_call(self, kind, t, stream):
        """(configured kernel, args) of one piece of round t on ``stream`` (numba stream, 0 or a builder)."""
        (i0, i1), (j0, j1) = piece_ranges(kind, t, self.r)
        d, p, B2 = self.d, self.p, self.B2
        if kind == "p1":
            return _Launch(self.ks["p1"], 1, B2, stream), (d, p, t)
        if kind in ("up", "down"):
            return _Launch(self.ks["col"], i1 - i0, B2, stream), (d, p, t, i0)
        if kind in ("left", "right"):
            return _Launch(self.ks["row"], j1 - j0, B2, stream), (d, p, t, j0)
        return _Launch(self.ks["quad"], (j1 - j0, i1 - i0), B2, stream), (d, p, t, i0, j0)

    def launch_piece(self, kind, t, stream):
        """Launch one piece of round t on ``stream``."""
        kern, args = self.piece_call(kind, t, stream)
        kern(*args)

    def stream_plan(self):
        """Per node: (stream, events to wait for, kernel or None, args, event to record or None).

        Built once: configuring a launch (and converting its stream) costs more host time than the
        launch itself, and v30 issues up to 9r of them a run."""
        s, ev, lanes = self.streams, self.events, self.lanes
        needed = [False] * len(self.dag)
        for v, (_, _, _, deps) in enumerate(self.dag):
            for u in deps:
                if lanes[u] != lanes[v]:
                    needed[u] = True
        plan = []
        for v, (_, kind, t, deps) in enumerate(self.dag):
            st = s[lanes[v]]
            waits = [ev[u] for u in deps if lanes[u] != lanes[v]]
            if kind in ("start", "end"):
                kern, args = None, kind
            else:
                kern, args = self.piece_call(kind, t, st)
            plan.append((st, waits, kern, args, ev[v] if needed[v] else None))
        return plan

    def run_streams(self):
        """Issue the DAG in program order on four streams; events carry the cross-stream dependencies."""
        if self.plan is None:
            self.plan = self.stream_plan()
        for st, waits, kern, args, record in self.plan:
            for e in waits:
                e.wait(st)
            if kern is not None:
                kern(*args)
            elif args == "start":
                self.reset(st)
            else:
                self.check(st)
            if record is not None:
                record.record(st)
        self.finish(self.streams[0])

    def run(self, source=None):
        if self.n == 0:
            self.launches = 0
            return self.counters()
        self.run_streams()
        self.launches = self.kernel_nodes + 1
        return self.counters()


class _GraphVersion(V30Solver):
    """4.x: the DAG captured once into a CUDA graph (cuda.core GraphBuilder), then replayed."""

    def prepare(self):
        super().prepare()
        self.graph_exec = None
        self.core_stream = None

    def run(self, source=None):
        if self.n == 0:
            self.launches = 0
            return self.counters(graph=False)
        self.launches = self.kernel_nodes + 1
        if mode() != "gpu":
            self.run_order(adversarial_order(self.dag))
            return self.counters(graph=False)
        if self.graph_exec is None:
            self.run_streams()  # compiles every kernel before capture; a valid run on its own
            self.graph_exec = self.capture()
            return self.counters(graph=False)
        self.graph_exec.launch(self.core_stream)
        self.finish()
        return self.counters(graph=True, host_launches=1)

    def run_order(self, order):
        """Launch the DAG's nodes one by one in ``order`` on the default stream (simulator fallback)."""
        for v in order:
            _, kind, t, _ = self.dag[v]
            if kind == "start":
                self.reset()
            elif kind == "end":
                self.check()
            else:
                self.launch_piece(kind, t, 0)
        self.finish()

    def capture(self):
        """Build the executable graph: one branch per dependency edge via GraphBuilder.split / join."""
        from cuda.core import Device, Stream

        try:
            from cuda.core.graph import GraphBuilder
        except ImportError:  # cuda.core < 1.0
            from cuda.core import GraphBuilder
        dev = Device(cuda.get_current_device().id)
        dev.set_current()
        self.core_stream = Stream.from_handle(0)  # the legacy default stream, as numba's launches use
        gb = dev.create_graph_builder()
        gb.begin_building()

        def launch(v, b):
            _, kind, t, _ = self.dag[v]
            if kind == "start":  # captured as two memcpy nodes
                self.reset(cuda.external_stream(int(b.stream.handle)))
            elif kind == "end":
                self.check(b)
            else:
                self.launch_piece(kind, t, b)

        try:
            final = wire_dag(self.dag, gb, GraphBuilder.join, launch)
            if final is not gb:
                raise SolverError("the primary builder did not reach the last node")
            gb.end_building()
            graph = gb.complete()
        except Exception as exc:
            raise SolverError(f"{type(self).__name__}: CUDA graph capture failed: {exc}") from exc
        finally:
            try:
                gb.close()
            except Exception:
                pass
        return graph


def wire_dag(dag, root, join, launch):
    """Issue ``dag`` into a graph under capture: ``launch(v, builder)`` per node, in program order.

    A node with one dependency continues that dependency's builder; with several, ``join`` merges
    their builders; a node with several users ``split`` s its builder, one branch per user, so every
    edge of the DAG (and no other ordering) becomes a dependency in the graph. Returns the builder of
    the last node, which is ``root`` again when the DAG has one sink (join keeps the primary builder).
    """
    users = [[] for _ in dag]
    for v, node in enumerate(dag):
        for u in node[3]:
            users[u].append(v)
    edge = {}  # (u, v) -> the builder carrying u's completion to v
    final = None
    for v, node in enumerate(dag):
        deps = node[3]
        if not deps:
            b = root
        elif len(deps) == 1:
            b = edge.pop((deps[0], v))
        else:
            b = join(*[edge.pop((u, v)) for u in deps])
        launch(v, b)
        outs = users[v]
        if not outs:
            final = b
        elif len(outs) == 1:
            edge[(v, outs[0])] = b
        else:
            for w, bw in zip(outs, b.split(len(outs))):
                edge[(v, w)] = bw
    if edge:
        raise SolverError(f"graph wiring left {len(edge)} dependencies unconsumed")
    return final


class V40Solver(_GraphVersion):
    """4.0: the v30 pieces and dependencies (round barrier) as one CUDA graph."""

    version = "4.0"
    relaxed = False


class V41Solver(_GraphVersion):
    """4.1: the CUDA graph with the paper's relaxed inter-round dependencies."""

    version = "4.1"
    relaxed = True


# --- offline compile gate --------------------------------------------------------------------------------
def compile_targets():
    """(label, kernel, signature) for every kernel, every B in BLOCK_SIZES and int32 / int64 distances."""
    out = []
    for w in DTYPES:
        mats = f"{w}[:, ::1], int32[:, ::1]"
        out.append((f"negative_diagonal[{w}]", negative_diagonal, f"void({w}[:, ::1], int64, int32[::1])"))
        for B in BLOCK_SIZES:
            g = _global_kernels(B, w)
            out += [
                (f"block[B={B},{w}]", g["block"], f"void({mats}, int64, int64, int64)"),
                (f"full1[B={B},{w}]", g["full1"], f"void({mats}, int64)"),
                (f"full2[B={B},{w}]", g["full2"], f"void({mats}, int64)"),
                (f"full3[B={B},{w}]", g["full3"], f"void({mats}, int64)"),
                (f"rat1[B={B},{w}]", g["rat1"], f"void({mats}, int64)"),
                (f"rat2[B={B},{w}]", g["rat2"], f"void({mats}, int64, int64)"),
                (f"rat3[B={B},{w}]", g["rat3"], f"void({mats}, int64)"),
            ]
            plain = _shared_kernels(B, w, False, False)
            lay = conflict_plan(B)
            v21 = _shared_kernels(B, w, lay["transpose"], lay["pad"])
            tag = f"T{int(lay['transpose'])}P{int(lay['pad'])}"
            for name, sig in (("p1", f"void({mats}, int64)"), ("p2", f"void({mats}, int64, int64)"),
                              ("p3", f"void({mats}, int64)")):
                out.append((f"{name}[B={B},{w},v20]", plain[name], sig))
                if v21 is not plain:
                    out.append((f"{name}[B={B},{w},v21 {tag}]", v21[name], sig))
            out += [
                (f"row[B={B},{w},{tag}]", v21["row"], f"void({mats}, int64, int64)"),
                (f"col[B={B},{w},{tag}]", v21["col"], f"void({mats}, int64, int64)"),
                (f"quad[B={B},{w},{tag}]", v21["quad"], f"void({mats}, int64, int64, int64)"),
            ]
    return out
