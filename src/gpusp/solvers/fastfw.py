"""Register-blocked Floyd-Warshall APSP (``blockedfw_fast``): large tiles, a block of cells per thread.

Algorithm. The three-phase blocked Floyd-Warshall of Venkataraman, Sahni & Mukhopadhyaya (as in paper
002's versions, :mod:`gpusp.solvers.blockedfw`): the n x n matrix is padded to ``n_pad = r T`` (padded
vertices isolated: INF off the diagonal, 0 on it; any n works) and cut into r x r tiles of T x T
cells. Round t relaxes every d[i][j] through the T vertices of tile t: phase 1 the pivot tile (t, t),
phase 2 the other tiles of pivot row and column t, phase 3 the (r-1)^2 remaining tiles, which read
only tiles finished in phase 2. What is new is how a CUDA block spends its threads (the register
blocking of dense GEMM, applied to the (min, +) semiring):

* a CUDA block of (T/R) x (T/R) threads owns one T x T tile; each thread owns an R x R register block
  of cells, rows ``ty + a T/R`` and columns ``tx + b T/R`` (a, b < R; strided so that a warp's
  shared-memory reads hit consecutive banks and its global accesses are coalesced);
* phase 3 (more than 99 % of the n^3 work for r >= 100) stages the pivot-column tile (I, t)
  transposed (row stride T + 1: its staging writes are conflict-free) and the pivot-row tile (t, J) in
  shared memory, KC = 32 (int32 at T = 128) pivots at a time; per pivot k a thread loads R values of
  column k and R values of row k into registers and does R^2 add-mins on its register block, so each
  shared-memory load feeds R add-mins (R = 8: 16 loads per 64 add-mins);
* phases 1 and 2 (O(n^2 T) work) keep the thread's cells in registers, read column k and row k of the
  round from global memory (L1-resident) and write an improved cell through to global memory, with one
  barrier per pivot; with paths a cell's last improving pivot k is kept in a byte of shared memory and its
  predecessor p[i][j] = p[k][j] is resolved once after the last pivot (``resolve_paths``: (k, j) cannot improve
  after pivot k, so its end-of-phase p is the one at the improvement; on the pivot rows that p is found by
  following last pivots inside the tile back to a cell the phase left alone). A dependent global read of
  p[k][j] inside each of the 2T serial pivot steps of a round cost 85-100 us a round at n = 1200.

Kernel variants (registry parameters, compile-time constants). The kernels above are the reference
(:data:`DEFAULTS`); by default ('auto', unroll 0) the packed-key kinds take :data:`AUTO_VARIANT`, the fastest
measured on the H200: with paths ``shared`` + ``scalar`` + unroll 8, without ``shared`` + ``vec4`` + unroll 8,
both ``single`` (n = 8192: 167 -> 92 ms with paths, 119 -> 69 ms without; Gnutella30 with paths 12.2 -> 6.3 s).
The general kernels (gen32 / gen64) and tiles the variant does not fit keep the reference:

* ``p12`` - ``global`` (above) or ``shared``: phases 1-2 copy the tile and, off the diagonal, the pivot tile
  into shared memory (2 T (T+1) words, so T <= 64 at int32), relax there with one barrier per pivot and
  write the tile back once; the pivot's column and row come from shared memory instead of L1. Predecessors
  are resolved after the phase as above. Not with the persistent kernel (it would hold both phases' shared
  memory).
* ``inner`` - ``scalar`` (32-bit loads), ``vec2`` / ``vec4`` (64- / 128-bit ``LDS.64`` / ``LDS.128``): phase 3
  in a second layout (``phase3x``) where a thread owns R consecutive rows and R consecutive columns (R must be
  a multiple of the width V). The pivot-column chunk is staged row-major, ``As[i][k]`` (row stride KC + 4:
  rows R apart start 16 banks apart, rows stay 16-byte aligned; staging is coalesced and conflict-free), the
  pivot-row chunk as ``Bs[k][j]``; per V pivots a thread loads V consecutive pivots of each of its R rows and,
  per pivot, R consecutive columns: 2R loads of V values per V R^2 relaxations (R = V = 4: 1 load per 8
  add-mins, against 1 per 2 scalar). Numba has no 128-bit integer, so the vectors come from LLVM's
  load-store vectorizer: shared arrays declared with ``alignment=4 V`` and unsigned (uint32) indices, which
  drop Numba's negative-index wraparound and let LLVM prove the alignment.
* ``unroll`` - pivots per k-loop iteration (U = max(unroll, V)), written out as U / V calls of one group
  device function: LLVM unrolls the R x R and V loops but keeps a loop over groups of 64+ instructions rolled.
* ``stage`` - ``single``: one buffer, load chunk, barrier, compute, barrier; ``double``: two buffers of half
  the chunk (KC <= T/2, so there is always a next chunk), the next chunk's global loads issued into registers
  before the current chunk's compute and stored to the other buffer after it, one barrier per chunk.

Any non-default ``inner`` / ``unroll`` / ``stage`` selects ``phase3x`` (``scalar`` then loads 32-bit values
in the consecutive layout). Its kernel carries launch bounds for K3_REGS = 128 registers per thread at R <= 4
and at most 256 threads (two blocks per SM, as the default kernel's 96 registers give; left alone ptxas takes
150-190 and one block fits). SASS census (benchmarks/fastfw_sass.py, sm_90, T 64, R 4, dpx): 2.56
instructions per relaxation in the default kernel's k loop, 1.27 with vec4 + unroll 8 (128 VIADDMNMX, 16
LDS.128 and 19 others per 8 pivots), 128 registers.

Paths without extra inner-loop work. With ``paths`` on, phase 3 works on packed keys: a distance x is
kept as ``x * T + low`` (a shift by S = log2 T): the pivot-column operand gets ``low = k`` (the pivot's
index within the tile), the pivot-row operand and the cell itself ``low = 0``. A candidate key is then
``(d[i][k] + d[k][j]) T + k``, the add-min is unchanged, a candidate beats the cell only when its
distance is strictly smaller, and at the end the winning pivot is ``key mod T`` and
``p[i][j] = p[base + k][j]`` (row t of p is final in phase 3). INF is a key of its own
(``2^30 - 1``, or float infinity), never added to anything that could beat a real key. Packing needs
``(2 L + 1) T < 2^30`` where L bounds a simple path (:func:`gpusp.data.graph.path_bound`; every stored
finite value is at most L, so candidates are at most 2L); otherwise the solver uses the general
kernels. With ``paths`` off S = 0 and the predecessor matrix is neither read nor written.

Inner add-min (``arith``), phase 3, graphs with non-negative weights:

* ``dpx`` - ``min(int32(a + b), c)``: ptxas fuses it into one Hopper DPX ``VIADDMNMX`` (sm_90);
* ``int32`` - ``s = int32(a + b); if s < c: c = s`` (compare and select, written so as not to be the
  min-of-sum idiom; see benchmarks/apsp-fast-h200.md for what ptxas makes of it);
* ``float32`` - the matrix in float32 (INF = infinity): ``min(a + b, c)`` as FADD + FMNMX, exact while
  every key is below 2^24: ``(2 L + 1) T' < 2^24`` with T' = T with paths, 1 without; otherwise the
  solver falls back to the table's integer arith (counter ``arith``).

General kernels (negative weights, int64 matrices, paths too long to pack): guarded
``if a != INF and b != INF`` relaxations with the last improving pivot in a register and sums clamped
at -INF (as :mod:`gpusp.solvers.blockedfw`), several instructions per relaxation.

Zero-weight cycles and negative weights: the hop tie-break of :mod:`gpusp.solvers.blockedfw`
(w' = w (n + 1) + 1 when some weight is <= 0; its ``host_matrices`` is reused), so predecessor chains
cannot loop; a graph with zero weights but no negative ones then still runs the fast kernels (every
w' > 0). A negative cycle leaves a negative diagonal entry and raises NegativeCycleError (the
single-block check kernel of blockedfw). Float32 is used only without negative weights.

Launches (``launch``): ``host`` issues three kernels per round of pivots from the host (about 20-40 us of
Numba launch path each, hidden behind the kernels only when a round's phase 3 is long, i.e. large n);
``graph`` issues the same 3r launches (one when r = 1) once into a CUDA graph (cuda.core, captured on the
first run after the kernels have compiled) and replays it with one launch per run, so small n stop paying the
host path;
``persistent`` runs every round in one cooperative kernel with a grid-wide barrier after each phase (about
1.5 us instead of a launch), but it needs the registers of all three phases (about 200 per thread with
paths), so one block fits per SM and it lost to the host loop by 5-55 % (benchmarks/apsp-fast-h200.md).
``auto`` is ``graph``: it was as fast or faster at every n measured on the H200 (n = 1200 without paths 2.14 ->
1.08 ms, with paths 3.09 -> 2.96; n = 8192 without paths 69.0 -> 68.2 ms, 7.97e12 -> 8.06e12 relaxations/s;
benchmarks/apsp-fast-h200.md). The simulator has no graphs (``graph`` runs the host loop there) and runs the
persistent kernel with one block, the only grid that its grid barrier supports there.

Phase 2 (``phase2``): ``serial`` relaxes the pivot-row and pivot-column tiles pivot by pivot as above (T barriers
a round, the papers' phase 2); ``product`` (the default where the packed-key kernels run with host or graph launches)
uses that phase 1 leaves the pivot tile closed (its shortest paths inside tile t): a row tile becomes
min(D_tJ, D_tt x D_tJ) and a column tile min(D_It, D_It x D_tt) in the (min, +) semiring, computed by phase 3's kernel
(``k2``), no barrier per pivot. The last tile-t vertex on a path splits it into a part inside the tile and what follows,
so the distances are those of the serial phase. A row tile's predecessors come from its own rows of p, so they are all
gathered before any is written (``settle_paths``, one block barrier). n = 1200 with paths 1.59 -> 1.32 ms, n = 8192
without 68.6 -> 67.5 ms (8.15e12 relaxations/s; benchmarks/apsp-fast-h200.md, 2026-11-25).

Pivots (``pivots``): ``all`` runs r rounds; ``useful`` renumbers the graph (:meth:`~gpusp.data.graph.Graph.relabel`)
so that the vertices with an arc from and an arc to another vertex come first (:func:`useful_first`: no other vertex can
lie inside a shortest path or on a cycle, so as a pivot it improves nothing) and runs only the ceil(u / T) rounds whose
pivot tiles hold them, every tile still updated each round; the matrices are mapped back to the graph's ids on download
and a negative cycle's vertex is reported in them. ``auto`` prunes when it saves a round. p2p-Gnutella30 (26,960
vertices without out-arcs): 149 rounds instead of 574, 6.26 -> 1.65 s with paths.

Tile and register block: compile-time constants (kernels come from a cached factory per
``(T, R, kind, paths, p12, inner, unroll, stage)``); ``tile=0`` / ``regblock=0`` take them from :data:`TABLE`, chosen per n
and paths (measured on the H200 with benchmarks/h200/apsp_fast.py: T = 64, R = 4 won at n = 1200 ... 8192, except
T = 32, R = 2 at n = 1200 with paths; R = 8 spills with paths, T = 128 with R = 4 needs 1024 threads). Threads per
block (T/R)^2 <= 1024.

Complexity (every variant): Theta(n_pad^2 rounds T) relaxations (counter ``relaxations``; rounds = r = n_pad / T
unless pivots are pruned), T barriers per round in phase 1, T more in phase 2 when serial, and 2 (single) or 1 (double)
per chunk in phases 3 and product 2, Theta(n_pad^2) memory: distance and predecessor matrices plus pristine copies for the reset, 2 (w + 4) n_pad^2 bytes
(2 w n_pad^2 without paths). Global traffic per round: phase 3 reads and writes every cell and reads the
two pivot tiles per tile, about 16 n^2 bytes (int32), so 16 n^3 / T bytes in all, half of it the cells'
read-modify-write (8 n^3 / T).

Sources: blocked FW after Venkataraman et al. (2003) and Katz & Kider (2008); register blocking after
Volkov & Demmel's GEMM and the (min, +) kernels of Lund & Smith (2010) and Djidjev et al.; packed
(distance, argmin) keys as in paper 003's packed atomics.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ..device import capture_graph, mode
from ..errors import NegativeCycleError, SolverError
from ..data.graph import INF32, choose_dtype, inf_for, path_bound
from .base import Solver
from .common import apsp_tight_parents
from .blockedfw import _BlockedFW, negative_diagonal
from .floydwarshall import require_device_memory

ARITHS = ("dpx", "int32", "float32")
LAUNCHES = ("auto", "host", "graph", "persistent")
PHASE2S = ("auto", "serial", "product")  # phase 2: T barrier-separated pivot steps, or a min-plus product ('auto': product)
PIVOTS = ("auto", "all", "useful")  # every vertex a pivot, or only those that can lie inside a path ('auto': when fewer rounds)
NOKB = 255  # phases 1-2: no improving pivot yet (tiles are at most 128 wide, pivots 0 .. 127)
# paths -> ((n_max, tile, regblock), ...): the table behind tile=0 / regblock=0, measured on the H200 (2026-11-22
# sweep; with paths T 32, R 2 at n = 1200 in calls e9 and s5 of 2026-11-25: 1.41 / 1.19 ms against T 64's 1.50 /
# 1.32, slower from n = 2048 on)
TABLE = {True: ((1200, 32, 2), (1 << 62, 64, 4)), False: ((1 << 62, 64, 4),)}
AUTO_ARITH = "dpx"  # the fastest exact inner add-min measured (equal to int32's SASS; float32 slower)
# (tile, regblock) pairs the device sweep and the compile gate cover
SHIPPED = ((32, 2), (64, 4), (64, 8), (128, 4), (128, 8))
SMEM_BUDGET = 32768  # bytes of static shared memory for phase 3's staged operand chunks (all buffers)
SMEM_MAX = 49152  # static shared memory a block may declare
P12S = ("global", "shared")  # phases 1-2: operands read from global memory or from a shared-memory copy
INNERS = {"scalar": 1, "vec2": 2, "vec4": 4}  # phase-3 operand loads: values per shared-memory load
UNROLLS = (1, 2, 4, 8)  # k steps per phase-3 loop iteration (at least the vector width)
STAGES = ("single", "double")  # phase-3 chunks: one buffer, or two with the next chunk loaded during compute
DEFAULTS = dict(p12="global", inner="scalar", unroll=1, stage="single")  # the reference kernels
# paths -> the variant that p12 / inner / stage 'auto' and unroll 0 take for the packed-key kinds (dpx, int32,
# float32), the fastest measured on the H200 at T 64, R 4, dpx, n = 1200 ... 8192 and on Gnutella30
# (benchmarks/apsp-fast-h200.md, 2026-11-24); the general kernels (gen32 / gen64) and a variant that does not
# fit the tile keep DEFAULTS
AUTO_VARIANT = {True: dict(p12="shared", inner="scalar", unroll=8, stage="single"),
                False: dict(p12="shared", inner="vec4", unroll=8, stage="single")}
K3_REGS = 128  # registers per thread the tuned phase-3 kernel is held to (launch bounds: 2 blocks of 256 per SM)
FLOAT_EXACT = 1 << 24
INF_F32 = np.float32(np.inf)


def useful_first(graph) -> tuple[np.ndarray, int]:
    """(order, u): the vertices with an arc from another vertex and an arc to another vertex (the only ones that
    can lie inside a shortest path, or on a cycle) first, each part in id order, and u, how many they are."""
    n = graph.n
    src, dst, _ = graph.coo()
    other = src != dst
    has_out = np.bincount(src[other], minlength=n) > 0
    has_in = np.bincount(dst[other], minlength=n) > 0
    useful = has_out & has_in
    order = np.concatenate([np.flatnonzero(useful), np.flatnonzero(~useful)]).astype(np.int64)
    return order, int(useful.sum())


def pick(n: int, paths: bool = True) -> tuple[int, int]:
    """(tile, regblock) from :data:`TABLE` for an n-vertex graph, with or without paths."""
    table = TABLE[bool(paths)]
    for n_max, T, R in table:
        if n <= n_max:
            return T, R
    return table[-1][1:]


def chunk(T: int, itemsize: int, buffers: int = 1) -> int:
    """Pivots staged per phase-3 chunk: the operand chunks of every buffer take at most SMEM_BUDGET bytes;
    with two buffers at most T/2, so that there is always a next chunk to load during a chunk's compute."""
    return max(1, min(T // buffers, SMEM_BUDGET // (2 * buffers * T * itemsize)))


def check_variant(T: int, R: int, itemsize: int = 4, p12: str = "global", inner: str = "scalar", unroll: int = 1,
                  stage: str = "single") -> None:
    """Raise SolverError unless the kernel variant (see the module docstring) fits tile T and register block R."""
    if p12 not in P12S or inner not in INNERS or unroll not in UNROLLS or stage not in STAGES:
        raise SolverError(f"p12 {p12!r}, inner {inner!r}, unroll {unroll!r}, stage {stage!r}: expected p12 in "
                          f"{P12S}, inner in {tuple(INNERS)}, unroll in {UNROLLS}, stage in {STAGES}")
    check_shape(T, R, itemsize)
    V = INNERS[inner]
    if R % V:
        raise SolverError(f"inner {inner} loads {V} consecutive cells: regblock {R} must be a multiple of {V}")
    KC = chunk(T, itemsize, 2 if stage == "double" else 1)
    if KC % max(unroll, V) or (KC * T) % ((T // R) ** 2):
        raise SolverError(f"tile {T}, regblock {R}: a chunk of {KC} pivots does not split into {max(unroll, V)}-step "
                          f"groups or over {(T // R) ** 2} threads")
    if p12 == "shared" and 2 * T * (T + 1) * itemsize > SMEM_MAX:
        raise SolverError(f"p12=shared: tile {T} needs {2 * T * (T + 1) * itemsize} bytes of shared memory "
                          f"(at most {SMEM_MAX})")


def resolve_variant(T: int, R: int, kind: str, paths: bool, launch: str = "host", p12: str = "auto",
                    inner: str = "auto", unroll: int = 0, stage: str = "auto") -> dict:
    """The kernel variant with 'auto' / 0 fields filled: from AUTO_VARIANT for the packed-key kinds when it fits
    tile T and register block R (and the launch), else from DEFAULTS."""
    given = dict(p12=p12, inner=inner, unroll=int(unroll), stage=stage)
    auto = dict(AUTO_VARIANT[bool(paths)])
    if launch == "persistent":
        auto["p12"] = "global"  # the persistent kernel has no shared-memory phases 1-2
    chosen = {k: auto[k] if v in ("auto", 0) else v for k, v in given.items()}
    if kind not in ("gen32", "gen64"):
        try:
            check_variant(T, R, 4, **chosen)
            return chosen
        except SolverError:
            pass
    return {k: DEFAULTS[k] if v in ("auto", 0) else v for k, v in given.items()}


def check_shape(T: int, R: int, itemsize: int = 4) -> None:
    """Raise SolverError unless tile T and register block R make a valid CUDA block."""
    if T < 1 or T & (T - 1) or R < 1 or R & (R - 1) or R > T:
        raise SolverError(f"tile {T} and regblock {R} must be powers of two with regblock <= tile")
    TR = T // R
    if TR * TR > 1024:
        raise SolverError(f"tile {T} with regblock {R} needs {TR * TR} threads per block (at most 1024)")
    KC = chunk(T, itemsize)
    if (KC * T) % (TR * TR):
        raise SolverError(f"tile {T}, regblock {R}: {KC} x {T} staged cells do not split over {TR * TR} threads")


# --- kernels ---------------------------------------------------------------------------------------------
@functools.cache
def kernels(T: int, R: int, kind: str, paths: bool, p12: str = "global", inner: str = "scalar", unroll: int = 1,
            stage: str = "single") -> dict:
    """Kernels for tile T, register block R and ``kind``: 'dpx' / 'int32' / 'float32' (fast phase 3 on
    packed keys, non-negative weights, no INF guards) or 'gen32' / 'gen64' (guarded, any weights); ``p12``,
    ``inner``, ``unroll`` and ``stage`` pick the variant (module docstring), all compile-time constants."""
    gen = kind.startswith("gen")
    if kind == "float32":
        DT, NPDT = numba.float32, np.float32
        INF = INF_F32
        NEG = np.float32(-np.inf)
    else:
        wide = kind == "gen64"
        DT, NPDT = (numba.int64, np.int64) if wide else (numba.int32, np.int32)
        INF = NPDT(inf_for(NPDT))
        NEG = NPDT(-inf_for(NPDT))
    check_variant(T, R, np.dtype(NPDT).itemsize, p12, inner, unroll, stage)
    TR = T // R
    TP = T + 1  # row stride of the transposed operand: its staging writes hit 32 banks
    NT = TR * TR
    KC = chunk(T, np.dtype(NPDT).itemsize)
    STAGE = KC * T // NT  # staged cells per thread per operand and chunk
    S = (T.bit_length() - 1) if (paths and not gen) else 0
    LOW = (1 << S) - 1
    KEYED = 1 if S else 0  # the pivot index rides in the keys only with paths
    MUL = NPDT(1 << S)
    PATHS = bool(paths)
    GUARD = gen
    FLOAT = kind == "float32"
    DPX = kind == "dpx"
    SHARED12 = p12 == "shared"
    TUNED = (inner, unroll, stage) != ("scalar", 1, "single")  # phase 3 in the consecutive layout (phase3x)
    V = INNERS[inner]
    U = max(unroll, V)
    G = U // V  # groups of V pivots per k-loop iteration
    NBUF = 2 if stage == "double" else 1
    KCX = chunk(T, np.dtype(NPDT).itemsize, NBUF)
    NCH = T // KCX
    STAGEX = KCX * T // NT
    SA = KCX + 4  # row stride of phase3x's A chunk: rows R apart start in other banks, rows stay 16-byte aligned
    # vector loads come from LLVM's load-store vectorizer: it needs the shared arrays aligned to the vector
    # (the simulator takes no alignment) and unsigned indices (no negative-index wraparound)
    ALIGN = None if mode() == "sim" or V == 1 else 4 * V
    # the tuned k3 with R <= 4 asks ptxas for the blocks per SM that K3_REGS registers per thread allow (2 at 256
    # threads, as today's k3 gets with 96): left alone, ptxas gives it 150-190 and one block per SM. Not at
    # R = 8 (64 accumulators) or 1024 threads, where the bound would spill kilobytes.
    BOUNDED = TUNED and mode() != "sim" and R <= 4 and 2 * NT * K3_REGS <= 65536
    K3_BOUNDS = dict(launch_bounds=(NT, 65536 // (NT * K3_REGS))) if BOUNDED else {}
    u32 = numba.uint32

    @cuda.jit(device=True)
    def pack(x, low):
        """x as a phase-3 key: x * 2^S + low (INF stays INF)."""
        if x == INF:
            return INF
        return DT(x * MUL + low)

    @cuda.jit(device=True)
    def resolve_paths(p, kb, t, I, i0, j0):
        """After phase 1 or 2 of tile (I, J) at (i0, j0): p[i][j] = p[K][j] for every cell whose last improvement
        came through pivot K = t T + kb[i][j] (NOKB: none). (K, j) cannot improve after pivot k (else (i, j) would
        have improved again), so its p then is its p at the phase's end: off the pivot rows (I != t) the untouched
        p of the finished pivot tile; on them (I == t), (K, j) is a cell of this tile with a smaller last pivot, so
        follow those pivots to a cell the phase left alone and take its p from before the phase."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * T
        pv = cuda.local.array((R, R), np.int32)
        for a in range(R):
            for b in range(R):
                y = ty + a * TR
                x = tx + b * TR
                r = kb[y, x]
                if r != NOKB:
                    if I == t:
                        for _ in range(T):  # at most T steps (a negative cycle could loop; it is reported anyway)
                            if kb[r, x] == NOKB:
                                break
                            r = kb[r, x]
                    pv[a, b] = p[base + r, j0 + x]
        cuda.syncthreads()  # every pre-phase predecessor is read before any is overwritten
        for a in range(R):
            for b in range(R):
                if kb[ty + a * TR, tx + b * TR] != NOKB:
                    p[i0 + ty + a * TR, j0 + tx + b * TR] = pv[a, b]

    @cuda.jit(device=True)
    def phase12(d, p, t, I, J):
        """Tile (I, J) through the pivots of tile t, cells in registers, one barrier per pivot."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * T
        i0 = I * T + ty
        j0 = J * T + tx
        c = cuda.local.array((R, R), NPDT)
        lv = cuda.local.array(R, NPDT)
        rv = cuda.local.array(R, NPDT)
        kb = cuda.shared.array((T, T), numba.uint8)  # the last improving pivot of each cell, NOKB: none
        for a in range(R):
            for b in range(R):
                c[a, b] = d[i0 + a * TR, j0 + b * TR]
                kb[ty + a * TR, tx + b * TR] = NOKB
        for k in range(T):
            K = base + k
            for a in range(R):
                lv[a] = d[i0 + a * TR, K]
            for b in range(R):
                rv[b] = d[K, j0 + b * TR]
            for a in range(R):
                for b in range(R):
                    x = lv[a]
                    y = rv[b]
                    if not GUARD or (x != INF and y != INF):
                        s = DT(x + y)
                        if s < c[a, b]:
                            if GUARD and s < NEG:
                                s = NEG
                            c[a, b] = s
                            d[i0 + a * TR, j0 + b * TR] = s
                            if PATHS:
                                kb[ty + a * TR, tx + b * TR] = k
            cuda.syncthreads()  # pivot k's writes visible to the block before column/row k+1 is read
        if PATHS:
            resolve_paths(p, kb, t, I, I * T, J * T)

    @cuda.jit(device=True)
    def settle_paths(p, t, I, i0, j0, step, kb):
        """Write the predecessors a phase-3 style update gathered into kb (-1: cell not improved; cell (a, b) at row
        i0 + a step, column j0 + b step). A tile on pivot row t (phase 2 as a product) gathered them from its own
        rows, so every gather must precede every write: a block barrier (I is the same for the whole block)."""
        if gen or not PATHS:
            return
        if I == t:
            cuda.syncthreads()  # every old predecessor of the tile read before any is overwritten
        for a in range(R):
            for b in range(R):
                if kb[a, b] >= 0:
                    p[i0 + a * step, j0 + b * step] = kb[a, b]

    @cuda.jit(device=True)
    def phase3(d, p, t, I, J):
        """Tile (I, J) off the pivot cross: operands staged KC pivots at a time, an R x R register block."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        tid = ty * TR + tx
        base = t * T
        i0 = I * T + ty
        j0 = J * T + tx
        As = cuda.shared.array((KC, TP), NPDT)  # As[k][i] = key of d[I*T + i][base + k] (transposed)
        Bs = cuda.shared.array((KC, T), NPDT)  # Bs[k][j] = key of d[base + k][J*T + j]
        acc = cuda.local.array((R, R), NPDT)
        kb = cuda.local.array((R, R), np.int32)
        av = cuda.local.array(R, NPDT)
        bv = cuda.local.array(R, NPDT)
        for a in range(R):
            for b in range(R):
                acc[a, b] = pack(d[i0 + a * TR, j0 + b * TR], 0)
                kb[a, b] = -1
        for kc in range(0, T, KC):
            for s in range(STAGE):
                e = tid + s * NT
                kk = e % KC
                i = e // KC
                As[kk, i] = pack(d[I * T + i, base + kc + kk], (kc + kk) * KEYED)
                kk = e // T
                j = e % T
                Bs[kk, j] = pack(d[base + kc + kk, J * T + j], 0)
            cuda.syncthreads()  # chunk of both operand tiles staged
            for kk in range(KC):
                for a in range(R):
                    av[a] = As[kk, ty + a * TR]
                for b in range(R):
                    bv[b] = Bs[kk, tx + b * TR]
                for a in range(R):
                    for b in range(R):
                        if gen:
                            x = av[a]
                            y = bv[b]
                            if x != INF and y != INF:
                                s = DT(x + y)
                                if s < acc[a, b]:
                                    acc[a, b] = s
                                    kb[a, b] = kc + kk
                        elif DPX:
                            acc[a, b] = min(DT(av[a] + bv[b]), acc[a, b])
                        elif FLOAT:
                            acc[a, b] = min(DT(av[a] + bv[b]), acc[a, b])
                        else:
                            s = DT(av[a] + bv[b])
                            if s < acc[a, b]:
                                acc[a, b] = s
            cuda.syncthreads()  # chunk consumed before the next one overwrites it
        for a in range(R):
            for b in range(R):
                i = i0 + a * TR
                j = j0 + b * TR
                m = acc[a, b]
                if gen:
                    if kb[a, b] >= 0:
                        if m < NEG:
                            m = NEG
                        d[i, j] = m
                        if PATHS:
                            p[i, j] = p[base + kb[a, b], j]
                elif m < pack(d[i, j], 0):
                    if FLOAT:
                        q = numba.int32(m)
                        d[i, j] = DT(q >> S)
                        low = q & LOW
                    else:
                        d[i, j] = m >> S
                        low = m & LOW
                    if PATHS:
                        kb[a, b] = p[base + low, j]  # row t of p: final in phase 3, this tile's own in phase 2
        settle_paths(p, t, I, i0, j0, TR, kb)

    @cuda.jit(device=True)
    def phase12s(d, p, t, I, J):
        """phase12 on shared-memory copies of tile (I, J) and the pivot tile, one barrier per pivot."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * T
        i0 = I * T
        j0 = J * T
        S = cuda.shared.array((2, T, TP), NPDT)  # S[0]: tile (I, J); S[1]: pivot tile (t, t) unless I == J
        ca = 1 if I == t and J != t else 0  # column k of the round lies in the pivot tile (pivot-row tiles)
        rb = 1 if J == t and I != t else 0  # row k of the round lies in the pivot tile (pivot-column tiles)
        c = cuda.local.array((R, R), NPDT)
        lv = cuda.local.array(R, NPDT)
        rv = cuda.local.array(R, NPDT)
        kb = cuda.shared.array((T, T), numba.uint8)  # the last improving pivot of each cell, NOKB: none
        for a in range(R):
            for b in range(R):
                y = ty + a * TR
                x = tx + b * TR
                c[a, b] = d[i0 + y, j0 + x]
                S[0, y, x] = c[a, b]
                kb[y, x] = NOKB
                if I != J:
                    S[1, y, x] = d[base + y, base + x]
        cuda.syncthreads()  # both tiles staged
        for k in range(T):
            for a in range(R):
                lv[a] = S[ca, ty + a * TR, k]
            for b in range(R):
                rv[b] = S[rb, k, tx + b * TR]
            for a in range(R):
                for b in range(R):
                    x = lv[a]
                    y = rv[b]
                    if not GUARD or (x != INF and y != INF):
                        s = DT(x + y)
                        if s < c[a, b]:
                            if GUARD and s < NEG:
                                s = NEG
                            c[a, b] = s
                            S[0, ty + a * TR, tx + b * TR] = s
                            if PATHS:
                                kb[ty + a * TR, tx + b * TR] = k
            cuda.syncthreads()  # pivot k's writes visible before pivot k+1 is read
        for a in range(R):
            for b in range(R):
                d[i0 + ty + a * TR, j0 + tx + b * TR] = c[a, b]
        if PATHS:
            resolve_paths(p, kb, t, I, i0, j0)

    @cuda.jit(device=True)
    def relax_tile(d, p, t, I, J):
        """Phase 1 or 2 on tile (I, J): global or shared operands as ``p12`` says."""
        if SHARED12:
            phase12s(d, p, t, I, J)
        else:
            phase12(d, p, t, I, J)

    @cuda.jit(device=True)
    def load_chunk(d, t, I, J, kc, ra, rb):
        """Keys of pivots kc .. kc+KC-1 of the pivot-column tile (I, t) and pivot-row tile (t, J) into ra, rb."""
        tid = u32(cuda.threadIdx.y * TR + cuda.threadIdx.x)
        base = t * T
        for s in range(STAGEX):
            e = tid + u32(s * NT)  # unsigned: divisions by the power-of-two KC and T become shifts and masks
            kk = e % u32(KCX)
            ra[s] = pack(d[I * T + e // u32(KCX), base + kc + kk], (kc + kk) * KEYED)
            rb[s] = pack(d[base + kc + e // u32(T), J * T + e % u32(T)], 0)

    @cuda.jit(device=True)
    def store_chunk(As, Bs, buf, ra, rb):
        """ra, rb into buffer buf: As[buf][i][k] (rows of the pivot-column chunk), Bs[buf][k][j]."""
        tid = u32(cuda.threadIdx.y * TR + cuda.threadIdx.x)
        for s in range(STAGEX):
            e = tid + u32(s * NT)
            As[buf, e // u32(KCX), e % u32(KCX)] = ra[s]
            Bs[buf, e // u32(T), e % u32(T)] = rb[s]

    @cuda.jit(device=True)
    def group(As, Bs, buf, row, col, k, kc, acc, kb, av, bv):
        """Pivots k .. k+V-1 of the chunk in buffer buf: V-wide loads of A's R rows, then per pivot R B values."""
        for a in range(R):
            for v in range(V):
                av[a, v] = As[buf, row + u32(a), k + u32(v)]
        for v in range(V):
            for b in range(R):
                bv[b] = Bs[buf, k + u32(v), col + u32(b)]
            for a in range(R):
                for b in range(R):
                    if gen:
                        x = av[a, v]
                        y = bv[b]
                        if x != INF and y != INF:
                            s = DT(x + y)
                            if s < acc[a, b]:
                                acc[a, b] = s
                                kb[a, b] = kc + k + v
                    elif DPX or FLOAT:
                        acc[a, b] = min(DT(av[a, v] + bv[b]), acc[a, b])
                    else:
                        s = DT(av[a, v] + bv[b])
                        if s < acc[a, b]:
                            acc[a, b] = s

    @cuda.jit(device=True)
    def phase3x(d, p, t, I, J):
        """Phase 3 with R consecutive rows and columns per thread, V-wide loads, U k steps per iteration."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        base = t * T
        i0 = I * T + ty * R
        j0 = J * T + tx * R
        row = u32(ty * R)
        col = u32(tx * R)
        As = cuda.shared.array((NBUF, T, SA), NPDT, alignment=ALIGN)  # As[buf][i][k]: key of d[I*T+i][base+kc+k]
        Bs = cuda.shared.array((NBUF, KCX, T), NPDT, alignment=ALIGN)  # Bs[buf][k][j]: key of d[base+kc+k][J*T+j]
        ra = cuda.local.array(STAGEX, NPDT)
        rb = cuda.local.array(STAGEX, NPDT)
        acc = cuda.local.array((R, R), NPDT)
        kb = cuda.local.array((R, R), np.int32)
        av = cuda.local.array((R, V), NPDT)
        bv = cuda.local.array(R, NPDT)
        for a in range(R):
            for b in range(R):
                acc[a, b] = pack(d[i0 + a, j0 + b], 0)
                kb[a, b] = -1
        load_chunk(d, t, I, J, 0, ra, rb)
        store_chunk(As, Bs, 0, ra, rb)
        cuda.syncthreads()  # chunk 0 staged
        for c in range(NCH):
            buf = u32(c % NBUF)
            if NBUF == 2 and c + 1 < NCH:
                load_chunk(d, t, I, J, (c + 1) * KCX, ra, rb)  # in flight during this chunk's compute
            for q in range(KCX // U):
                k = u32(q * U)
                kc = c * KCX
                group(As, Bs, buf, row, col, k, kc, acc, kb, av, bv)  # U / V groups written out: LLVM
                if G >= 2:  # leaves a rolled loop over groups of 64+ instructions, so unroll by hand
                    group(As, Bs, buf, row, col, k + u32(V), kc, acc, kb, av, bv)
                if G >= 4:
                    group(As, Bs, buf, row, col, k + u32(2 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(3 * V), kc, acc, kb, av, bv)
                if G >= 8:
                    group(As, Bs, buf, row, col, k + u32(4 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(5 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(6 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(7 * V), kc, acc, kb, av, bv)
            if c + 1 < NCH:
                if NBUF == 1:
                    cuda.syncthreads()  # chunk consumed before the next one overwrites it
                    load_chunk(d, t, I, J, (c + 1) * KCX, ra, rb)
                store_chunk(As, Bs, (c + 1) % NBUF, ra, rb)
                cuda.syncthreads()  # chunk c+1 staged (double: and buffer c%2 free only after the next one)
        cuda.syncthreads()  # last chunk consumed before this block's next tile (stride loop) restages
        for a in range(R):
            for b in range(R):
                i = i0 + a
                j = j0 + b
                m = acc[a, b]
                if gen:
                    if kb[a, b] >= 0:
                        if m < NEG:
                            m = NEG
                        d[i, j] = m
                        if PATHS:
                            p[i, j] = p[base + kb[a, b], j]
                elif m < pack(d[i, j], 0):
                    if FLOAT:
                        w = numba.int32(m)
                        d[i, j] = DT(w >> S)
                        low = w & LOW
                    else:
                        d[i, j] = m >> S
                        low = m & LOW
                    if PATHS:
                        kb[a, b] = p[base + low, j]  # row t of p: final in phase 3, this tile's own in phase 2
        settle_paths(p, t, I, i0, j0, 1, kb)

    @cuda.jit(device=True)
    def update_tile(d, p, t, I, J):
        """Phase 3 on tile (I, J): today's kernel or the tuned one as inner / unroll / stage say."""
        if TUNED:
            phase3x(d, p, t, I, J)
        else:
            phase3(d, p, t, I, J)

    @cuda.jit(device=True)
    def cross_tile(t, r, q):
        """Tile q of round t's 2(r-1) pivot-row (q < r-1) and pivot-column tiles: its (I, J)."""
        if q < r - 1:
            return t, q + (q >= t)
        I = q - (r - 1)
        return I + (I >= t), t

    @cuda.jit(device=True)
    def round12(d, p, t, r, phase, q0, step):
        """Phase 1 of round t (the pivot tile, on block q0 == 0) or phase 2 (tiles q0, q0 + step, ... of the
        2(r-1) pivot-row and pivot-column tiles): one call site of relax_tile, so that a kernel links one copy
        of its shared array."""
        q = q0
        last = 1 if phase == 1 else 2 * (r - 1)
        while q < last:
            if phase == 1:
                I = t
                J = t
            else:
                I, J = cross_tile(t, r, q)
            relax_tile(d, p, t, I, J)
            q += step

    @cuda.jit(device=True)
    def round3(d, p, t, r, q0, step):
        """Phase 3 of round t: tiles q0, q0 + step, ... of the (r-1)^2 off the pivot cross, row-major."""
        q = q0
        while q < (r - 1) * (r - 1):
            I = q // (r - 1)
            J = q - I * (r - 1)
            update_tile(d, p, t, I + (I >= t), J + (J >= t))
            q += step

    @cuda.jit(cache=True)
    def k12(d, p, t, r, phase):
        """Host-driven phase 1 (block 0: the pivot) or phase 2 (one block per tile, stride loop)."""
        round12(d, p, t, r, phase, cuda.blockIdx.x, cuda.gridDim.x)

    @cuda.jit(cache=True, **K3_BOUNDS)
    def k2(d, p, t, r):
        """Phase 2 as min-plus products with the closed pivot tile: row tiles D_tJ = min(D_tJ, D_tt x D_tJ), column
        tiles D_It = min(D_It, D_It x D_tt), by phase 3's kernel (its operands staged before any cell is written)."""
        q = cuda.blockIdx.x
        while q < 2 * (r - 1):
            I, J = cross_tile(t, r, q)
            update_tile(d, p, t, I, J)
            q += cuda.gridDim.x

    @cuda.jit(cache=True, **K3_BOUNDS)
    def k3(d, p, t, r):
        """Host-driven phase 3 (stride loop over the off-cross tiles)."""
        round3(d, p, t, r, cuda.blockIdx.x, cuda.gridDim.x)

    @cuda.jit(cache=True)
    def persistent(d, p, r, rounds):
        """Rounds 0 .. rounds-1 of pivots in one cooperative launch, a grid-wide barrier after each phase."""
        g = cuda.cg.this_grid()
        b = cuda.blockIdx.x
        nb = cuda.gridDim.x
        for t in range(rounds):
            for phase in range(1, 3):  # one call site of round12 (its shared array is linked once)
                # phase 1 on the last block: 0, 1, ... get the first tiles of phases 2, 3
                round12(d, p, t, r, phase, nb - 1 - b if phase == 1 else b, nb)
                g.sync()  # phase 1: pivot tile final before phase 2 reads it; 2: pivot row and column before phase 3
            round3(d, p, t, r, b, nb)
            g.sync()  # round t complete before round t+1's pivot is read

    return dict(k12=k12, k2=k2, k3=k3, persistent=persistent, KC=KCX if TUNED else KC, S=S, U=U if TUNED else 1, V=V,
                k3_bounds=K3_BOUNDS.get("launch_bounds"))


def kernel_sigs(kind: str) -> dict:
    """Numba signatures of the three kernels for a kernel kind (matrix dtype)."""
    w = {"float32": "float32", "gen64": "int64"}.get(kind, "int32")
    mats = f"{w}[:, ::1], int32[:, ::1]"
    return {"k12": f"void({mats}, int64, int64, int64)", "k3": f"void({mats}, int64, int64)",
            "k2": f"void({mats}, int64, int64)",
            "persistent": f"void({mats}, int64, int64)"}


# --- solver ----------------------------------------------------------------------------------------------
class FastSolver(Solver):
    """blockedfw_fast: tile / regblock / arith / paths as in the registry (tile 0, regblock 0, arith
    'auto' from the table); ``launch`` 'auto' (= 'graph'), 'host', 'graph' or 'persistent'.
    Tiles below 16 are accepted here for the simulator tests (the registry offers 16 .. 128)."""

    device = "gpu"

    def __init__(self, graph, tile: int = 0, regblock: int = 0, arith: str = "auto", paths: bool = True,
                 launch: str = "auto", p12: str = "auto", inner: str = "auto", unroll: int = 0,
                 stage: str = "auto", pivots: str = "auto", phase2: str = "auto", **params):
        super().__init__(graph, tile=tile, regblock=regblock, arith=arith, paths=paths, launch=launch, p12=p12,
                         inner=inner, unroll=unroll, stage=stage, pivots=pivots, phase2=phase2, **params)
        n = graph.n
        T0, R0 = pick(n, paths)
        self.T = int(tile) or T0
        self.R = int(regblock) or (R0 if not tile else max(1, self.T // 16))
        if arith not in ("auto",) + ARITHS:
            raise SolverError(f"arith must be auto, int32, dpx or float32, not {arith!r}")
        if launch not in LAUNCHES:
            raise SolverError(f"launch must be one of {', '.join(LAUNCHES)}, not {launch!r}")
        self.paths = bool(paths)
        self.launch = "graph" if launch == "auto" else launch
        self.n = n
        self.B = self.T  # what _BlockedFW.host_matrices reads
        self.r = max(1, -(-n // self.T))
        self.n_pad = self.r * self.T
        if pivots not in PIVOTS:
            raise SolverError(f"pivots must be one of {', '.join(PIVOTS)}, not {pivots!r}")
        self.order, self.useful = useful_first(graph)
        self.rounds = -(-self.useful // self.T)  # rounds of pivots over the tiles holding every useful vertex
        if pivots == "all" or (pivots == "auto" and self.rounds == self.r):
            self.order, self.rounds = None, self.r  # every vertex a pivot, in the graph's own order
        self.rank = None if self.order is None else np.argsort(self.order)  # vertex v -> its renumbered id
        # hop tie-break as in blockedfw (zero-weight cycles); weights after it are w' = w (n+1) + 1
        self.scale = n + 1 if graph.m and int(graph.weights.min()) <= 0 else 0
        w = graph.weights.astype(np.int64)
        if self.scale:
            w = w * self.scale + 1
        self.negative = bool(w.size and int(w.min()) < 0)
        self.dtype = choose_dtype(n, w if w.size else np.zeros(0, np.int64), graph.indptr)
        self.inf = inf_for(self.dtype)
        L = path_bound(n, w, graph.indptr) if w.size else 0
        self.requested = AUTO_ARITH if arith == "auto" else arith
        keys = 1 << (self.T.bit_length() - 1) if self.paths else 1
        if self.negative or self.dtype != np.int32 or (2 * L + 1) * keys >= int(INF32):
            self.kind = "gen64" if self.dtype == np.int64 else "gen32"
        elif self.requested == "float32" and (2 * L + 1) * keys >= FLOAT_EXACT:
            self.kind = AUTO_ARITH if AUTO_ARITH != "float32" else "dpx"  # float32 would not be exact
        else:
            self.kind = self.requested
        self.variant = resolve_variant(self.T, self.R, self.kind, self.paths, launch, p12, inner, unroll, stage)
        check_variant(self.T, self.R, 8 if self.kind == "gen64" else 4, **self.variant)
        if phase2 not in PHASE2S:
            raise SolverError(f"phase2 must be one of {', '.join(PHASE2S)}, not {phase2!r}")
        product = not self.kind.startswith("gen") and launch != "persistent"
        if phase2 == "product" and not product:
            raise SolverError("phase2=product needs the packed-key kernels (no negative weights) and host or graph "
                              "launches")
        self.phase2 = "product" if product and phase2 != "serial" else "serial"
        if launch == "persistent" and self.variant["p12"] == "shared":
            raise SolverError("p12=shared runs with host launches only (the persistent kernel would hold both "
                              "phases' shared memory)")
        self.dtype_name = self.dtype.name
        self.d = self.p = self.d0 = self.p0 = self.flag = None
        self.launches = 0
        self.grid = 0
        self.graph_exec = self.core_stream = None

    def host_matrices(self):
        """blockedfw's padded initial matrices; with pruned pivots of the graph renumbered useful vertices first."""
        return _BlockedFW.host_matrices(self, None if self.order is None else self.graph.relabel(self.rank))

    def graph_ids(self, matrix, values: bool = False):
        """An n x n matrix in the graph's vertex ids (rows and columns; with ``values`` also its entries, vertex ids
        or -1) from the renumbered one the device holds when pivots are pruned."""
        if self.order is None:
            return matrix
        matrix = matrix[np.ix_(self.rank, self.rank)]
        if values:  # -1 indexes the appended -1
            matrix = np.append(self.order, -1).astype(np.int32)[matrix]
        return matrix

    def device_dtype(self):
        return np.float32 if self.kind == "float32" else self.dtype

    def upload(self):
        if self.n == 0:
            return
        w = np.dtype(self.device_dtype()).itemsize
        cells = self.n_pad ** 2
        require_device_memory("blockedfw_fast", self.n, 2 * cells * (w + 4 * self.paths),
                              "2 (w+4) n_pad^2 bytes")
        d0, p0 = self.host_matrices()
        if self.kind == "float32":
            d0 = np.where(d0 == self.inf, np.float32(np.inf), d0).astype(np.float32)
        if not self.paths:
            p0 = np.full((1, 1), -1, dtype=np.int32)
        self.d0 = cuda.to_device(d0)
        self.p0 = cuda.to_device(p0)
        self.d = cuda.device_array_like(d0)
        self.p = cuda.device_array_like(p0)
        self.flag = cuda.device_array(1, dtype=np.int32)
        ks = kernels(self.T, self.R, self.kind, self.paths, **self.variant)
        self.ks = ks
        TR = self.T // self.R
        self.block = (TR, TR)
        r = self.r
        gpu = mode() == "gpu"
        self.use_persistent = self.launch == "persistent"
        if self.use_persistent:
            if gpu:
                sig = kernel_sigs(self.kind)["persistent"]
                most = ks["persistent"].compile(sig).max_cooperative_grid_blocks(self.block)
                want = max(1, (r - 1) ** 2, 2 * (r - 1))
                self.grid = max(1, min(int(most), want))
                if most < 1:
                    raise SolverError(f"blockedfw_fast: tile {self.T}, regblock {self.R} fits no cooperative grid")
            else:
                self.grid = 1  # the simulator's grid barrier works for one block only
            self.k_persistent = ks["persistent"][self.grid, self.block]

    def reset(self):
        self.d.copy_to_device(self.d0)
        self.p.copy_to_device(self.p0)

    def run(self, source=None):
        counters = {"iterations": self.rounds, "relaxations": self.n_pad ** 2 * self.rounds * self.T,
                    "pivots": self.useful if self.order is not None else self.n, "hop_tiebreak": bool(self.scale),
                    "matrix_dtype": str(np.dtype(self.device_dtype())), "arith": self.kind, "tile": self.T,
                    "regblock": self.R, "paths": self.paths, "phase2": self.phase2, **self.variant}
        if self.n == 0:
            return dict(counters, launches=0)
        self.reset()
        d, p, r = self.d, self.p, self.r
        if self.rounds == 0:  # no vertex can be on a path's inside: the arcs are the answer
            launches = 0
        elif self.use_persistent:
            self.k_persistent(d, p, r, self.rounds)
            launches = 1
        elif self.graph_exec is not None:
            self.graph_exec.launch(self.core_stream)
            launches = 1
        else:
            self.issue_rounds()
            launches = 3 * self.rounds - 2 * (r == 1)
            if self.launch == "graph" and mode() == "gpu":  # kernels compiled by the run above
                self.graph_exec, self.core_stream = capture_graph(self.issue_rounds)
        if self.negative:
            negative_diagonal[1, 256 if mode() == "gpu" else 32](d, self.n, self.flag)
            launches += 1
            v = int(self.flag.copy_to_host()[0])
            if v < self.n:
                raise NegativeCycleError(vertex=v if self.order is None else int(self.order[v]))
        else:
            cuda.synchronize()
        counters.update(launches=launches, persistent=self.use_persistent, grid=self.grid,
                        graph=launches == 1 and not self.use_persistent)
        return counters

    def issue_rounds(self, stream=0):
        """Launch phases 1, 2 and 3 of every round of pivots on ``stream`` (the host loop, or the graph's body)."""
        d, p, r, ks, block = self.d, self.p, self.r, self.ks, self.block
        k1 = ks["k12"][1, block, stream]
        k2 = ks["k2" if self.phase2 == "product" else "k12"][max(1, 2 * (r - 1)), block, stream]
        k3 = ks["k3"][max(1, (r - 1) ** 2), block, stream]
        for t in range(self.rounds):
            k1(d, p, t, r, 1)
            if r > 1:
                if self.phase2 == "product":
                    k2(d, p, t, r)
                else:
                    k2(d, p, t, r, 2)
                k3(d, p, t, r)

    def download(self):
        if self.n == 0:
            return np.zeros((0, 0), dtype=self.graph.dtype), np.zeros((0, 0), dtype=np.int32)
        dist, undivided = self.download_distances(undivided_too=True)
        if self.paths:
            parent = np.ascontiguousarray(self.graph_ids(self.p.copy_to_host()[:self.n, :self.n], values=True))
        else:  # nothing recorded on the device: derive parents on the host (untimed) for validation
            parent = apsp_tight_parents(self.graph, undivided, self.inf, self.scale)
        return dist, parent

    def download_distances(self, undivided_too: bool = False):
        """The distance matrix alone (no O(n m) host-derived parents when paths are off); with ``undivided_too``
        also the device values before the hop tie-break is divided out."""
        n = self.n
        raw = self.graph_ids(self.d.copy_to_host()[:n, :n])
        if self.kind == "float32":  # exact integers below 2^24, infinity for unreachable
            dist = np.where(np.isinf(raw), self.inf, np.where(np.isinf(raw), 0, raw).astype(np.int64))
        else:
            dist = raw.astype(np.int64)
        undivided = dist
        if self.scale:  # d' = d (n + 1) + hops with 0 <= hops < n + 1
            dist = np.where(dist == self.inf, self.inf, dist // self.scale)
        dist = np.ascontiguousarray(np.where(dist == self.inf, self.graph.inf, dist).astype(self.graph.dtype))
        return (dist, undivided) if undivided_too else dist


# --- offline compile gate --------------------------------------------------------------------------------
GATED_VARIANTS = (dict(p12="shared", inner="vec4", unroll=8, stage="double"),  # every tuned piece at once
                  dict(p12="global", inner="vec4", unroll=8, stage="single"),
                  dict(p12="global", inner="vec2", unroll=4, stage="double"),
                  dict(p12="global", inner="scalar", unroll=4, stage="single"))


def compile_targets():
    """(label, kernel, signature): every shipped (tile, regblock) x arith x paths at the reference and the
    'auto' variant, the general kernels at the reference, plus a representative set of tuned variants at
    T=64, R=4 (dpx, paths on and off; gen32; the persistent kernel once)."""
    out = []
    for T, R in SHIPPED:
        for kind in ARITHS:
            for paths in (True, False):
                ks, sigs = kernels(T, R, kind, paths), kernel_sigs(kind)
                tag = f"T={T},R={R},{kind},paths={int(paths)}"
                out += [(f"persistent[{tag}]", ks["persistent"], sigs["persistent"]),
                        (f"k3[{tag}]", ks["k3"], sigs["k3"]), (f"k2[{tag}]", ks["k2"], sigs["k2"])]
                if kind != "int32":  # phases 1-2 do not depend on the dpx / int32 choice
                    out.append((f"k12[{tag}]", ks["k12"], sigs["k12"]))
                var = resolve_variant(T, R, kind, paths)
                if var != DEFAULTS:  # the default ('auto') variant
                    ks = kernels(T, R, kind, paths, **var)
                    vtag = ",".join(f"{k}={v}" for k, v in var.items())
                    out += [(f"{name}[{tag},{vtag}]", ks[name], sigs[name])
                            for name in (("k12", "k2", "k3") if var["p12"] == "shared" else ("k2", "k3"))]
        for kind in ("gen32", "gen64"):
            ks, sigs = kernels(T, R, kind, True), kernel_sigs(kind)
            tag = f"T={T},R={R},{kind}"
            out += [(f"{name}[{tag}]", ks[name], sigs[name]) for name in ("persistent", "k12", "k3")]
    for i, var in enumerate(GATED_VARIANTS):
        tag = ",".join(f"{k}={v}" for k, v in var.items())
        for kind, paths in (("dpx", True), ("dpx", False), ("gen32", True))[:3 if i == 0 else 2]:
            ks, sigs = kernels(64, 4, kind, paths, **var), kernel_sigs(kind)
            names = ("k12", "k3") if var["p12"] == "shared" else ("k3", "persistent") if i == 1 else ("k3",)
            out += [(f"{name}[T=64,R=4,{kind},paths={int(paths)},{tag}]", ks[name], sigs[name]) for name in names]
    return out
