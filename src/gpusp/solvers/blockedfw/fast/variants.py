"""blockedfw_fast's choices, measured defaults and rules, without Numba (the registry imports this module).

The parameters' choices (:data:`ARITHS`, :data:`P12S`, :data:`INNERS`, :data:`UNROLLS`, :data:`STAGES`,
:data:`LAUNCHES`, :data:`PIVOTS`, :data:`PHASE2S`), what their 'auto' / 0 take (:data:`TABLE` through :func:`pick`,
:data:`AUTO_ARITH`, :data:`AUTO_VARIANT`, :data:`AUTO_LAUNCH`, :func:`kernel_kind`, :func:`phase2_mode`), the shared-
memory budget that sizes phase 3's operand chunks (:func:`chunk`) and the checks of a tile, register block and kernel
variant. Every default is the fastest measured (benchmarks/apsp-fast-h200.md).
"""

from __future__ import annotations

import numpy as np

from ....data.graph import INF32
from ....errors import SolverError
from ...common.spec import W, choose, derived

ARITHS = ("dpx", "int32", "float32")  # phase 3's inner add-min on packed keys (the general kernels: gen32 / gen64)
LAUNCHES = ("auto", "host", "graph", "persistent")
PHASE2S = ("auto", "serial", "product")  # phase 2: T barrier-separated pivot steps, or a min-plus product
PIVOTS = ("auto", "all", "useful")  # every vertex a pivot, or only those that can lie inside a path
P12S = ("global", "shared")  # phases 1-2: operands read from global memory or from a shared-memory copy
INNERS = {"scalar": 1, "vec2": 2, "vec4": 4}  # phase-3 operand loads: values per shared-memory load
UNROLLS = (1, 2, 4, 8)  # k steps per phase-3 loop iteration (at least the vector width)
STAGES = ("single", "double")  # phase-3 chunks: one buffer, or two with the next chunk loaded during compute

# paths -> ((n_max, tile, regblock), ...): the table behind tile=0 / regblock=0, the fastest measured
# (benchmarks/apsp-fast-h200.md)
TABLE = {True: ((1200, 32, 2), (1 << 62, 64, 4)), False: ((1 << 62, 64, 4),)}
AUTO_ARITH = "dpx"  # the fastest exact inner add-min measured (int32 compiles to the same SASS)
AUTO_LAUNCH = "graph"  # never slower than the host loop where measured
# (tile, regblock) pairs the device sweep and the compile gate cover
SHIPPED = ((32, 2), (64, 4), (64, 8), (128, 4), (128, 8))
DEFAULTS = dict(p12="global", inner="scalar", unroll=1, stage="single")  # the reference kernels
# paths -> the variant that p12 / inner / stage 'auto' and unroll 0 take for the packed-key kinds (dpx, int32,
# float32), the fastest measured (benchmarks/apsp-fast-h200.md); the general kernels (gen32 / gen64) and a variant
# that does not fit the tile keep DEFAULTS
AUTO_VARIANT = {True: dict(p12="shared", inner="scalar", unroll=8, stage="single"),
                False: dict(p12="shared", inner="vec4", unroll=8, stage="single")}
SMEM_BUDGET = 32768  # bytes of static shared memory for phase 3's staged operand chunks (all buffers)
SMEM_MAX = 49152  # static shared memory a block may declare
K3_REGS = 128  # registers per thread the tuned phase-3 kernel is held to (launch bounds: 2 blocks of 256 per SM)
FLOAT_EXACT = 1 << 24  # float32 keys are exact below this
THREADS_SIDE = 16  # tile given, regblock 0: 16 x 16 threads, R = T / 16 cells per thread along each side


def pick(n: int, paths: bool = True) -> tuple[int, int]:
    """(tile, regblock) from :data:`TABLE` for an n-vertex graph, with or without paths."""
    table = TABLE[bool(paths)]
    for n_max, T, R in table:
        if n <= n_max:
            return T, R
    return table[-1][1:]


