"""The ``deltastep`` family's solvers (work-efficient delta-stepping on the GPU: one persistent kernel, one
thread-block cluster with or without rounds, asynchronous buckets) and the rules behind their automatic settings,
without Numba: the help strings, the memory bounds and the solvers read the same values. The sweeps behind the values:
benchmarks/sssp-fast-h200.md, benchmarks/sssp-cluster-h200.md, benchmarks/sssp-clusterasync-h200.md.
"""

from __future__ import annotations

from ...data.graph import DAVIDSON_WIDTH
from ..common.spec import BLOCK, CSR, GRAPH, WARP, M, N, W, Param, SolverSpec, derived, lift, note, par, when

# --- deltastep_gpu --------------------------------------------------------------------------------------------------
# Rounds, not arcs, bound the road and social graphs: a whole warp per queued vertex and wide buckets shorten each
# round's dependent chain.
NEARFAR_DELTA_WIDTH = 4 * DAVIDSON_WIDTH  # delta 0: this many x mean arc weight / mean out-degree
# ... except on large shallow graphs (GAP's kron and urand), where relaxations, not rounds, bound: there
# 1 / NARROW_LIGHT of the weight range, so that most arcs are heavy and relaxed once (benchmarks/sssp-scale-h200.md,
# "Bucket width at scale")
NARROW_ARCS, NARROW_DEPTH, NARROW_LIGHT = 1 << 26, 64, 32
NEARFAR_LANES = WARP  # lanes 0: threads sharing one queued vertex's arcs
NEARFAR_WIDE_LANES = 4  # lanes 0 on deep and wide graphs (nearfar_lanes)
NEARFAR_NARROW_LANES = 8  # lanes 0 where the narrow width applies: rounds of millions of vertices (kron, urand)
WIDE_DEPTH, WIDE_FRONTIER = 1024, 1024  # hop depth and vertices per level from which a graph counts as both
NEARFAR_BLOCKS_PER_SM = 2  # grid 0: all the 256-thread blocks that fit a multiprocessor at the kernel's registers
NEARFAR_REGISTERS = 64 * 1024 // (NEARFAR_BLOCKS_PER_SM * 256)  # ... of sm_90's 64 K: the kernel's budget (the gate)
HUB_WALK = 8  # split -1 cuts hubs into chunks when the largest out-degree exceeds this many x lanes
HUB_SPREAD = 8  # ... and this many x the mean out-degree: a few vertices hold up a round, not all of them alike
MAX_CHUNKS = 1024  # near-queue entries per vertex with split: the lone thread that pushes a hub writes them all


