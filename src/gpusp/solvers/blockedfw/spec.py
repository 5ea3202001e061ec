"""The ``blockedfw`` family's solvers: paper 002's blocked Floyd-Warshall versions 1.0 to 4.1 and the register-blocked
``blockedfw_fast`` beside them. Their rules live without Numba in :mod:`.layout` (the bank-conflict rule, the v3.0 /
v4.x dependency DAGs) and :mod:`.fast.variants` (the measured tile table and kernel variants)."""

from __future__ import annotations

from ..common.spec import LAUNCHER, W, Param, SolverSpec, choose, derived
from . import layout
from .fast import variants as fast

BLOCKING = Param("block_size", 32, "blocking factor B (matrix block side = CUDA block side)", choices=layout.BLOCK_SIZES)
PATHS = Param("paths", True, "record the predecessor matrix (paper 002 computes costs only: false)",
              choices=(True, False))
CAPTURE = Param("capture", "once", "'once': the CUDA graph is built and instantiated in warm-up and replayed "
                "by every run; 'per-run': built and instantiated inside every timed run, as the thesis "
                "does", choices=("once", "per-run"))
GRAPH_LAUNCHER = Param("launcher", "native", "how the CUDA graph is built: 'native' node by node through the driver's "
                       "graph API (each kernel node from its launch's parameter block, as C builds it); 'numba' "
                       "recorded from Numba's launches into a cuda.core GraphBuilder (far more host time a node)",
                       choices=("native", "numba"))

# n_pad: n rounded up to the block (w = 8 where zero or negative weights force the hop tie-break's wider keys)
PADDED = derived("n_pad", lambda n, m, p, w: layout.padded(n, p["block_size"]), "n rounded up to B")
VERSION_MEMORY = choose("paths", lambda p: p["paths"], 2 * (W + 4) * (PADDED * PADDED), 2 * W * (PADDED * PADDED))
def _fast_table() -> str:
    """blockedfw_fast's table of (tile, regblock) per n, in words."""
    parts = []
    for paths, rows in fast.TABLE.items():
        steps = ", ".join(f"T {T} R {R}" + (f" to n = {n_max}" if n_max < 1 << 60 else "") for n_max, T, R in rows)
        parts.append(f"{'with' if paths else 'without'} paths {steps}")
    return "; ".join(parts)


def _fast_auto(field: str) -> str:
    """What an 'auto' kernel-variant field of blockedfw_fast takes, with and without paths."""
    values = {paths: fast.AUTO_VARIANT[paths][field] for paths in (True, False)}
    if values[True] == values[False]:
        return str(values[True])
    return f"{values[True]} with paths, {values[False]} without"


FAST_PARAMS = (Param("tile", 0, "tile side (0: from the measured table, " + _fast_table() + ")",
                     choices=(0, 16, 32, 64, 128)),
               Param("regblock", 0, "cells per thread along each side (0: from the table; with a tile given, "
                     f"tile / {fast.THREADS_SIDE})", choices=(0, 1, 2, 4, 8)),
               Param("arith", "auto", "inner add-min: 'int32' plain, 'dpx' fused __viaddmin_s32, 'float32' "
                     f"exact below 2^{fast.FLOAT_EXACT.bit_length() - 1} ('auto': {fast.AUTO_ARITH}, the "
                     "fastest exact one)", choices=("auto",) + fast.ARITHS),
               Param("paths", True, "record the predecessor matrix", choices=(True, False)),
               Param("p12", "auto", "phases 1-2: operands from global memory, or from shared-memory copies "
                     "of the tile and the pivot tile (tile <= 64); 'auto': "
                     + _fast_auto("p12") + " where it fits, global with launch=persistent",
                     choices=("auto",) + fast.P12S),
               Param("inner", "auto", "phase-3 operand loads from shared memory: 32-bit, or 64/128-bit vectors "
                     "(each thread then owns R consecutive rows and columns); 'auto': " + _fast_auto("inner"),
                     choices=("auto",) + tuple(fast.INNERS)),
               Param("unroll", 0, "phase-3 pivots per k-loop iteration, written out (>= the vector width); "
                     "0: " + _fast_auto("unroll") + " where the tile allows, else "
                     + str(fast.DEFAULTS["unroll"]), choices=(0,) + fast.UNROLLS),
               Param("stage", "auto", "phase-3 operand chunks: one shared buffer, or two with the next "
                     "chunk's global loads in flight during the current chunk's compute ('auto': "
                     + _fast_auto("stage") + ")", choices=("auto",) + fast.STAGES),
               Param("launch", "auto", "rounds launched from the host, replayed as one CUDA graph, or run "
                     f"in one cooperative kernel ('auto': {fast.AUTO_LAUNCH}, the fastest measured)",
                     choices=fast.LAUNCHES),
               Param("pivots", "auto", "'all': every vertex is a pivot, the paper's algorithm; 'useful': "
                     "only vertices with an arc from and an arc to another vertex (the only ones inside a "
                     "shortest path or on a cycle), renumbered first, so rounds of pivots stop after their "
                     "tiles; 'auto': useful when that saves a round", choices=fast.PIVOTS),
               Param("phase2", "auto", "'serial': the pivot row and column tiles relaxed pivot by pivot (a "
                     "barrier each, the papers' phase 2); 'product': as min-plus products with the closed pivot "
                     "tile by phase 3's kernel; 'auto': product where the packed-key kernels and host or graph "
                     "launches run", choices=fast.PHASE2S))
