"""The rules behind the solvers' automatic settings (a parameter left at 0 or -1), without Numba.

The registry builds its help strings and memory bounds from these constants and functions, and the solvers apply
the same ones, so a rule is written once. The values were chosen by sweeps on the H200; the measurements behind them
are in ``benchmarks/sssp-fast-h200.md`` (deltastep) and ``benchmarks/apsp-sparse-h200.md`` (multisource).
"""

from __future__ import annotations

from ..data.graph import DAVIDSON_WIDTH

WARP = 32

# --- deltastep_gpu --------------------------------------------------------------------------------------------------
# Rounds, not arcs, bound the road and social graphs: a whole warp per queued vertex and wide buckets shorten each
# round's dependent chain.
NEARFAR_DELTA_WIDTH = 4 * DAVIDSON_WIDTH  # delta 0: this many x mean arc weight / mean out-degree
NEARFAR_LANES = WARP  # lanes 0: threads sharing one queued vertex's arcs
NEARFAR_WIDE_LANES = 4  # lanes 0 on deep and wide graphs (nearfar_lanes)
WIDE_DEPTH, WIDE_FRONTIER = 1024, 1024  # hop depth and vertices per level from which a graph counts as both
NEARFAR_BLOCKS_PER_SM = 2  # grid 0: all the 256-thread blocks that fit a multiprocessor at the kernel's registers
HUB_WALK = 8  # split -1 cuts hubs into chunks when the largest out-degree exceeds this many x lanes
MAX_CHUNKS = 63  # near-queue entries per vertex with split (6 bits above a 25-bit vertex id)
SPLIT_SHIFT = 25  # split > 0 packs the chunk index above the vertex id: n < 2^25


def nearfar_lanes(lanes: int, block: int, n: int = 0, depth: int = 0) -> int:
    """Threads per queued vertex: ``lanes``, at most the block. 0: a warp, except on a graph both deep and wide (hop
    depth >= WIDE_DEPTH and n / depth >= WIDE_FRONTIER vertices per level, the grid stand-in): its rounds are long
    enough to fill the GPU, work rather than a round's latency decides, and NEARFAR_WIDE_LANES threads per vertex
    waste fewer lanes on a degree of four."""
    if not lanes:
        lanes = NEARFAR_WIDE_LANES if depth >= WIDE_DEPTH and n >= WIDE_FRONTIER * depth else NEARFAR_LANES
    return min(int(lanes), int(block))


