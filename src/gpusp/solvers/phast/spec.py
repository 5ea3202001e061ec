"""The ``phast`` family's solver (PHAST: a contraction hierarchy built on the host, then downward sweeps on the GPU,
many sources at once) and the rules behind its automatic settings, without Numba (benchmarks/sssp-road-h200.md)."""

from __future__ import annotations

from ..common.spec import BLOCK, SWEEP_GPUS, JOHNSON, REWEIGHT, M, N, W, Param, SolverSpec, derived, note

# --- phast_gpu ------------------------------------------------------------------------------------------------------
PHAST_BLOCKS_PER_SM = 2  # grid 0: blocks per multiprocessor asked for (fewer when the largest level needs fewer)
PHAST_BATCH_MAX = 1024  # batch 0: the largest batch the rule takes
PHAST_BATCH_BYTES = 2**30  # batch 0: distances, parents and round marks of a batch stay under this
ROAD_MEAN_DEGREE, ROAD_MAX_DEGREE = 4, 16  # core_degree -1: graphs within both contract completely
CORE_DEGREE = 16  # core_degree -1 elsewhere


def phast_batch(k: int, n: int, itemsize: int, sweep: bool = False) -> int:
    """Sources per batch for K sources: the smallest power of two >= K, at most PHAST_BATCH_MAX, halved while the
    working arrays ((w + 8) n S bytes; a ``sweep`` of every tree keeps the distances alone, w n S) exceed
    PHAST_BATCH_BYTES."""
    per = itemsize if sweep else itemsize + 8
    s = 1
    while s < min(k, PHAST_BATCH_MAX):
        s *= 2
    while s > 1 and per * n * s > PHAST_BATCH_BYTES:
        s //= 2
    return s


def _batch(n, m, p, w):
    """S for the memory bound, before the job's K sources are known: batch, or the most the byte budget allows."""
    return p["batch"] or max(1, min(PHAST_BATCH_MAX, PHAST_BATCH_BYTES // max(1, (w + 8) * n)))


SPECS = (
    SolverSpec("phast_gpu", "sssp", "gpu", "-", "PHAST (Delling, Goldberg, Nowatzyk and Werneck, IPDPS'11): a "
               "contraction hierarchy built once on the host (its time and size reported apart), then per source an "
               "upward search and one downward sweep over the vertices level by level in a cooperative kernel, "
               "the sources of a job swept together (vertex-major distances, as GPHAST)",
               "gpusp.solvers.phast.solver:PhastSolver", batched=True, sweeps=True, negative_weights=JOHNSON,
               params=(Param("batch", 0, "sources per batch S, swept together (0: the smallest power of two >= the "
                             f"job's K sources, at most {PHAST_BATCH_MAX}, halved while (w+8) n S bytes exceed "
                             f"{PHAST_BATCH_BYTES / 2**30:g} GiB)",
                             choices=(0,) + tuple(2**i for i in range(13))),
                       BLOCK,
                       Param("grid", 0, f"blocks of the cooperative kernel (0: {PHAST_BLOCKS_PER_SM} per "
                             "multiprocessor, fewer when the largest level x S needs fewer threads; capped at the "
                             "co-resident maximum)", minimum=0),
                       Param("fuse", -1, "the first levels below the top with at most this many vertex x source "
                             "items each are swept by block 0 alone, separated by block barriers instead of grid "
                             "barriers (-1: the block size; 0: every level on the grid)", minimum=-1),
                       Param("parents", "auto", "how the trees are built after the sweep: tight (one pass, the "
                             "first tight in-arc, needs every w > 0), rounds (positive tight arcs first, then rounds "
                             "over zero-weight tight arcs from earlier rounds: safe with zero-weight cycles), auto "
                             "(tight when every w > 0)", choices=("auto", "tight", "rounds")),
                       Param("settle", 64, "witness searches of the contraction stop after this many settled "
                             "vertices (a missed witness adds a shortcut; distances stay exact)", minimum=1),
                       Param("hops", 8, "witness searches of the contraction follow at most this many arcs",
                             minimum=1),
                       Param("core_degree", -1, "contraction stops when the remaining graph has more than this "
                             "many arcs per remaining vertex; those vertices form a core that each upward search "
                             "crosses by Dijkstra on the host (0: contract every vertex; -1: 0 on road-like graphs, "
                             f"mean out-degree <= {ROAD_MEAN_DEGREE} and none over {ROAD_MAX_DEGREE}, else "
                             f"{CORE_DEGREE})", minimum=-1),
                       Param("threads", 0, "host threads of the upward searches, a chunk of the sources each (0: "
                             "every core)", minimum=0),
                       Param("upward", "auto", "an every-tree sweep's upward search spaces: 'search' (a Dijkstra "
                             "from each source with stall-on-demand, on the host threads), 'closures' (every vertex's "
                             "space composed once from its upward neighbours' in rank order, then gathered per "
                             "batch; needs no core), 'auto' (closures from n / 8 sources up where there is no core)",
                             choices=("auto", "search", "closures")),
                       Param("core_search", "host", "where a query crosses the core that core_degree leaves: 'host' "
                             "(its upward Dijkstra goes on through the core), 'device' (the upward search stops at "
                             "the core, deltastep_gpu searches the core from the vertices it reached, through a "
                             "virtual source whose arcs are rewritten each query; one source a launch, batch 1; not "
                             "for every-tree sweeps)", choices=("host", "device")),
                       REWEIGHT, SWEEP_GPUS),
               memory=note(note((4 + W) * 4 * M + 24 * N, "the hierarchy, about 3 m arcs up and down, and the "
                                "original in-arcs")
                           + note((W + 8) * N * derived("S", _batch, "sources per batch"),
                                  "distances, parents, round marks of a batch"),
                           "the (w + 4) n K result of K sources apart")),
)
