"""The ``multisource`` family's solvers (batched multi-source shortest paths: many sources of one job, or every source
for APSP, in one cooperative kernel) and the rules behind their automatic settings, without Numba. The sweeps behind
the values: benchmarks/apsp-sparse-h200.md, benchmarks/sssp-road-h200.md.
"""

from __future__ import annotations

from ...data.graph import DAVIDSON_WIDTH
from ..common.spec import (BLOCK, CSR, SWEEP_GPUS, JOHNSON, REWEIGHT, WARP, M, N, W, Param, SolverSpec, choose, derived,
                           larger, named, note, par)

# --- multisource_fast -----------------------------------------------------------------------------------------------
AUTO_BATCH_MAX = 2048  # batch 0: the largest batch the rule takes (benchmarks/apsp-sparse-h200.md)
AUTO_BATCH_BYTES = 2**30  # batch 0: distances, stamps and parents of a batch stay under this
PAIRS_BATCH_MAX = 1024  # batch 0 with pair items: the largest batch the rule takes (benchmarks/sssp-road-h200.md)
PAIRS_BATCH_BYTES = 16 * 2**30  # batch 0 with pair items: the batch's arrays stay under this
MULTISOURCE_BLOCKS_PER_SM = 32  # grid 0: asked for, then capped at the co-resident maximum
MULTISOURCE_DEEP = 100  # delta -1: buckets where the hop depth from a landmark reaches this (road graphs, not SNAP)
MULTISOURCE_DELTA_WIDTH = 4 * DAVIDSON_WIDTH  # delta -1 on deep graphs: this many x mean arc weight / mean out-degree