def nearfar_split(split: int, lanes: int, max_degree: int, n: int, fused: bool) -> int:
    """Arcs per near-queue entry. -1: 2 x lanes where the largest out-degree is over HUB_WALK x lanes (a hub's
    serial arc walk would hold up every round it is in), else 0 (whole vertices); a split that would give a vertex
    more than MAX_CHUNKS entries is raised. Split needs n < 2^SPLIT_SHIFT and excludes the block-local queue of
    fusion (it holds whole vertices): auto then gives 0."""
    if split < 0:
        hub = max_degree > HUB_WALK * lanes and not fused and n < 1 << SPLIT_SHIFT
        split = 2 * lanes if hub else 0
    return max(split, -(-max_degree // MAX_CHUNKS)) if split else 0


def nearfar_split_bound(split: int, lanes: int) -> int:
    """The smallest arcs per entry ``split`` may come to, for the memory bound before the graph is known."""
    return split if split > 0 else 2 * (lanes or NEARFAR_LANES)


def block_fuse_limit(limit: int, block: int, lanes: int) -> int:
    """fuse=block: the largest near queue one block settles alone (0: two passes of the block's vertex groups)."""
    return int(limit) or 2 * (int(block) // int(lanes))



# --- deltastep_async ------------------------------------------------------------------------------------------------
ASYNC_DELTA_WIDTH = DAVIDSON_WIDTH  # delta 0: no barrier per bucket here, so narrow buckets cost little
ASYNC_BLOCKS_PER_SM = 2  # grid 0
MAX_BATCH = 256  # entries a block claims at most (its shared-memory batch)
MAX_BUCKETS = 256


def ring_capacity(n: int) -> int:
    """Entries per ring slot when capacity is 0: a quarter of n as a power of two, at least 1024."""
    return 1 << max(10, (max(1, n // 4) - 1).bit_length())


def ring_delta(delta: int, max_weight: int, buckets: int, window: int) -> int:
    """The bucket width used: ``delta``, raised so that a push lands within the ring (fewer than ``buckets`` past the
    lowest live bucket)."""
    return max(int(delta), -(-int(max_weight) // max(1, buckets - window)), 1)


# --- deltastep_cluster ---------------------------------------------------------------------------------------------
# The whole search in one thread-block cluster: distances and marks in the blocks' shared memory (2 words a vertex),
# so a round's updates are multiprocessor-to-multiprocessor hops and its barrier the cluster's hardware barrier.
CLUSTER_BLOCKS = 16  # cluster 0: the largest cluster sm_90 allows (a non-portable size over 8)
CLUSTER_SHARED_BYTES = 227 * 1024 - 256  # dynamic shared memory per block: sm_90's opt-in limit less static slots
CLUSTER_HEAD_WORDS = 10  # per-block control words ahead of the distances (counters, minima, round totals)
CLUSTER_DELTA_WIDTH = 4 * DAVIDSON_WIDTH  # delta 0: this many x mean arc weight / mean out-degree
CLUSTER_QUEUE = 1024  # near-queue entries per block and round parity kept in shared memory (NY's rounds: ~50)


def cluster_words(n: int, ranks: int, queue: int) -> tuple[int, int, int]:
    """(vertices per block, queue entries (at most the vertices per block), 32-bit shared words per block) for ``n`` vertices over ``ranks`` blocks: a distance and a
    mark per vertex, and two queues (round parities) of ``queue`` entries of 3 words (what does not fit goes to global
    memory)."""
    chunk = max(1, -(-int(n) // int(ranks)))
    queue = min(int(queue), chunk)
    return chunk, queue, CLUSTER_HEAD_WORDS + 2 * chunk + 6 * queue


def cluster_max_n(ranks: int = CLUSTER_BLOCKS, queue: int = 0) -> int:
    """The most vertices a cluster of ``ranks`` blocks holds with a queue of ``queue`` entries."""
    words = CLUSTER_SHARED_BYTES // 4 - CLUSTER_HEAD_WORDS - 6 * int(queue)
    return int(ranks) * (words // 2)


# --- deltastep_clusterasync ----------------------------------------------------------------------------------------
# The same cluster without rounds: a distance and a packed arc range a vertex, and a bitmap of marked vertices.
CLUSTERASYNC_HEAD_WORDS = 8  # per-block control words ahead of the distances (counts, phase flag, minima)
CLUSTERASYNC_STRIPE = 256  # consecutive ids a block keeps together: 83 % of USA-road-d.NY's arcs stay in their block
CLUSTERASYNC_DELTA_WIDTH = 8 * DAVIDSON_WIDTH  # delta 0: wider buckets, fewer phases (each ends at two barriers)


def clusterasync_words(n: int, ranks: int, stripe: int = 1) -> tuple[int, int, int]:
    """(vertices per block, log2 of the bitmap's words, 32-bit shared words per block) for ``n`` vertices dealt out
    to ``ranks`` blocks in stripes of ``stripe`` consecutive ids: a distance and an arc range per vertex, and a bitmap
    of a power-of-two number of words."""
    chunk = max(1, int(stripe) * -(-int(n) // (int(stripe) * int(ranks))))
    wshift = max(0, (-(-chunk // 32) - 1).bit_length())
    return chunk, wshift, CLUSTERASYNC_HEAD_WORDS + 2 * chunk + (1 << wshift)


def clusterasync_max_n(ranks: int = CLUSTER_BLOCKS, stripe: int = CLUSTERASYNC_STRIPE) -> int:
    """The most vertices a cluster of ``ranks`` blocks holds in stripes of ``stripe`` ids (each block's words within
    its shared memory)."""
    budget = CLUSTER_SHARED_BYTES // 4
    chunk = (budget - CLUSTERASYNC_HEAD_WORDS) // 2 // int(stripe) * int(stripe)
    while clusterasync_words(chunk, 1)[2] > budget:
        chunk -= int(stripe)
    return int(ranks) * chunk


# --- multisource_fast -----------------------------------------------------------------------------------------------
AUTO_BATCH_MAX = 2048  # batch 0: the largest batch the rule takes (the fastest measured)
AUTO_BATCH_BYTES = 2**30  # batch 0: distances, stamps and parents of a batch stay under this
PAIRS_BATCH_MAX = 1024  # batch 0 with pair items: one batch of 1,024 road-graph sources beat 4 of 256 by 1.3x
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
    the graph is deep (hop depth >= MULTISOURCE_DEEP: frontier Bellman-Ford would expand each arc tens of times there),
    else 0 (none: shallow graphs converge in a few rounds anyway)."""
    if delta >= 0:
        return delta
    return graph.default_delta(MULTISOURCE_DELTA_WIDTH) if graph.hop_landmarks()[0] >= MULTISOURCE_DEEP else 0



# --- phast_gpu ------------------------------------------------------------------------------------------------------
PHAST_BLOCKS_PER_SM = 2  # grid 0: blocks per multiprocessor asked for (fewer when the largest level needs fewer)
PHAST_BATCH_MAX = 1024  # batch 0: the largest batch the rule takes
PHAST_BATCH_BYTES = 2**30  # batch 0: distances, parents and round marks of a batch stay under this
ROAD_MEAN_DEGREE, ROAD_MAX_DEGREE = 4, 16  # core_degree -1: graphs within both contract completely
CORE_DEGREE = 16  # core_degree -1 elsewhere


def phast_batch(k: int, n: int, itemsize: int) -> int:
    """Sources per batch for K sources: the smallest power of two >= K, at most PHAST_BATCH_MAX, halved while the
    working arrays ((w + 8) n S bytes) exceed PHAST_BATCH_BYTES."""
    s = 1
    while s < min(k, PHAST_BATCH_MAX):
        s *= 2
    while s > 1 and (itemsize + 8) * n * s > PHAST_BATCH_BYTES:
        s //= 2
    return s

# --- tile sides the matrix kernels are compiled for --------------------------------------------------------------
MATRIX_TILES = (4, 8, 16, 32)  # floydwarshall_tiledglobal / _tiledshared, minplus_tiled (paper 000's 32 the largest)

# --- the paper 000 / 004 Bellman-Ford launches ----------------------------------------------------------------------
STRIDE_BLOCKS_PER_SM = 4  # bellmanford_stride / _flag grid 0
PERSISTENT_BLOCKS_PER_SM = 2  # edgebf_coo / vertexbf_push launch=persistent