def tile_shape(n: int, paths: bool, tile: int, regblock: int) -> tuple[int, int]:
    """(T, R): ``tile`` / ``regblock``, 0 from :func:`pick`; a tile given with regblock 0 takes R = T / 16."""
    T0, R0 = pick(n, paths)
    T = int(tile) or T0
    return T, int(regblock) or (R0 if not tile else max(1, T // THREADS_SIDE))


def kernel_kind(requested: str, negative: bool, int32: bool, bound: int, T: int, paths: bool) -> str:
    """The kernels that run: the ``requested`` arith ('auto': :data:`AUTO_ARITH`) on packed keys, or the general
    kernels (gen32 / gen64) with negative weights, an int64 matrix or keys that would not fit int32 (``bound``
    bounds a simple path); float32 falls back to AUTO_ARITH where its keys would pass 2^24."""
    requested = AUTO_ARITH if requested == "auto" else requested
    keys = 1 << (T.bit_length() - 1) if paths else 1
    if negative or not int32 or (2 * bound + 1) * keys >= int(INF32):
        return "gen32" if int32 else "gen64"
    if requested == "float32" and (2 * bound + 1) * keys >= FLOAT_EXACT:
        return AUTO_ARITH if AUTO_ARITH != "float32" else "dpx"  # float32 would not be exact
    return requested


def phase2_mode(kind: str, launch: str, phase2: str) -> str:
    """'product' or 'serial': the product needs the packed-key kernels and host or graph launches ('auto': product
    where it runs)."""
    product = not kind.startswith("gen") and launch != "persistent"
    if phase2 == "product" and not product:
        raise SolverError("phase2=product needs the packed-key kernels (no negative weights) and host or graph "
                          "launches")
    return "product" if product and phase2 != "serial" else "serial"


def chunk(T: int, itemsize: int, buffers: int = 1) -> int:
    """Pivots staged per phase-3 chunk: the operand chunks of every buffer take at most SMEM_BUDGET bytes;
    with two buffers at most T/2, so that there is always a next chunk to load during a chunk's compute."""
    return max(1, min(T // buffers, SMEM_BUDGET // (2 * buffers * T * itemsize)))


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


def check_variant(T: int, R: int, itemsize: int = 4, p12: str = "global", inner: str = "scalar", unroll: int = 1,
                  stage: str = "single") -> None:
    """Raise SolverError unless the kernel variant (docs/solvers/blockedfw.md) fits tile T and register block R; the
    kernel factory's guard too, so values from outside the registry are checked here."""
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


def persistent_shared(T: int, itemsize: int, inner: str = "scalar", unroll: int = 1, stage: str = "single",
                      **_) -> int:
    """Static shared memory (bytes) of the persistent kernel, which holds phases 1-2's pivot marks (a byte a cell of
    the tile) beside phase 3's staged operand chunks: the reference layout's transposed A chunk padded by a cell a
    row, the tuned layout's A chunk by four (phase3.py)."""
    if (inner, unroll, stage) == ("scalar", 1, "single"):
        KC = chunk(T, itemsize)
        chunks = KC * (T + 1) + KC * T
    else:
        buffers = 2 if stage == "double" else 1
        KC = chunk(T, itemsize, buffers)
        chunks = buffers * (T * (KC + 4) + KC * T)
    return T * T + chunks * itemsize


def check_persistent(T: int, itemsize: int, variant: dict) -> None:
    """Raise SolverError where the persistent kernel's static shared memory passes SMEM_MAX (the module would not
    load on the GPU)."""
    need = persistent_shared(T, itemsize, **variant)
    if need > SMEM_MAX:
        raise SolverError(f"launch=persistent: tile {T} needs {need} bytes of static shared memory in one kernel "
                          f"(phases 1-2's pivot marks beside phase 3's operand chunks; at most {SMEM_MAX}): a "
                          "smaller tile, or launch=host / graph")


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


def _tile(n: int, params: dict) -> int:
    return tile_shape(n, params["paths"], params["tile"], params["regblock"])[0]


# the padded matrices and their pristine copies at the tile blockedfw_fast runs with
PADDED = derived("n_pad", lambda n, m, p, w: -(-n // _tile(n, p)) * _tile(n, p), "n rounded up to the tile it runs with")
MEMORY = choose("paths", lambda p: p["paths"], 2 * (W + 4) * (PADDED * PADDED), 2 * W * (PADDED * PADDED))
