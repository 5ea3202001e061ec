"""blockedfw_fast's kernels: phase 1 / 2 pivot by pivot (``k12``), phase 2 as a min-plus product (``k2``), phase 3
(``k3``) and every round in one cooperative launch (``persistent``), assembled from the device functions of
:mod:`.phase12` and :mod:`.phase3` for one set of compile-time constants (:mod:`.consts`).
"""

from __future__ import annotations

import functools

from numba import cuda

from ...common.gate import kernel, recorded
from . import consts
from .phase12 import relax_tile_fn
from .phase3 import update_tile_fn
from .variants import ARITHS, DEFAULTS, SHIPPED, SMEM_MAX, persistent_shared, resolve_variant

# tuned variants the compile gate builds at T 64, R 4 beyond each shipped tile's reference and 'auto' variant:
# (variant, (kind, paths) pairs, kernels)
GATED_VARIANTS = (
    (dict(p12="shared", inner="vec4", unroll=8, stage="double"),  # every tuned piece at once
     (("dpx", True), ("dpx", False), ("gen32", True)), ("k12", "k3")),
    (dict(p12="global", inner="vec4", unroll=8, stage="single"), (("dpx", True), ("dpx", False)), ("k3", "persistent")),
    (dict(p12="global", inner="vec2", unroll=4, stage="double"), (("dpx", True), ("dpx", False)), ("k3",)),
    (dict(p12="global", inner="scalar", unroll=4, stage="single"), (("dpx", True), ("dpx", False)), ("k3",)),
)


def matrix_type(kind: str) -> str:
    """The matrix element of a kernel kind, as a Numba type name."""
    return {"float32": "float32", "gen64": "int64"}.get(kind, "int32")


def gate_cases() -> list[dict]:
    """The kernel sets the compile gate compiles, each with the kernels it compiles of them: every shipped (tile,
    regblock) x arith x paths at the reference and the 'auto' variant, the general kernels at the reference, and
    :data:`GATED_VARIANTS`; a set met twice is compiled once, with both kernel lists."""
    cases: dict[tuple, dict] = {}

    def add(names, T, R, kind, paths, variant):
        if persistent_shared(T, 8 if kind == "gen64" else 4, **variant) > SMEM_MAX:  # refused: it would not load
            names = tuple(n for n in names if n != "persistent")
        case = dict(T=T, R=R, kind=kind, paths=paths, **variant, w=matrix_type(kind))
        key = tuple(case.items())
        kernels = cases.setdefault(key, {**case, "kernels": ()})["kernels"]
        cases[key]["kernels"] = kernels + tuple(n for n in names if n not in kernels)

    for T, R in SHIPPED:
        for kind in ARITHS:
            for paths in (True, False):
                # phases 1-2 do not depend on the dpx / int32 choice
                add(("persistent", "k3", "k2") + (("k12",) if kind != "int32" else ()), T, R, kind, paths, DEFAULTS)
                auto = resolve_variant(T, R, kind, paths)
                if auto != DEFAULTS:
                    add(("k12", "k2", "k3") if auto["p12"] == "shared" else ("k2", "k3"), T, R, kind, paths, auto)
        for kind in ("gen32", "gen64"):
            add(("persistent", "k12", "k3"), T, R, kind, True, DEFAULTS)
    for variant, kinds, names in GATED_VARIANTS:
        for kind, paths in kinds:
            add(names, 64, 4, kind, paths, variant)
    return list(cases.values())


def rounds_fns(cs: consts.Consts):
    """Device functions ``cross_tile(t, r, q)``, ``round12(d, p, t, r, phase, q0, step)`` and
    ``round3(d, p, t, r, q0, step)``: the tiles of a round's phases, spread over a stride loop of blocks."""
    relax_tile = relax_tile_fn(cs)
    update_tile = update_tile_fn(cs)

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
            relax_tile(d, p, t, t, I, J)
            q += step

    @cuda.jit(device=True)
    def round3(d, p, t, r, q0, step):
        """Phase 3 of round t: tiles q0, q0 + step, ... of the (r-1)^2 off the pivot cross, row-major."""
        q = q0
        while q < (r - 1) * (r - 1):
            I = q // (r - 1)
            J = q - I * (r - 1)
            update_tile(d, p, t, t, I + (I >= t), J + (J >= t))
            q += step

    return cross_tile, round12, round3, update_tile


@kernel({"k12": "void({w}[:, ::1], int32[:, ::1], int64, int64, int64)",
         "k2": "void({w}[:, ::1], int32[:, ::1], int64, int64)",
         "k3": "void({w}[:, ::1], int32[:, ::1], int64, int64)",
         "persistent": "void({w}[:, ::1], int32[:, ::1], int64, int64)"}, cases=gate_cases)
@functools.cache
def kernels(T: int, R: int, kind: str, paths: bool, p12: str = "global", inner: str = "scalar", unroll: int = 1,
            stage: str = "single") -> dict:
    """Kernels for tile T, register block R and ``kind``: 'dpx' / 'int32' / 'float32' (fast phase 3 on
    packed keys, non-negative weights, no INF guards) or 'gen32' / 'gen64' (guarded, any weights); ``p12``,
    ``inner``, ``unroll`` and ``stage`` pick the variant (docs/solvers/blockedfw.md), all compile-time constants.
    Also KC (pivots per phase-3 chunk), S (key shift), U (pivots per k-loop iteration), V (load width) and
    k3_bounds (k2 / k3's launch bounds, or None)."""
    cs = consts.build(T, R, kind, paths, p12, inner, unroll, stage)
    cross_tile, round12, round3, update_tile = rounds_fns(cs)

    @cuda.jit(cache=True)
    def k12(d, p, t, r, phase):
        """Host-driven phase 1 (block 0: the pivot) or phase 2 (one block per tile, stride loop)."""
        round12(d, p, t, r, phase, cuda.blockIdx.x, cuda.gridDim.x)

    @cuda.jit(cache=True, **cs.k3_options)
    def k2(d, p, t, r):
        """Phase 2 as min-plus products with the closed pivot tile: row tiles D_tJ = min(D_tJ, D_tt x D_tJ), column
        tiles D_It = min(D_It, D_It x D_tt), by phase 3's kernel (its operands staged before any cell is written)."""
        q = cuda.blockIdx.x
        while q < 2 * (r - 1):
            I, J = cross_tile(t, r, q)
            update_tile(d, p, t, t, I, J)
            q += cuda.gridDim.x

    @cuda.jit(cache=True, **cs.k3_options)
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

    return dict(k12=k12, k2=k2, k3=k3, persistent=persistent, KC=cs.KCX if cs.TUNED else cs.KC, S=cs.S,
                U=cs.U if cs.TUNED else 1, V=cs.V, k3_bounds=cs.K3_BOUNDS)


def kernel_sigs(kind: str) -> dict:
    """Numba signatures of the kernels for a kernel kind, from their ``@kernel`` records (for benchmark scripts that
    compile one kernel by hand)."""
    return {part: template.format(w=matrix_type(kind)) for record in recorded(__name__)
            for part, template in record.signature.items()}