FAST = {p.name: p for p in FAST_PARAMS}
GPUS = Param("gpus", 1, "GPUs of this host the matrix's tile rows are spread over (1-D block-cyclic, one process a "
             "GPU, the pivot row broadcast over NCCL each round)", minimum=1, maximum=8)


def _dist_band(n, m, p, w) -> int:
    """Bytes of one rank's band: its tile rows and the broadcast slot (the largest share, rank 0's)."""
    T, _ = fast.tile_shape(n, False, p["tile"], p["regblock"])
    r = max(1, -(-n // T))
    return w * (-(-r // p["gpus"]) + 1) * T * r * T


DIST_MEMORY = derived("band", _dist_band, "w (ceil(r / gpus) + 1) T n_pad: a rank's tile rows and the slot of the "
                      "round's pivot row, per GPU")


VERSIONS = (
    ("v10", "V10Solver", (LAUNCHER,), "1.0: one launch per block of every phase (global memory)"),
    ("v11", "V11Solver", (LAUNCHER,), "1.1: one launch per phase over the full r x r grid of blocks"),
    ("v12", "V12Solver", (LAUNCHER,), "1.2: rationalised grids of 1, 2r-1 and (r-1)^2 blocks"),
    ("v20", "V20Solver", (LAUNCHER,), "2.0: 1.2 with blocks staged in shared memory"),
    ("v21", "V21Solver", (LAUNCHER,), "2.1: 2.0 with bank-conflict prevention (transposition and padding "
                                      "where the lcm rule predicts a conflict)"),
    ("v30", "V30Solver", (LAUNCHER,), "3.0: phases 2 and 3 split into pieces launched on several streams"),
    ("v40", "V40Solver", (CAPTURE, GRAPH_LAUNCHER), "4.0: the 3.0 launches as one CUDA graph, built and replayed"),
    ("v41", "V41Solver", (CAPTURE, GRAPH_LAUNCHER), "4.1: CUDA graph with the dependency structure between phase "
                                                    "pieces"),
)

SPECS = (
    *(SolverSpec(f"blockedfw_{v}", "apsp", "gpu", "002", summary, f"gpusp.solvers.blockedfw.versions:{cls}",
                 params=(BLOCKING, PATHS) + extra, negative_weights=True, memory=VERSION_MEMORY)
      for v, cls, extra, summary in VERSIONS),
    SolverSpec("blockedfw_fast", "apsp", "gpu", "-", "register-blocked Floyd-Warshall beside paper 002's "
               "versions: large tiles staged in shared memory, each thread an R x R register block of cells "
               "(R^2 add-mins per 2R shared loads); tile and register block from a table measured on the H200; "
               "kernel variants (p12, inner, unroll, stage: phases 1-2 in shared memory, vector loads, unrolled "
               "and double-buffered phase 3) as compile-time constants; 'auto' = the fastest measured "
               "(benchmarks/apsp-fast-h200.md)",
               "gpusp.solvers.blockedfw.fast.solver:FastSolver",
               params=FAST_PARAMS,
               negative_weights=True, memory=fast.MEMORY),
    SolverSpec("blockedfw_dist", "apsp", "gpu", "-", "blockedfw_fast's kernels over several GPUs of one host: the "
               "matrix's tile rows dealt round-robin to one process a GPU, each round's pivot row closed by its owner "
               "and broadcast over NCCL, every rank updating its own rows; distances only; gpus=1 is the same code "
               "with one rank", "gpusp.solvers.blockedfw.dist.solver:DistSolver",
               params=(GPUS,) + tuple(FAST[k] for k in ("tile", "regblock", "arith", "p12", "inner", "unroll", "stage",
                                                         "phase2")),
               negative_weights=True, memory=DIST_MEMORY),
)