def nearfar_delta(delta: int, graph) -> int:
    """Bucket width: ``delta``, or for 0 on a graph of >= NARROW_ARCS arcs and hop depth < NARROW_DEPTH
    (largest weight + 1) / NARROW_LIGHT, else NEARFAR_DELTA_WIDTH x mean weight / mean out-degree. At least 1."""
    if delta:
        return int(delta)
    if large_and_shallow(graph.m, graph.hop_landmarks()[0]):
        return max(1, (int(graph.weights.max()) + 1) // NARROW_LIGHT)
    return graph.default_delta(NEARFAR_DELTA_WIDTH)


def large_and_shallow(m: int, depth: int) -> bool:
    """A graph of >= NARROW_ARCS arcs and hop depth < NARROW_DEPTH (GAP's kron and urand), where relaxations, not
    rounds, bound."""
    return m >= NARROW_ARCS and depth < NARROW_DEPTH


def nearfar_lanes(lanes: int, block: int, n: int = 0, depth: int = 0, m: int = 0) -> int:
    """Threads per queued vertex: ``lanes``, at most the block. 0: a warp, except on a graph both deep and wide (hop
    depth >= WIDE_DEPTH and n / depth >= WIDE_FRONTIER vertices per level, the grid stand-in): its rounds are long
    enough to fill the GPU, work rather than a round's latency decides, and NEARFAR_WIDE_LANES threads per vertex
    waste fewer lanes on a degree of four; and on a large shallow graph (``large_and_shallow``), whose rounds hold
    millions of vertices, NEARFAR_NARROW_LANES: four vertices a warp in flight, not one
    (benchmarks/sssp-scale-h200.md, "Hub chunks at scale")."""
    if not lanes:
        if depth >= WIDE_DEPTH and n >= WIDE_FRONTIER * depth:
            lanes = NEARFAR_WIDE_LANES
        elif large_and_shallow(m, depth):
            lanes = NEARFAR_NARROW_LANES
        else:
            lanes = NEARFAR_LANES
    return min(int(lanes), int(block))


def nearfar_split(split: int, lanes: int, max_degree: int, fused: bool, mean_degree: float = 0.0) -> int:
    """Arcs per near-queue entry. -1: 2 x lanes where the largest out-degree is over HUB_WALK x lanes (a hub's
    serial arc walk would hold up every round it is in) and over HUB_SPREAD x the mean (on urand, whose degrees are
    all alike, chunks would only cost each vertex a claim of its own), else 0 (whole vertices); a split that would
    give a vertex more than MAX_CHUNKS entries is raised. Split excludes the block-local queue of fusion (it holds
    whole vertices): auto then gives 0."""
    if split < 0:
        hub = max_degree > HUB_WALK * lanes and max_degree > HUB_SPREAD * mean_degree and not fused
        split = 2 * lanes if hub else 0
    return max(split, -(-max_degree // MAX_CHUNKS)) if split else 0


def nearfar_split_bound(split: int, lanes: int) -> int:
    """The smallest arcs per entry ``split`` may come to, for the memory bound before the graph is known."""
    return split if split > 0 else 2 * (lanes or min(NEARFAR_LANES, NEARFAR_WIDE_LANES, NEARFAR_NARROW_LANES))


# --- deltastep_lean -------------------------------------------------------------------------------------------------
# deltastep_gpu in at most 16 bytes a vertex beside the graph: membership in bits, queues of a fraction of n.
LEAN_QUEUE_SHARE = 8  # queue 0: entries of each near queue and far pile = n / this
LEAN_HUB_MIN = 32  # arcs of a bitmap round's hub chunk at least: a warp's pass
LEAN_FIXED = 256  # bytes of control words and placeholder arrays


def lean_queue(queue: int, n: int) -> int:
    """Entries of each near queue and far pile: ``queue``, or for 0 n / LEAN_QUEUE_SHARE rounded up; at least 1."""
    return max(1, int(queue) or -(-int(n) // LEAN_QUEUE_SHARE))


def lean_hub(m: int, queue: int) -> int:
    """Arcs per chunk of a hub met by a bitmap round: at least 2 m / ``queue``, so that every hub's chunks fit the
    round's idle queue (a vertex of degree d > h takes ceil(d / h) <= d / h + 1 entries and at most m / h vertices
    have d > h), and at least LEAN_HUB_MIN."""
    return max(LEAN_HUB_MIN, -(-2 * int(m) // max(1, int(queue))))


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
CLUSTER_QUEUE = 1024  # near-queue entries per block and round parity kept in shared memory (a road round's queue fits)


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


def cluster_limit(n: int, itemsize: int, params: dict) -> str | None:
    """Why deltastep_cluster cannot hold such a graph in its cluster's shared memory (int32 distances, 2 words a
    vertex and the queues), or None."""
    if itemsize != 4:
        return ("deltastep_cluster keeps int32 distances in shared memory; this graph's path bound needs int64 "
                "distances")
    ranks, queue = int(params["cluster"]), int(params["queue"])
    _, kept, words = cluster_words(n, ranks, queue)
    if 4 * words > CLUSTER_SHARED_BYTES:
        return (f"deltastep_cluster: {n} vertices need {4 * words} bytes of shared memory per block in a cluster of "
                f"{ranks} (2 words a vertex, 6 words per entry of queue {kept}); at most {CLUSTER_SHARED_BYTES}: "
                f"n <= {cluster_max_n(ranks, queue)}")
    return None


# --- deltastep_clusterasync ----------------------------------------------------------------------------------------
# The same cluster without rounds: a distance and a packed arc range a vertex, and a bitmap of marked vertices.
CLUSTERASYNC_HEAD_WORDS = 8  # per-block control words ahead of the distances (counts, phase flag, minima)
CLUSTERASYNC_STRIPE = 256  # consecutive ids a block keeps together: most road arcs stay in their block
# (benchmarks/sssp-clusterasync-h200.md)
CLUSTERASYNC_DELTA_WIDTH = 8 * DAVIDSON_WIDTH  # delta 0: wider buckets, fewer phases (each ends at two barriers)


def clusterasync_words(n: int, ranks: int, stripe: int = 1) -> tuple[int, int, int]:
    """(vertices per block, log2 of the bitmap's words, 32-bit shared words per block) for ``n`` vertices dealt out
    to ``ranks`` blocks in stripes of ``stripe`` consecutive ids: a distance and an arc range per vertex, and a bitmap
    of a power-of-two number of words."""
    chunk = max(1, int(stripe) * -(-int(n) // (int(stripe) * int(ranks))))
    wshift = max(0, (-(-chunk // 32) - 1).bit_length())
    return chunk, wshift, CLUSTERASYNC_HEAD_WORDS + 2 * chunk + (1 << wshift)


def clusterasync_limit(n: int, itemsize: int, params: dict) -> str | None:
    """Why deltastep_clusterasync cannot hold such a graph in its cluster's shared memory, or None."""
    if itemsize != 4:
        return ("deltastep_clusterasync keeps int32 distances in shared memory; this graph's path bound needs int64 "
                "distances")
    ranks, stripe = int(params["cluster"]), int(params["stripe"])
    words = clusterasync_words(n, ranks, stripe)[2]
    if 4 * words > CLUSTER_SHARED_BYTES:
        return (f"deltastep_clusterasync: {n} vertices need {4 * words} bytes of shared memory per block in a cluster "
                f"of {ranks} (2 words a vertex and a bitmap); at most {CLUSTER_SHARED_BYTES}: "
                f"n <= {clusterasync_max_n(ranks, stripe)}")
    return None


def clusterasync_max_n(ranks: int = CLUSTER_BLOCKS, stripe: int = CLUSTERASYNC_STRIPE) -> int:
    """The most vertices a cluster of ``ranks`` blocks holds in stripes of ``stripe`` ids (each block's words within
    its shared memory)."""
    budget = CLUSTER_SHARED_BYTES // 4
    chunk = (budget - CLUSTERASYNC_HEAD_WORDS) // 2 // int(stripe) * int(stripe)
    while clusterasync_words(chunk, 1)[2] > budget:
        chunk -= int(stripe)
    return int(ranks) * chunk


# --- deltastep_pieces ------------------------------------------------------------------------------------------------
# The graph in pieces of consecutive ids, one per block of a cooperative grid, each worked like clusterasync's block;
# arcs between pieces go through global memory (a distance word a vertex and an inbox a piece).
PIECES_TAIL_WORDS = 4  # per-piece control words after the bitmap (inbox grants and head, sends, quiet)
PIECE_SHIFT = 15  # bits of a head's index in its piece, in an arc's packed word (a piece's share of shared memory
# holds fewer vertices)
PIECES_REFERENCE_SMS = 132  # grid 0 where no GPU is at hand (the planner): the H200's multiprocessors
PIECES_DELTA_WIDTH = CLUSTERASYNC_DELTA_WIDTH  # delta 0: clusterasync's rule (each bucket ends at grid barriers)


def pieces_words(n: int, pieces: int, stripe: int = 0) -> tuple[int, int, int]:
    """(vertices per piece, log2 of the bitmap's words, 32-bit shared words per block) for ``n`` vertices cut into
    ``pieces`` runs of consecutive ids (``stripe`` 0) or dealt to them in stripes of ``stripe`` consecutive ids:
    clusterasync's words and the inbox's control words."""
    chunk, wshift, words = clusterasync_words(n, pieces, max(1, int(stripe)))
    return chunk, wshift, words + PIECES_TAIL_WORDS


def pieces_max_n(pieces: int = PIECES_REFERENCE_SMS) -> int:
    """The most vertices ``pieces`` blocks hold, each piece's words within one block's shared memory."""
    budget = CLUSTER_SHARED_BYTES // 4
    chunk = min((budget - CLUSTERASYNC_HEAD_WORDS - PIECES_TAIL_WORDS) // 2, 1 << PIECE_SHIFT)
    while pieces_words(chunk, 1)[2] > budget:
        chunk -= 1
    return int(pieces) * chunk


def pieces_limit(n: int, itemsize: int, params: dict) -> str | None:
    """Why deltastep_pieces cannot hold such a graph in its blocks' shared memory (grid 0 counted as
    PIECES_REFERENCE_SMS blocks), or None."""
    if itemsize != 4:
        return "deltastep_pieces keeps int32 distances in shared memory; this graph's path bound needs int64 distances"
    pieces = int(params["grid"]) or PIECES_REFERENCE_SMS
    words = pieces_words(n, pieces, params.get("stripe", 0))[2]
    if 4 * words > CLUSTER_SHARED_BYTES:
        return (f"deltastep_pieces: {n} vertices need {4 * words} bytes of shared memory per block in {pieces} "
                f"pieces (2 words a vertex and a bitmap); at most {CLUSTER_SHARED_BYTES}: "
                f"n <= {pieces_max_n(pieces)}")
    return None


# --- deltastep_clusters ----------------------------------------------------------------------------------------------
# The graph in parts of consecutive (or reverse Cuthill-McKee) positions, one per thread-block cluster, each part kept
# as clusterasync keeps its graph; arcs between clusters go through global memory as deltastep_pieces' do.
CLUSTERS_TAIL_WORDS = PIECES_TAIL_WORDS + 1  # pieces' words after the bitmap and the inbox entries granted
# clusters of 16 blocks the H200 holds at once (cuOccupancyMaxActiveClusters: 7 of 16 at 512 threads, 15 of 8; the
# launch refuses 8 of 16): the most clusters 0 picks
CLUSTERS_REFERENCE = 7
CLUSTERS_BLOCK_VERTICES = 16384  # clusters 0: at least enough clusters that a block holds this many vertices at
# most, so that the work of a graph's expansions is spread (the prediction in docs/solvers/deltastep.md)
CLUSTERS_RCM_CUT = 0.05  # order auto: reverse Cuthill-McKee when the ids' parts cut more than this share of arcs
# (delaunay-K numbers its points at random: its id runs cut 50-87 % of arcs, its RCM runs 0.2-1.6 %)


def clusters_words(n: int, clusters: int, ranks: int, stripe: int) -> tuple[int, int, int]:
    """(vertices per block, log2 of the bitmap's words, 32-bit shared words per block) for ``n`` vertices in
    ``clusters`` parts of ceil(n / clusters), each dealt to ``ranks`` blocks in stripes of ``stripe`` ids as
    clusterasync deals its graph: clusterasync's words and the inbox's control words."""
    chunk, wshift, words = clusterasync_words(-(-int(n) // int(clusters)), ranks, stripe)
    return chunk, wshift, words + CLUSTERS_TAIL_WORDS


def clusters_count(n: int, clusters: int, ranks: int, stripe: int) -> int:
    """Clusters used: ``clusters``, or for 0 the fewest (at most CLUSTERS_REFERENCE) whose blocks' shared memory
    holds the graph and whose blocks hold at most CLUSTERS_BLOCK_VERTICES vertices each (fewer clusters cut fewer
    arcs, more spread the work); CLUSTERS_REFERENCE when none does (refused then where the graph does not fit)."""
    if clusters:
        return int(clusters)
    for c in range(max(1, -(-int(n) // (int(ranks) * CLUSTERS_BLOCK_VERTICES))), CLUSTERS_REFERENCE + 1):
        if 4 * clusters_words(n, c, ranks, stripe)[2] <= CLUSTER_SHARED_BYTES:
            return c
    return CLUSTERS_REFERENCE


def clusters_max_n(clusters: int = CLUSTERS_REFERENCE, ranks: int = CLUSTER_BLOCKS,
                   stripe: int = CLUSTERASYNC_STRIPE) -> int:
    """The most vertices ``clusters`` clusters of ``ranks`` blocks hold, each block's words within its shared
    memory."""
    budget = CLUSTER_SHARED_BYTES // 4
    chunk = (budget - CLUSTERASYNC_HEAD_WORDS - CLUSTERS_TAIL_WORDS) // 2 // int(stripe) * int(stripe)
    while clusters_words(chunk, 1, 1, stripe)[2] > budget:
        chunk -= int(stripe)
    return int(clusters) * int(ranks) * chunk


def clusters_limit(n: int, itemsize: int, params: dict) -> str | None:
    """Why deltastep_clusters cannot hold such a graph in its clusters' shared memory, or None."""
    if itemsize != 4:
        return ("deltastep_clusters keeps int32 distances in shared memory; this graph's path bound needs int64 "
                "distances")
    ranks, stripe = int(params["cluster"]), int(params["stripe"])
    clusters = clusters_count(n, params["clusters"], ranks, stripe)
    words = clusters_words(n, clusters, ranks, stripe)[2]
    if 4 * words > CLUSTER_SHARED_BYTES:
        return (f"deltastep_clusters: {n} vertices need {4 * words} bytes of shared memory per block in {clusters} "
                f"clusters of {ranks} blocks (2 words a vertex and a bitmap); at most {CLUSTER_SHARED_BYTES}: "
                f"n <= {clusters_max_n(clusters, ranks, stripe)}")
    return None


# --- the solvers -----------------------------------------------------------------------------------------------------
def _split_entries(n, m, p, w):
    """Chunk entries of the near queue with split (split -1 counted as 2 x lanes; lanes 0 as the fewest automatic)."""
    return m // nearfar_split_bound(p["split"], p["lanes"]) + 1


PATHS = Param("paths", True, "build the shortest-path tree (parents) after the distances, inside the timed kernel "
              "(a pass over every arc; with zero weights the host grows it after the kernel); false: distances "
              "alone, as GAPBS and Gunrock compute them", choices=(True, False))

NEARFAR = SolverSpec(
    "deltastep_gpu", "sssp", "gpu", "-", "near-far delta-stepping in one persistent cooperative "
    "kernel: a device queue of the vertices whose distance changed, expanded while below the "
    "threshold, a far pile above it, the threshold raised by delta (Davidson et al., IPDPS'14)",
    "gpusp.solvers.deltastep.gpu:DeltaStepSolver",
    params=(Param("delta", 0, f"bucket width (0: {NEARFAR_DELTA_WIDTH} x mean arc weight / mean "
                  f"out-degree, {NEARFAR_DELTA_WIDTH // DAVIDSON_WIDTH} times Davidson et al.'s rule, where "
                  "rounds bound; on graphs of >= 2^26 arcs and hop depth < "
                  f"{NARROW_DEPTH}, where relaxations bound, 1/{NARROW_LIGHT} of (largest weight + 1))",
                  minimum=0),
            Param("lanes", 0, f"threads that share one frontier vertex's arcs (0: {NEARFAR_LANES}, "
                  f"{NEARFAR_WIDE_LANES} on graphs of hop depth >= {WIDE_DEPTH} with >= "
                  f"{WIDE_FRONTIER} vertices per level, {NEARFAR_NARROW_LANES} where the narrow width "
                  "applies)", choices=(0, 1, 2, 4, 8, 16, 32)),
            Param("chain", 0, "a thread that lowers a near vertex expands it at once, and so on "
                  "along the path for up to this many vertices, instead of queueing it (0: off)",
                  minimum=0, maximum=1024),
            BLOCK,
            Param("grid", 0, f"blocks of the persistent kernel (0: {NEARFAR_BLOCKS_PER_SM} per "
                  "multiprocessor; capped at the co-resident maximum)", minimum=0),
            Param("fuse", "off", "'block': a step whose near queue is small is settled by one block "
                  "alone, several near rounds with block barriers only, between two grid barriers "
                  "(bucket fusion as in GAPBS, a block-local queue as in ADDS); 'off': every near "
                  "round is a grid-wide step", choices=("off", "block")),
            Param("fuse_limit", 0, "fuse=block: the largest near queue one block settles alone, and "
                  "the size at which it hands back to the grid (0: 2 x block / fuse_lanes, two passes "
                  "of the block)", minimum=0),
            Param("fuse_lanes", 0, "fuse=block: threads that share one vertex's arcs in the fused "
                  "rounds (0: lanes)", choices=(0, 1, 2, 4, 8, 16, 32)),
            Param("fuse_queue", 4096, "fuse=block: capacity of the block-local queue; what does "
                  "not fit spills to the global near queue and ends the fused rounds", minimum=1),
            Param("split", -1, "arcs per near-queue entry: a vertex of higher degree is queued as several "
                  "entries, expanded by several lane groups at once (0: one entry per vertex; at most "
                  f"{MAX_CHUNKS} entries per vertex; not with fuse=block; -1: 2 x lanes when the "
                  f"largest out-degree is over {HUB_WALK} x lanes and {HUB_SPREAD} x the mean, else 0)",
                  minimum=-1),
            Param("push", "warp", "queue slots: 'warp' - the lanes of a warp that push at once share one "
                  "atomic on the queue counter; 'thread' - one atomic per pushed vertex (a hub of several "
                  "entries and the simulator: always 'thread')", choices=("warp", "thread")),
            Param("launch", "auto", "'graph': each source's launch is a replay of one captured CUDA "
                  "graph (the source is read from mapped host memory); 'direct': a Numba launch per "
                  "source; 'auto': graph where the driver can capture it, else direct",
                  choices=("auto", "graph", "direct")),
            Param("registers", 0, "registers per thread the kernel is compiled for (0: as the compiler "
                  "chooses; 80 and 64 let three and four 256-thread blocks share a multiprocessor "
                  "(set grid to match), at the price of spills to local memory)", choices=(0, 64, 80)),
            PATHS),
    offsets64=True,
    memory=CSR + note(24 * N, "two near queues, two far piles, stamps, far-pile flags")
    + when("fuse = block", lambda p: p["fuse"] == "block", note(8 * par("fuse_queue"), "two block-local queues"))
    + when("split != 0", lambda p: p["split"] != 0,
           note(16 * derived("E", _split_entries, "m / split + 1 chunk entries (split -1 counted as 2 x lanes, "
                                     "lanes 0 as the fewest automatic)")
                + 8 * N, "chunk entries and the chunk index of every entry")))

LEAN = SolverSpec(
    "deltastep_lean", "sssp", "gpu", "-", "deltastep_gpu's near-far delta-stepping in at most 16 bytes a vertex "
    "beside the graph (distances and parents included): near and far membership as bits, queues of n / "
    f"{LEAN_QUEUE_SHARE} entries; a round whose queue overflowed reads the near bitmap, a split whose pile "
    "overflowed the far bitmap; faster than deltastep_gpu on GAP's kron and urand, and where its memory does not fit",
    "gpusp.solvers.deltastep.lean:LeanSolver",
    params=(*(p for p in NEARFAR.params if p.name in ("delta", "lanes", "block", "grid", "split", "push", "launch")),
            Param("queue", 0, f"entries of each near queue and far pile (0: n / {LEAN_QUEUE_SHARE}); a round or "
                  "split past them reads its bitmap", minimum=0),
            PATHS),
    offsets64=True,
    memory=GRAPH + W * N + when("paths", lambda p: p["paths"], note(4 * N, "parents"))
    + note(24 * derived("Q", lambda n, m, p, w: lean_queue(p["queue"], n), f"queue, or n / {LEAN_QUEUE_SHARE}"),
           "two near queues, their chunk indices (with split or hubs), two far piles")
    + note(16 * derived("B", lambda n, m, p, w: -(-n // 32), "words of a bitmap, n / 32"),
           "three near bitmaps, the far bitmap") + note(lift(LEAN_FIXED), "control words"))

CLUSTER = SolverSpec(
    "deltastep_cluster", "sssp", "gpu", "-", "near-far delta-stepping in one thread-block cluster "
    "(Hopper, sm_90): distances, marks and near queues in the blocks' shared memory, updated across blocks "
    "through distributed shared memory, rounds separated by the cluster's hardware barrier; for graphs of "
    "long rounds of few vertices (road networks); int32 distances",
    "gpusp.solvers.deltastep.cluster:ClusterDeltaStepSolver",
    params=(Param("delta", 0, f"bucket width (0: {CLUSTER_DELTA_WIDTH} x mean arc weight / mean "
                  "out-degree)", minimum=0),
            Param("lanes", 8, "threads that share one queued vertex's arcs", choices=(1, 2, 4, 8, 16, 32)),
            Param("cluster", CLUSTER_BLOCKS, "blocks of the cluster, one per multiprocessor; the "
                  "vertices are shared out among them (n <= "
                  f"{cluster_max_n(CLUSTER_BLOCKS, CLUSTER_QUEUE)} at 16 and the default "
                  "queue, half that at 8)", choices=(1, 2, 4, 8, 16)),
            Param("block", 512, "threads per block", choices=(128, 256, 512, 1024)),
            Param("queue", CLUSTER_QUEUE, "near-queue entries per block and round parity kept in "
                  "shared memory (3 words each: the vertex and its arc range, taken from the vertices' "
                  "room); the rest go to global memory", minimum=1),
            Param("owner", "cyclic", "which block keeps a vertex: 'cyclic' - vertex v in block v mod "
                  "cluster, so a round's frontier (a wave of neighbouring ids on a road graph) is spread "
                  "over every block; 'range' - consecutive ids per block", choices=("cyclic", "range")),
            PATHS),
    max_n=cluster_max_n(CLUSTER_BLOCKS, 1), limit=cluster_limit,
    memory=CSR + note(24 * (N + par("cluster")), "the near queues' overflow in global memory"))

CLUSTERASYNC = SolverSpec(
    "deltastep_clusterasync", "sssp", "gpu", "-", "near-far delta-stepping in one thread-block cluster "
    "(Hopper, sm_90) without rounds: a vertex marked in its owner block's shared-memory bitmap is expanded "
    "as soon as a polling thread finds it, a bucket ends when the cluster's counts show it quiet; for road "
    "networks; int32 distances",
    "gpusp.solvers.deltastep.clusterasync:ClusterAsyncSolver",
    params=(Param("delta", 0, f"bucket width (0: {CLUSTERASYNC_DELTA_WIDTH} x mean arc weight / "
                  "mean out-degree)", minimum=0),
            Param("stripe", CLUSTERASYNC_STRIPE, "consecutive ids a block keeps together, stripes "
                  "dealt out to the blocks in turn: an arc between two vertices of one block costs a "
                  "shared-memory atomic instead of a hop to another block (1: vertex v in block v mod "
                  "cluster)", choices=tuple(2**k for k in range(13))),
            Param("cluster", CLUSTER_BLOCKS, "blocks of the cluster, one per multiprocessor; the "
                  f"vertices are shared out among them (n <= {clusterasync_max_n()} at 16, half that "
                  "at 8)", choices=(1, 2, 4, 8, 16)),
            Param("block", 512, "threads per block (each polls its share of the bitmap)",
                  choices=(128, 256, 512, 1024)),
            PATHS),
    max_n=clusterasync_max_n(), limit=clusterasync_limit,
    memory=CSR + note(8 * M, "each arc again as one word: weight, head's block and index")
    + note(4 * (N + par("cluster") * par("stripe")), "the packed arc ranges"))

PIECES_DELTA = Param("delta", 0, f"bucket width (0: {PIECES_DELTA_WIDTH} x mean arc weight / mean out-degree, "
                     "clusterasync's rule)", minimum=0)

PIECES = SolverSpec(
    "deltastep_pieces", "sssp", "gpu", "-", "near-far delta-stepping without rounds past one cluster: the graph in "
    "pieces of consecutive ids, one per block of a cooperative grid, each piece's distances and marks in its "
    "block's shared memory and expanded as clusterasync's block does; arcs between pieces lower a global word and "
    "queue the head in its piece's inbox; a bucket ends when the pieces' published counts show the grid quiet, "
    "grid barriers only between buckets; for road networks past one cluster; int32 distances",
    "gpusp.solvers.deltastep.pieces:PiecesSolver",
    params=(PIECES_DELTA,
            Param("grid", 0, "pieces, one block each, all co-resident (0: one per multiprocessor); each piece "
                  f"must fit one block's shared memory (n <= {pieces_max_n()} at {PIECES_REFERENCE_SMS})",
                  minimum=0),
            Param("block", 512, "threads per block (the last warp manages the piece, the others poll their share "
                  "of its bitmap)",
                  choices=(128, 256, 512, 1024)),
            Param("stripe", 0, "0: each piece a run of consecutive ids; s > 0: stripes of s consecutive ids dealt "
                  "to the pieces in turn, as clusterasync deals them to its blocks (every piece then holds part of "
                  "a road wavefront, and more arcs cross pieces), by renumbering the graph on the host",
                  minimum=0),
            PATHS),
    max_n=pieces_max_n(), limit=pieces_limit,
    memory=CSR + note(8 * M, "each arc again as one word: weight, head's piece and index")
    + note(20 * N, "packed arc ranges, the global distance words (8 bytes), the inboxes (up to 8 bytes)"))

CLUSTERS = SolverSpec(
    "deltastep_clusters", "sssp", "gpu", "-", "near-far delta-stepping without rounds over several thread-block "
    "clusters (Hopper, sm_90) at once: the graph in parts, one per cluster, each kept and worked as "
    "deltastep_clusterasync keeps its graph (arcs between its blocks are distributed-shared-memory atomics); arcs "
    "between clusters lower a global word and queue the head in its block's inbox, as deltastep_pieces' do; a bucket "
    "ends when the clusters' published counts show the grid quiet; for road networks past one cluster; int32 "
    "distances",
    "gpusp.solvers.deltastep.clusters:ClustersSolver",
    params=(PIECES_DELTA,
            Param("clusters", 0, "clusters, all resident at once, one part of the graph each (0: the fewest whose "
                  f"shared memory holds the graph with at most {CLUSTERS_BLOCK_VERTICES} vertices a block, at most "
                  f"{CLUSTERS_REFERENCE}; n <= {clusters_max_n()} at {CLUSTERS_REFERENCE} of 16)", minimum=0,
                  maximum=64),
            Param("cluster", CLUSTER_BLOCKS, "blocks per cluster, one per multiprocessor", choices=(1, 2, 4, 8, 16)),
            Param("block", 512, "threads per block (all but the last warp poll their share of the block's bitmap; "
                  "the last of a cluster's first block manages the cluster)",
                  choices=(128, 256, 512, 1024)),
            Param("stripe", CLUSTERASYNC_STRIPE, "consecutive ids of a part a block keeps together, stripes dealt "
                  "to the cluster's blocks in turn, as clusterasync's stripe", choices=tuple(2**k for k in range(13))),
            Param("order", "auto", "the vertex order cut into parts: 'ids' - runs of the graph's own ids (road files "
                  "number by place); 'rcm' - runs of SciPy's reverse Cuthill-McKee order; 'auto' - rcm when the "
                  f"ids' parts cut more than {CLUSTERS_RCM_CUT:.0%} of the arcs", choices=("auto", "ids", "rcm")),
            PATHS),
    max_n=clusters_max_n(), limit=clusters_limit,
    memory=CSR + note(8 * M, "each arc again as one word: weight, head's block and index")
    + note(20 * N, "packed arc ranges, the global distance words (8 bytes), the inboxes (up to 8 bytes)"))

ASYNC = SolverSpec(
    "deltastep_async", "sssp", "gpu", "-", "delta-stepping without grid barriers: blocks of a "
    "persistent kernel claim batches of queued vertices from the lowest buckets of a device ring of "
    "queues, expand them and push what they lower, each at its own pace (asynchronous buckets as in "
    "ADDS, Wang et al., PPoPP'21); int32 distances",
    "gpusp.solvers.deltastep.asyncbuckets:DeltaAsyncSolver",
    params=(Param("delta", 0, f"bucket width (0: {ASYNC_DELTA_WIDTH} x mean arc weight / mean "
                  "out-degree, Davidson et al.'s rule; raised to max weight / (buckets - window) if "
                  "smaller)", minimum=0),
            Param("lanes", 4, "threads that share one queued vertex's arcs", choices=(1, 2, 4, 8, 16, 32)),
            BLOCK,
            Param("grid", 0, f"blocks of the persistent kernel (0: {ASYNC_BLOCKS_PER_SM} per "
                  "multiprocessor; capped at the co-resident maximum)", minimum=0),
            Param("buckets", 64, "ring slots of the bucket queue", minimum=2, maximum=MAX_BUCKETS),
            Param("window", 4, "buckets from the lowest live one up that blocks may take work from",
                  minimum=1, maximum=64),
            Param("claim", MAX_BATCH, "most queued vertices a block claims at once (also <= "
                  "block / lanes)", minimum=1, maximum=MAX_BATCH),
            Param("capacity", 0, "entries per ring slot, a power of two (0: n / 4 rounded up, at least "
                  "1024; doubled and run again on overflow)", minimum=0),
            PATHS),
    memory=CSR + note(8 * N, "stamps") + note(8 * par("buckets") * derived(
        "C", lambda n, m, p, w: p["capacity"] or ring_capacity(n), "capacity, or n / 4 as a power of two >= 1024"),
        "the ring of bucket queues"))

SPECS = (NEARFAR, LEAN, CLUSTER, CLUSTERASYNC, PIECES, CLUSTERS, ASYNC)
