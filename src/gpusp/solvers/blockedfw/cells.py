"""Device functions for one cell of blocked Floyd-Warshall, shared by the global- and shared-memory kernels.

Distances are ``int32`` or ``int64`` (a compile-time constant). An INF operand is never added, and a sum below -INF
is clamped to -INF, so a negative cycle cannot wrap the integers around. Whether predecessors are recorded is a
compile-time constant too (``paths``): without them no kernel reads or writes ``p``, and the branches that would are
compiled out.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numba
import numpy as np
from numba import cuda

from ...data.graph import inf_for


@functools.cache
def cell_fns(dtype_name: str, paths: bool = True) -> SimpleNamespace:
    """``DT`` (Numba type), ``NPDT`` (NumPy scalar type), ``INF``, ``NEG`` (= -INF), ``PATHS`` and the device
    functions ``relax`` (an ordered step of phases 1 and 2) and ``settle`` (the write-back of phase 3) for distances
    of ``dtype_name``, recording predecessors when ``paths``.

    Phase 3's loop itself stays in each kernel: as a device function returning (dij, kb) it compiles to other
    code (NVVM unrolls it differently)."""
    DT = getattr(numba, dtype_name)
    NPDT = np.dtype(dtype_name).type
    INF = NPDT(inf_for(dtype_name))
    NEG = NPDT(-inf_for(dtype_name))
    PATHS = bool(paths)

    @cuda.jit(device=True)
    def relax(dik, dkj, dij):
        """An ordered step: (True, dik + dkj clamped at -INF) when neither operand is INF and the sum beats dij,
        else (False, dij)."""
        if dik != INF and dkj != INF:
            s = DT(dik + dkj)
            if s < dij:
                if s < NEG:
                    s = NEG
                return True, s
        return False, dij

    @cuda.jit(device=True)
    def settle(d, p, i, j, dij, kb, base):
        """End of phase 3 on cell (i, j): when step kb improved it, write the register clamped at -INF and (with
        paths) take the predecessor from row base + kb (block (t, J) of p is final in phase 3)."""
        if kb >= 0:
            if dij < NEG:
                dij = NEG
            d[i, j] = dij
            if PATHS:
                p[i, j] = p[base + kb, j]

    return SimpleNamespace(DT=DT, NPDT=NPDT, INF=INF, NEG=NEG, PATHS=PATHS, relax=relax, settle=settle)
