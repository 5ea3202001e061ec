"""The compile-time constants of one blockedfw_fast kernel set, built once per (T, R, kind, paths, p12, inner,
unroll, stage) and handed to every kernel factory (:mod:`.phase12`, :mod:`.phase3`, :mod:`.kernels`).

The factories copy the fields they use into local names before defining their device functions, so the kernels
close over plain Python and NumPy constants (Numba folds them into the code) and never see this object.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ....data.graph import inf_for
from ...common.launch import TARGET
from .variants import INNERS, K3_REGS, check_variant, chunk

INF_F32 = np.float32(np.inf)


@dataclass(frozen=True)
class Consts:
    """Compile-time constants (the variants: docs/solvers/blockedfw.md)."""

    T: int  # tile side
    R: int  # register block side: cells per thread along each side
    DT: object  # the matrix element as a Numba type (casts in the kernels)
    NPDT: type  # the matrix element as a NumPy scalar type (local and shared arrays)
    INF: object  # unreachable: the dtype's INF, or float infinity
    NEG: object  # -INF: the general kernels clamp sums there (a negative cycle cannot wrap)
    GEN: bool  # the general kernels (gen32 / gen64): guarded relaxations, any weights
    FLOAT: bool  # float32 keys
    DPX: bool  # min(a + b, c), fused into one VIADDMNMX
    PATHS: bool  # predecessors recorded
    SHARED12: bool  # phases 1-2 on shared-memory copies (p12=shared)
    TUNED: bool  # phase 3 in the consecutive layout (phase3x)
    S: int  # key shift: log2 T with packed paths, else 0
    KC: int  # phase3: pivots per staged chunk
    V: int  # phase3x: values per shared-memory load
    U: int  # phase3x: pivots per k-loop iteration
    NBUF: int  # phase3x: chunk buffers (1 single, 2 double)
    KCX: int  # phase3x: pivots per staged chunk and buffer
    ALIGN: int | None  # phase3x: alignment of its shared arrays (vector loads)
    K3_BOUNDS: tuple | None  # launch bounds of k2 / k3, or None

    @property
    def TR(self) -> int:
        """Threads per block side."""
        return self.T // self.R

    @property
    def NT(self) -> int:
        """Threads per block."""
        return self.TR * self.TR

    @property
    def MUL(self):
        """2^S in the matrix dtype: a distance's key is x * MUL + low."""
        return self.NPDT(1 << self.S)

    @property
    def k3_options(self) -> dict:
        """``cuda.jit`` options of k2 and k3 (launch bounds, or none)."""
        return {} if self.K3_BOUNDS is None else {"launch_bounds": self.K3_BOUNDS}


def build(T: int, R: int, kind: str, paths: bool, p12: str, inner: str, unroll: int, stage: str) -> Consts:
    """The constants of kernel set (T, R, kind, paths, variant); raises SolverError for a variant that does not fit."""
    gen = kind.startswith("gen")
    if kind == "float32":
        NPDT, INF, NEG = np.float32, INF_F32, np.float32(-np.inf)
    else:
        NPDT = np.int64 if kind == "gen64" else np.int32
        INF, NEG = NPDT(inf_for(NPDT)), NPDT(-inf_for(NPDT))
    itemsize = np.dtype(NPDT).itemsize
    check_variant(T, R, itemsize, p12, inner, unroll, stage)
    NT = (T // R) ** 2
    V = INNERS[inner]
    NBUF = 2 if stage == "double" else 1
    TUNED = (inner, unroll, stage) != ("scalar", 1, "single")
    # the tuned k3 with R <= 4 asks ptxas for the blocks per SM that K3_REGS registers per thread allow (2 at 256
    # threads, as the reference k3 gets): left alone, ptxas gives it more registers and one block per SM. Not at
    # R = 8 (64 accumulators) or 1024 threads, where the bound would spill (docs/solvers/blockedfw.md).
    bounded = TUNED and R <= 4 and 2 * NT * K3_REGS <= 65536
    bounds = TARGET.launch_bounds(NT, 65536 // (NT * K3_REGS)) if bounded else {}
    return Consts(T=T, R=R, DT=numba.from_dtype(NPDT), NPDT=NPDT, INF=INF, NEG=NEG, GEN=gen, FLOAT=kind == "float32",
                  DPX=kind == "dpx", PATHS=bool(paths), SHARED12=p12 == "shared", TUNED=TUNED,
                  S=(T.bit_length() - 1) if (paths and not gen) else 0, KC=chunk(T, itemsize), V=V,
                  U=max(unroll, V), NBUF=NBUF, KCX=chunk(T, itemsize, NBUF),
                  # vector loads come from LLVM's load-store vectorizer: it needs the shared arrays aligned to the
                  # vector and unsigned indices (no negative-index wraparound)
                  ALIGN=TARGET.alignment(4 * V), K3_BOUNDS=bounds.get("launch_bounds"))