def auto_batch(n: int, itemsize: int = 4, pairs: bool = False) -> int:
    """Sources per batch: the largest power of two S <= AUTO_BATCH_MAX (and not above n rounded up to a warp) with
    (w + 8) n S <= AUTO_BATCH_BYTES; with pair items (two lists, two far piles and a mark per (vertex, source) besides)
    (w + 28) n S <= PAIRS_BATCH_BYTES and S <= PAIRS_BATCH_MAX."""
    s = PAIRS_BATCH_MAX if pairs else AUTO_BATCH_MAX
    per, budget = (itemsize + 28, PAIRS_BATCH_BYTES) if pairs else (itemsize + 8, AUTO_BATCH_BYTES)
    while s > WARP and (s // 2 >= max(n, WARP) or per * n * s > budget):
        s //= 2
    return s


def multisource_delta(graph, delta: int) -> int:
    """multisource's bucket width: ``delta``, or for -1 MULTISOURCE_DELTA_WIDTH x mean weight / mean out-degree where
    the graph is deep (hop depth >= MULTISOURCE_DEEP: frontier Bellman-Ford re-expands each arc many times there),
    else 0 (none: shallow graphs converge in a few rounds anyway)."""
    if delta >= 0:
        return delta
    return graph.default_delta(MULTISOURCE_DELTA_WIDTH) if graph.hop_landmarks()[0] >= MULTISOURCE_DEEP else 0


MULTISOURCE_PARAMS = (Param("batch", 0, f"sources per batch S (0: the largest power of two <= {AUTO_BATCH_MAX} "
              f"whose working arrays take <= {AUTO_BATCH_BYTES / 2**30:g} GiB; with pair items <= "
              f"{PAIRS_BATCH_MAX} and <= {PAIRS_BATCH_BYTES / 2**30:g} GiB)",
              choices=(0, 32, 64, 128, 256, 512, 1024, 2048, 4096)),
        BLOCK,
        Param("grid", 0, f"blocks of the cooperative kernel (0: {MULTISOURCE_BLOCKS_PER_SM} per "
              "multiprocessor; capped at the co-resident maximum)", minimum=0),
        Param("split", 32, "arcs per list entry: a vertex of higher degree is expanded by several "
              "warps", choices=(2, 8, 32, 64, 128, 256, 1024)),
        Param("regs", 40, "registers per thread the kernel is capped at (0: the compiler's choice); a cap lets more "
              "blocks reside per multiprocessor, which hides the latency of the dependent loads at the price of "
              "spills (benchmarks/apsp-sparse-h200.md)",
              choices=(0, 32, 40, 48, 64, 80)),
        Param("unroll", 2, "arcs of a list entry whose heads' distances a thread loads together "
              "before it uses any (overlaps their latencies; a larger unroll takes more registers: "
              "benchmarks/apsp-sparse-h200.md)",
              choices=(1, 2, 4, 8)),
        Param("parents", "auto", "how the trees are built after the distances: levels (breadth-first "
              "over tight arcs, safe with zero weights), tight (one pass, any tight in-arc, needs "
              "every w > 0), auto (tight when every w > 0)", choices=("auto", "levels", "tight")),
        Param("delta", -1, "bucket width of the distance rounds: a source's lanes at or above the batch's threshold "
              "wait, and the threshold rises by delta after a round that expanded nothing below it (0: no buckets, a "
              f"frontier Bellman-Ford; -1: {MULTISOURCE_DELTA_WIDTH // DAVIDSON_WIDTH} x Davidson et al.'s "
              f"rule where the hop depth from a landmark is >= {MULTISOURCE_DEEP}, else 0)", minimum=-1),
        Param("items", "auto", "what a distance round lists: 'words' - (vertex, 32 sources) items, a warp each, so "
              "one arc read serves the 32 sources (the sources of a word share frontiers on shallow graphs); 'pairs' - "
              "(vertex, source) pairs, a thread each (far-apart sources on a deep graph rarely share a vertex in the "
              "same round, and a warp would carry one busy lane); 'auto': pairs where delta buckets are on",
              choices=("auto", "words", "pairs")))
MULTISOURCE_ORDER = Param("order", "auto", "which sources share a batch and a 32-source word: 'given' (the job's "
                          "order), 'landmarks' (sorted by the Z-order of their hop counts from two far-apart vertices, "
                          "so that close sources share frontier items), 'auto' (landmarks where delta buckets are on)",
                          choices=("auto", "given", "landmarks"))


def _batch(n, m, p, w):
    """S: the batch given, or the rule's (pair items counted where auto may choose them)."""
    return p["batch"] or auto_batch(n, w, p["items"] != "words")


S = derived("S", _batch, "sources per batch (batch, or the automatic rule's)")
WORDS = named("L", 8 * (N + M // par("split") + 1) * (S // WARP))  # two round lists of 32-source words
BATCH_STATE = CSR + note((W + 8) * N * S, "distances, stamps, parents")
BATCHED = choose("items = words", lambda p: p["items"] == "words",
                 BATCH_STATE + note(4 * N * (S // WARP), "item stamps") + note(WORDS, "two round lists"),
                 BATCH_STATE + note(larger(WORDS, 8 * N * S) + 12 * N * S, "pair lists, far piles and marks"))

SPECS = (
    SolverSpec("multisource_fast", "apsp", "gpu", "-", "batched multi-source APSP for sparse graphs: S sources "
               "per batch stored vertex-major so one arc read serves 32 sources, frontier lists of (vertex, "
               "32-source word) items, every round and every batch in one cooperative kernel, trees grown over "
               "tight arcs, rows written through shared-memory transposes",
               "gpusp.solvers.multisource.solver:MultiSourceSolver",
               params=MULTISOURCE_PARAMS + (REWEIGHT,), negative_weights=JOHNSON,
               memory=BATCHED + note((W + 4) * (N * N), "the result, on the device if it fits, else on the host")),
    SolverSpec("multisource_sssp", "sssp", "gpu", "-", "many-source SSSP: the sources of a job solved together "
               "by multisource_fast's kernel (S sources per batch stored vertex-major, one arc read serving 32 of "
               "them, every round of every batch in one cooperative kernel); per-source rows and the batch's time",
               "gpusp.solvers.multisource.solver:MultiSourceSssp",
               params=MULTISOURCE_PARAMS + (MULTISOURCE_ORDER, REWEIGHT, SWEEP_GPUS), batched=True, sweeps=True,
               negative_weights=JOHNSON, memory=note(BATCHED, "the (w + 4) n K result of K sources apart")),
)
