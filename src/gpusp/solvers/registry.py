"""The one table of solvers: names, papers, parameters, constraints and where the code lives.

The CLI, the workflow and the tests all read this table. It imports nothing heavy: the solver class
named by ``impl`` is imported only by :meth:`SolverSpec.load`, so listing and checking solvers needs
neither a GPU nor Numba.

Names are ``<family>_<variant>``; a family is one word. Papers (``../shared/seeds``): 000 Bodra,
001 Okuyama et al., 002 Zuccato & Lena, 003 Sudhanan, 004 An.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ..data.graph import DAVIDSON_WIDTH
from ..errors import SolverError
from . import rules
from .blockedfw import layout as blockedfw_layout
from .fastfw import variants as fastfw
from .rules import ring_capacity

PROBLEMS = ("sssp", "apsp")


@dataclass(frozen=True)
class Param:
    """One solver parameter: default, allowed values (``choices``) or an integer range."""

    name: str
    default: Any
    help: str
    choices: tuple | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value):
        """Return ``value`` converted to the default's type, or raise SolverError naming the problem."""
        kind = type(self.default)
        if kind is bool and isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0"):
                raise SolverError(f"parameter {self.name}={value!r}: expected true or false")
            value = value.lower() in ("true", "1")
        try:
            value = kind(value) if not isinstance(value, kind) else value
        except (TypeError, ValueError):
            raise SolverError(f"parameter {self.name}={value!r}: expected {kind.__name__}") from None
        if self.choices is not None and value not in self.choices:
            raise SolverError(f"parameter {self.name}={value!r}: allowed values are {list(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise SolverError(f"parameter {self.name}={value!r}: must be >= {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise SolverError(f"parameter {self.name}={value!r}: must be <= {self.maximum}")
        return value


def _zero(n, m, params, itemsize):
    return 0


@dataclass(frozen=True)
class SolverSpec:
    """Everything known about a solver without importing it."""

    name: str
    problem: str
    device: str
    paper: str
    summary: str
    impl: str
    params: tuple[Param, ...] = ()
    negative_weights: bool = False
    memory: Callable[[int, int, dict, int], int] = field(default=_zero, compare=False)
    memory_formula: str = "0"
    max_n: int | None = None
    peer: bool = False
    batched: bool = False  # SSSP: run() takes every source of a job at once (the harness's batch protocol)

    @property
    def family(self) -> str:
        return self.name.split("_", 1)[0]

    @property
    def variant(self) -> str:
        return self.name.split("_", 1)[1]

    def resolve(self, params: dict | None = None) -> dict:
        """Defaults merged with ``params``, every value checked; unknown names are an error."""
        params = dict(params or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise SolverError(f"{self.name} has no parameter {unknown[0]!r}; it takes {sorted(known) or 'none'}")
        return {name: p.check(params.get(name, p.default)) for name, p in known.items()}

    def defaults(self) -> dict:
        """Every parameter at its default (unchecked: a default is valid by construction)."""
        return {p.name: p.default for p in self.params}

    def build(self, graph, **params):
        """The solver built on ``graph`` with ``params`` resolved: defaults filled in, every value checked."""
        return self.load()(graph, **self.resolve(params))

    def why_not(self, n: int, m: int, *, negative: bool = False, itemsize: int = 4,
                params: dict | None = None, free_bytes: int | None = None) -> str | None:
        """The reason this solver cannot run on such a graph, or None when it can."""
        if negative and not self.negative_weights:
            return f"{self.name} does not accept negative weights"
        if self.max_n is not None and n > self.max_n:
            return f"{self.name} is limited to n <= {self.max_n} (n = {n})"
        if free_bytes is not None:
            need = self.memory(n, m, self.resolve(params), itemsize)
            if need > free_bytes:
                return (f"{self.name} needs {need / 2**30:.2f} GiB of device memory ({self.memory_formula}), "
                        f"only {free_bytes / 2**30:.2f} GiB free")
        return None

    def load(self):
        """Import and return the solver class (this is where Numba gets imported)."""
        module, _, attr = self.impl.partition(":")
        return getattr(importlib.import_module(module), attr)

    def describe(self) -> str:
        """One line of ``gpusp solvers``: name, problem, device, paper, whether it batches a job's sources, and the
        parameter defaults."""
        params = ", ".join(f"{p.name}={p.default}" for p in self.params)
        batched = "batched " if self.batched else ""
        return f"{self.name:<32} {self.problem} {self.device} paper {self.paper:<3} {batched}{params}"

    def info(self) -> dict:
        """A JSON-ready description (what ``gpusp solvers`` and :func:`gpusp.solver_info` show)."""
        return {
            "name": self.name,
            "problem": self.problem,
            "family": self.family,
            "variant": self.variant,
            "device": self.device,
            "paper": self.paper,
            "summary": self.summary,
            "negative_weights": self.negative_weights,
            "memory": self.memory_formula,
            "max_n": self.max_n,
            "peer": self.peer,
            "batched": self.batched,
            "params": {p.name: {"default": p.default, "choices": list(p.choices) if p.choices else None,
                               "minimum": p.minimum, "maximum": p.maximum, "help": p.help}
                       for p in self.params},
        }


# shared parameter definitions -------------------------------------------------------------------------
BLOCK = Param("block", 256, "threads per block", choices=(32, 64, 128, 256, 512, 1024))
ROUNDS = Param("rounds", "early", "'early': stop when a round changes nothing; 'fixed': always |V|-1 rounds "
               "as in paper 000", choices=("early", "fixed"))
LAUNCHER = Param("launcher", "native", "how host-driven kernels are launched: 'native' hands Numba's compiled "
                 "kernel a parameter block built once to the driver (C's cost per launch); 'numba' goes through "
                 "Numba's dispatcher every launch (tens of microseconds of host time each)",
                 choices=("native", "numba"))
GRID = Param("grid", 0, f"blocks in the grid-stride launch (0: {rules.STRIDE_BLOCKS_PER_SM} per multiprocessor)",
             minimum=0)
TILE = Param("tile", 32, "tile width (paper 000 tiled FW: threads per tile side)", choices=rules.MATRIX_TILES)
BLOCKING = Param("block_size", 32, "blocking factor B (matrix block side = CUDA block side)",
                 choices=blockedfw_layout.BLOCK_SIZES)
BLOCKEDFW_PATHS = Param("paths", True, "record the predecessor matrix (paper 002 computes costs only: false)",
                        choices=(True, False))
BLOCKEDFW_CAPTURE = Param("capture", "once", "'once': the CUDA graph is captured and instantiated in warm-up and replayed "
                        "by every run; 'per-run': captured and instantiated inside every timed run, as the thesis "
                        "does", choices=("once", "per-run"))
TRANSPOSE = Param("transpose", False, "multiply by the transposed operand for coalescing", choices=(False, True))
NSSSP_PARAMS = (Param("sources_per_launch", 32, "N: SSSP problems solved per launch", minimum=1, maximum=1024),
                Param("groups_per_block", 4, "B: groups of N threads per block", minimum=1, maximum=32),
                Param("paths", True, "run the recording kernel (paper 001's path recording); off: cost computation "
                      "only, parents derived on the host for validation (positive weights)", choices=(True, False)),
                LAUNCHER)
LAUNCH = Param("launch", "host", "how rounds are driven: 'host' launches a kernel per round and reads the flag back "
               "(as the paper); 'graph' replays a CUDA graph of a batch of rounds whose kernels exit at once "
               f"after convergence; 'persistent' runs every round in one cooperative kernel ({rules.PERSISTENT_BLOCKS_PER_SM} "
               "blocks per multiprocessor) with a grid-wide barrier between rounds",
               choices=("host", "graph", "persistent"))
CSR_MEMORY = "4(n+1) + (4+w)m + (2w+8)n bytes"
MATRIX_MEMORY = "(w+4) n^2 bytes"
NSSSP_MEMORY = ("(8+2w) N n bytes (masks, costs, updates and parent staging of N sources) + 2 (4(n+1) + (4+w) m) "
                "(the graph and its inverse) + (w+4) n^2 result on the device if it fits, else on the host")


MULTISOURCE_PARAMS = (Param("batch", 0, f"sources per batch S (0: the largest power of two <= {rules.AUTO_BATCH_MAX} "
              f"whose working arrays take <= {rules.AUTO_BATCH_BYTES / 2**30:g} GiB; with pair items <= "
              f"{rules.PAIRS_BATCH_MAX} and <= {rules.PAIRS_BATCH_BYTES / 2**30:g} GiB)",
              choices=(0, 32, 64, 128, 256, 512, 1024, 2048, 4096)),
        BLOCK,
        Param("grid", 0, f"blocks of the cooperative kernel (0: {rules.MULTISOURCE_BLOCKS_PER_SM} per "
              "multiprocessor; capped at the co-resident maximum)", minimum=0),
        Param("split", 32, "arcs per list entry: a vertex of higher degree is expanded by several "
              "warps", choices=(2, 8, 32, 64, 128, 256, 1024)),
        Param("regs", 40, "registers per thread the kernel is capped at (0: the compiler's choice, "
              "about 120 on sm_90; 40 fits 6 blocks of 256 threads per multiprocessor, which hides the "
              "latency of the dependent loads at the price of a few spills: benchmarks/apsp-sparse-h200.md)",
              choices=(0, 32, 40, 48, 64, 80)),
        Param("unroll", 2, "arcs of a list entry whose heads' distances a thread loads together "
              "before it uses any (overlaps their latencies; 4 and 8 spill under the register cap)",
              choices=(1, 2, 4, 8)),
        Param("parents", "auto", "how the trees are built after the distances: levels (breadth-first "
              "over tight arcs, safe with zero weights), tight (one pass, any tight in-arc, needs "
              "every w > 0), auto (tight when every w > 0)", choices=("auto", "levels", "tight")),
        Param("delta", -1, "bucket width of the distance rounds: a source's lanes at or above the batch's threshold "
              "wait, and the threshold rises by delta after a round that expanded nothing below it (0: no buckets, a "
              f"frontier Bellman-Ford; -1: {rules.MULTISOURCE_DELTA_WIDTH // DAVIDSON_WIDTH} x Davidson et al.'s "
              f"rule where the hop depth from a landmark is >= {rules.MULTISOURCE_DEEP}, else 0)", minimum=-1),
        Param("items", "auto", "what a distance round lists: 'words' - (vertex, 32 sources) items, a warp each, so "
              "one arc read serves the 32 sources (the sources of a word share frontiers on shallow graphs); 'pairs' - "
              "(vertex, source) pairs, a thread each (far-apart sources on a deep graph rarely share a vertex in the "
              "same round, and a warp would carry one busy lane); 'auto': pairs where delta buckets are on",
              choices=("auto", "words", "pairs")))
MULTISOURCE_ORDER = Param("order", "auto", "which sources share a batch and a 32-source word: 'given' (the job's "
                          "order), 'landmarks' (sorted by the Z-order of their hop counts from two far-apart vertices, "
                          "so that close sources share frontier items), 'auto' (landmarks where delta buckets are on)",
                          choices=("auto", "given", "landmarks"))


def _csr(n, m, params, itemsize):
    """CSR graph + distance and parent arrays on the device."""
    return 4 * (n + 1) + (4 + itemsize) * m + (2 * itemsize + 4 + 4) * n


def _coo(n, m, params, itemsize):
    return (8 + itemsize) * m + (2 * itemsize + 4 + 8) * n


def _matrix(n, m, params, itemsize):
    """Distance matrix and predecessor matrix."""
    return (itemsize + 4) * n * n


def _nsssp(n, m, params, itemsize):
    """Paper 001's (3N + 1)|V| + 2|E| words in bytes, the inverted graph for path recording and the parent staging."""
    N = params["sources_per_launch"]
    return (8 + 2 * itemsize) * N * n + 2 * (4 * (n + 1) + (4 + itemsize) * m)


def _multisource_sssp(n, m, params, itemsize):
    """Distances, stamps and parents of a batch of S sources, the item stamps and two round lists of 32-source words
    (the K x n result of a job's K sources is counted apart: the registry does not know K)."""
    pairs = params["items"] != "words"  # auto may choose pairs: counted as if it did
    S = params["batch"] or rules.auto_batch(n, itemsize, pairs)
    words = S // rules.WARP
    lists = 2 * 4 * (n + m // params["split"] + 1) * words
    if pairs:  # two lists and two far piles of a slot per (vertex, source), and a far mark each
        return _csr(n, m, params, itemsize) + (itemsize + 8) * n * S + max(lists, 8 * n * S) + 12 * n * S
    return _csr(n, m, params, itemsize) + (itemsize + 8) * n * S + 4 * n * words + lists


def _multisource(n, m, params, itemsize):
    """multisource_sssp's working arrays and the n x n result."""
    return _multisource_sssp(n, m, params, itemsize) + (itemsize + 4) * n * n


def _dense(n, m, params, itemsize):
    return itemsize * n * n + (2 * itemsize + 8) * n


def _fastfw_table() -> str:
    """blockedfw_fast's table of (tile, regblock) per n, in words."""
    parts = []
    for paths, rows in fastfw.TABLE.items():
        steps = ", ".join(f"T {T} R {R}" + (f" to n = {n_max}" if n_max < 1 << 60 else "") for n_max, T, R in rows)
        parts.append(f"{'with' if paths else 'without'} paths {steps}")
    return "; ".join(parts)


def _fastfw_auto(field: str) -> str:
    """What an 'auto' kernel-variant field of blockedfw_fast takes, with and without paths."""
    values = {paths: fastfw.AUTO_VARIANT[paths][field] for paths in (True, False)}
    if values[True] == values[False]:
        return str(values[True])
    return f"{values[True]} with paths, {values[False]} without"


def _fastfw_memory(n, m, params, itemsize):
    """The padded matrices of blockedfw_fast at the tile it runs with."""
    T = fastfw.tile_shape(n, params["paths"], params["tile"], params["regblock"])[0]
    return fastfw.device_bytes(-(-n // T) * T, itemsize, params["paths"])


SPECS: tuple[SolverSpec, ...] = (
    # --- reference and serial baselines ---------------------------------------------------------------
    SolverSpec("scipy_dijkstra", "sssp", "cpu", "-", "SciPy csgraph Dijkstra (Johnson when weights are "
               "negative): the CPU reference every GPU result is checked against",
               "gpusp.solvers.cpu:ScipySssp", negative_weights=True),
    SolverSpec("dijkstra_cpu", "sssp", "cpu", "000", "serial Dijkstra with a binary heap (lazy deletion)",
               "gpusp.solvers.cpu:DijkstraCpu"),
    SolverSpec("bellmanford_cpu", "sssp", "cpu", "000", "serial Bellman-Ford over the edge list",
               "gpusp.solvers.cpu:BellmanFordCpu", params=(ROUNDS,), negative_weights=True),
    SolverSpec("scipy_apsp", "apsp", "cpu", "-", "SciPy csgraph Dijkstra from every source (Johnson when "
               "weights are negative)", "gpusp.solvers.cpu:ScipyApsp", negative_weights=True,
               params=(Param("workers", 1, "processes that split the sources (0: every core of the host)",
                             minimum=0),),
               memory=_matrix, memory_formula="host only"),
    SolverSpec("dijkstra_cpumatrix", "apsp", "cpu", "000", "paper 000's CPU APSP: serial Dijkstra from every "
               "source with a binary heap, each popped vertex's arcs found by scanning its row of the n x n matrix",
               "gpusp.solvers.cpu:DijkstraMatrixApsp", memory=_matrix, memory_formula="host only"),
    SolverSpec("floydwarshall_cpu", "apsp", "cpu", "000", "serial Floyd-Warshall on the n x n matrix",
               "gpusp.solvers.cpu:FloydWarshallCpu", negative_weights=True),
    # --- paper 000: vertex-parallel Bellman-Ford -----------------------------------------------------
    SolverSpec("bellmanford_naive", "sssp", "gpu", "000", "thread per vertex relaxes its out-edges from "
               "prevDistance into distance with atomic min, then a copy kernel; parent kernel at the end",
               "gpusp.solvers.bellmanford:NaiveSolver", params=(BLOCK, ROUNDS, LAUNCHER), negative_weights=True,
               memory=_csr, memory_formula=CSR_MEMORY),
    SolverSpec("bellmanford_stride", "sssp", "gpu", "000", "as naive, with grid-stride loops over vertices "
               "and a fixed grid size", "gpusp.solvers.bellmanford:StrideSolver",
               params=(BLOCK, GRID, ROUNDS, LAUNCHER), negative_weights=True, memory=_csr,
               memory_formula=CSR_MEMORY),
    SolverSpec("bellmanford_flag", "sssp", "gpu", "000", "stride with a per-vertex changed flag: only "
               "vertices whose distance changed last round relax", "gpusp.solvers.bellmanford:FlagSolver",
               params=(BLOCK, GRID, ROUNDS, LAUNCHER), negative_weights=True, memory=_csr,
               memory_formula=CSR_MEMORY),
    # --- paper 004: edge-parallel and pull/push Bellman-Ford -----------------------------------------
    SolverSpec("edgebf_coo", "sssp", "gpu", "004", "thread per edge (k edges per thread, coalesced) on COO "
               "arrays with mask / next mask / flag and early termination", "gpusp.solvers.edgebf.solvers:CooSolver",
               params=(BLOCK, Param("edges_per_thread", 1, "edges each thread relaxes (stride = grid size, "
                                    "coalesced)", choices=(1, 2, 4, 8, 16, 32, 64)), LAUNCH, LAUNCHER),
               negative_weights=True, memory=_coo, memory_formula="(8+w)m + (2w+12)n bytes"),
    SolverSpec("edgebf_dense", "sssp", "gpu", "004", "edge-parallel Bellman-Ford on the dense adjacency "
               "matrix (for complete graphs); the matrix from pageable or pinned memory, or streamed in pieces "
               "overlapped with the first round", "gpusp.solvers.edgebf.solvers:DenseSolver",
               params=(BLOCK, Param("transfer", "pageable", "'pageable', 'pinned', or 'streams' (the upload moves "
                                    "into every run, piece by piece, overlapped with round 1)",
                                    choices=("pageable", "pinned", "streams")),
                       Param("chunks", 2, "row pieces (and streams) with transfer='streams'", choices=(2, 4, 8)),
                       Param("layout", "coalesced", "'coalesced': the threads of a warp read neighbouring entries of "
                             "one matrix row; 'strided': the row index on x, so a warp's reads are a row apart "
                             "(paper 004's non-coalesced version)", choices=("coalesced", "strided")),
                       Param("edges_per_thread", 1, "matrix entries each thread relaxes in a 2-D grid-stride loop "
                             "(paper 004's Alg. 5)", choices=(1, 2, 4, 8, 16, 32, 64)),
                       LAUNCHER),
               negative_weights=True, memory=_dense, memory_formula="w n^2 + (2w+8)n bytes"),
    SolverSpec("vertexbf_pull", "sssp", "gpu", "004", "thread per vertex reads its incoming edges and "
               "takes the minimum (no atomics)", "gpusp.solvers.edgebf.solvers:PullSolver", params=(BLOCK, LAUNCHER),
               negative_weights=True, memory=lambda n, m, p, w: _csr(n, m, p, w) + 8 * n,
               memory_formula="4(n+1) + (4+w)m + (2w+16)n bytes (reverse CSR, two distance buffers)"),
    SolverSpec("vertexbf_push", "sssp", "gpu", "004", "thread per vertex pushes along its outgoing edges "
               "with atomic min", "gpusp.solvers.edgebf.solvers:PushSolver", params=(BLOCK, LAUNCH, LAUNCHER), negative_weights=True,
               memory=_csr, memory_formula=CSR_MEMORY),
    # --- papers 001 and 003: Harish-Narayanan and the packed atomic ----------------------------------
    SolverSpec("harish_scattercheck", "sssp", "gpu", "001", "Harish-Narayanan: scatter kernel relaxes "
               "masked vertices into an update array, check kernel commits, re-masks and sets the flag",
               "gpusp.solvers.harish:ScatterCheckSolver", params=(BLOCK, LAUNCHER), memory=_csr,
               memory_formula="4(n+1) + (4+w)m + (3w+8)n bytes"),
    SolverSpec("packed_atomic", "sssp", "gpu", "003", "one 64-bit atomic updates (distance, parent) "
               "together: dist in the high 32 bits, parent in the low 32",
               "gpusp.solvers.packed:PackedSolver",
               params=(BLOCK, Param("method", "min", "'min': 64-bit atomic min; 'cas': compare-and-swap loop",
                                    choices=("min", "cas")), LAUNCHER),
               memory=_csr, memory_formula="4(n+1) + 8m + 16n bytes"),
    # --- beyond the papers: work-efficient GPU SSSP and the peers (GAPBS, Gunrock) --------------------
    SolverSpec("deltastep_gpu", "sssp", "gpu", "-", "near-far delta-stepping in one persistent cooperative "
               "kernel: a device queue of the vertices whose distance changed, expanded while below the "
               "threshold, a far pile above it, the threshold raised by delta (Davidson et al., IPDPS'14)",
               "gpusp.solvers.deltastep:DeltaStepSolver",
               params=(Param("delta", 0, f"bucket width (0: {rules.NEARFAR_DELTA_WIDTH} x mean arc weight / mean "
                             f"out-degree, {rules.NEARFAR_DELTA_WIDTH // DAVIDSON_WIDTH} times Davidson et al.'s rule: "
                             "rounds, not arcs, bound the graphs measured)", minimum=0),
                       Param("lanes", 0, f"threads that share one frontier vertex's arcs (0: {rules.NEARFAR_LANES}, "
                             f"{rules.NEARFAR_WIDE_LANES} on graphs of hop depth >= {rules.WIDE_DEPTH} with >= "
                             f"{rules.WIDE_FRONTIER} vertices per level)", choices=(0, 1, 2, 4, 8, 16, 32)),
                       Param("chain", 0, "a thread that lowers a near vertex expands it at once, and so on "
                             "along the path for up to this many vertices, instead of queueing it (0: off)",
                             minimum=0, maximum=1024),
                       BLOCK,
                       Param("grid", 0, f"blocks of the persistent kernel (0: {rules.NEARFAR_BLOCKS_PER_SM} per "
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
                             f"{rules.MAX_CHUNKS} entries per vertex; not with fuse=block; -1: 2 x lanes when the "
                             f"largest out-degree is over {rules.HUB_WALK} x lanes, else 0)", minimum=-1),
                       Param("push", "warp", "queue slots: 'warp' - the lanes of a warp that push at once share one "
                             "atomic on the queue counter; 'thread' - one atomic per pushed vertex (split > 0 and "
                             "the simulator: always 'thread')", choices=("warp", "thread")),
                       Param("launch", "auto", "'graph': each source's launch is a replay of one captured CUDA "
                             "graph (the source is read from mapped host memory); 'direct': a Numba launch per "
                             "source; 'auto': graph where the driver can capture it, else direct",
                             choices=("auto", "graph", "direct")),
                       Param("registers", 0, "registers per thread the kernel is compiled for (0: as the compiler "
                             "chooses, 112; 80 and 64 let three and four 256-thread blocks share a multiprocessor "
                             "(set grid to match), at the price of spills to local memory)", choices=(0, 64, 80))),
               memory=lambda n, m, p, w: _csr(n, m, p, w) + 20 * n
               + (8 * p["fuse_queue"] if p["fuse"] == "block" else 0)
               + (8 * (m // rules.nearfar_split_bound(p["split"], p["lanes"]) + 1) if p["split"] else 0),
               memory_formula="4(n+1) + (4+w)m + (2w+28)n bytes (CSR, distances, parents, two near queues, "
                              "two far piles, stamps) + 8 fuse_queue with fuse=block (two block-local queues) + 8 (m / split + 1) "
                              "with split (chunk entries; split -1 counted as 2 x lanes)"),
    SolverSpec("deltastep_cluster", "sssp", "gpu", "-", "near-far delta-stepping in one thread-block cluster "
               "(Hopper, sm_90): distances, marks and near queues in the blocks' shared memory, updated across blocks "
               "through distributed shared memory, rounds separated by the cluster's hardware barrier; for graphs of "
               "long rounds of few vertices (road networks); int32 distances",
               "gpusp.solvers.deltacluster:ClusterDeltaStepSolver",
               params=(Param("delta", 0, f"bucket width (0: {rules.CLUSTER_DELTA_WIDTH} x mean arc weight / mean "
                             "out-degree)", minimum=0),
                       Param("lanes", 8, "threads that share one queued vertex's arcs", choices=(1, 2, 4, 8, 16, 32)),
                       Param("cluster", rules.CLUSTER_BLOCKS, "blocks of the cluster, one per multiprocessor; the "
                             "vertices are shared out among them (n <= "
                             f"{rules.cluster_max_n(rules.CLUSTER_BLOCKS, rules.CLUSTER_QUEUE)} at 16 and the default "
                             "queue, half that at 8)", choices=(1, 2, 4, 8, 16)),
                       Param("block", 512, "threads per block", choices=(128, 256, 512, 1024)),
                       Param("queue", rules.CLUSTER_QUEUE, "near-queue entries per block and round parity kept in "
                             "shared memory (3 words each: the vertex and its arc range, taken from the vertices' "
                             "room); the rest go to global memory", minimum=1),
                       Param("owner", "cyclic", "which block keeps a vertex: 'cyclic' - vertex v in block v mod "
                             "cluster, so a round's frontier (a wave of neighbouring ids on a road graph) is spread "
                             "over every block; 'range' - consecutive ids per block", choices=("cyclic", "range"))),
               max_n=rules.cluster_max_n(rules.CLUSTER_BLOCKS, 1),
               memory=lambda n, m, p, w: _csr(n, m, p, w) + 24 * (n + p["cluster"]),
               memory_formula=CSR_MEMORY + " + 24 n (the near queues' overflow in global memory)"),
    SolverSpec("deltastep_clusterasync", "sssp", "gpu", "-", "near-far delta-stepping in one thread-block cluster "
               "(Hopper, sm_90) without rounds: a vertex marked in its owner block's shared-memory bitmap is expanded "
               "as soon as a polling thread finds it, a bucket ends when the cluster's counts show it quiet; for road "
               "networks; int32 distances",
               "gpusp.solvers.clusterasync:ClusterAsyncSolver",
               params=(Param("delta", 0, f"bucket width (0: {rules.CLUSTERASYNC_DELTA_WIDTH} x mean arc weight / "
                             "mean out-degree)", minimum=0),
                       Param("stripe", rules.CLUSTERASYNC_STRIPE, "consecutive ids a block keeps together, stripes "
                             "dealt out to the blocks in turn: an arc between two vertices of one block costs a "
                             "shared-memory atomic instead of a hop to another block (1: vertex v in block v mod "
                             "cluster)", choices=tuple(2**k for k in range(13))),
                       Param("cluster", rules.CLUSTER_BLOCKS, "blocks of the cluster, one per multiprocessor; the "
                             f"vertices are shared out among them (n <= {rules.clusterasync_max_n()} at 16, half that "
                             "at 8)", choices=(1, 2, 4, 8, 16)),
                       Param("block", 512, "threads per block (each polls its share of the bitmap)",
                             choices=(128, 256, 512, 1024))),
               max_n=rules.clusterasync_max_n(),
               memory=lambda n, m, p, w: _csr(n, m, p, w) + 8 * m + 4 * (n + p["cluster"] * p["stripe"]),
               memory_formula=CSR_MEMORY + " + 8 m (each arc again as one word: weight, head's block and index) + "
                              "4 (n + cluster x stripe) (the packed arc ranges)"),
    SolverSpec("deltastep_async", "sssp", "gpu", "-", "delta-stepping without grid barriers: blocks of a "
               "persistent kernel claim batches of queued vertices from the lowest buckets of a device ring of "
               "queues, expand them and push what they lower, each at its own pace (asynchronous buckets as in "
               "ADDS, Wang et al., PPoPP'21); int32 distances",
               "gpusp.solvers.deltaasync:DeltaAsyncSolver",
               params=(Param("delta", 0, f"bucket width (0: {rules.ASYNC_DELTA_WIDTH} x mean arc weight / mean "
                             "out-degree, Davidson et al.'s rule; raised to max weight / (buckets - window) if "
                             "smaller)", minimum=0),
                       Param("lanes", 4, "threads that share one queued vertex's arcs", choices=(1, 2, 4, 8, 16, 32)),
                       BLOCK,
                       Param("grid", 0, f"blocks of the persistent kernel (0: {rules.ASYNC_BLOCKS_PER_SM} per "
                             "multiprocessor; capped at the co-resident maximum)", minimum=0),
                       Param("buckets", 64, "ring slots of the bucket queue", minimum=2, maximum=rules.MAX_BUCKETS),
                       Param("window", 4, "buckets from the lowest live one up that blocks may take work from",
                             minimum=1, maximum=64),
                       Param("claim", rules.MAX_BATCH, "most queued vertices a block claims at once (also <= "
                             "block / lanes)", minimum=1, maximum=rules.MAX_BATCH),
                       Param("capacity", 0, "entries per ring slot, a power of two (0: n / 4 rounded up, at least "
                             "1024; doubled and run again on overflow)", minimum=0)),
               memory=lambda n, m, p, w: _csr(n, m, p, w) + 8 * n + 8 * p["buckets"] * (
                   p["capacity"] or ring_capacity(n)),
               memory_formula="4(n+1) + (4+w)m + (2w+8)n bytes (CSR, distances, parents) + 8 buckets capacity "
                              "(the ring of bucket queues)"),
    SolverSpec("gapbs_sssp", "sssp", "cpu", "-", "external peer: the GAP Benchmark Suite's delta-stepping "
               "sssp binary (reference CPU code, OpenMP), built from its pinned source archive, run on the "
               "same graph and sources; its own trial times and verifier verdict",
               "gpusp.solvers.gapbs:GapbsSolver",
               params=(Param("threads", 0, "OpenMP threads (0: every core of the host)", minimum=0),
                       Param("delta", 0, f"GAPBS -d bucket width (0: Graph.default_delta(), {DAVIDSON_WIDTH} x mean "
                             "arc weight / mean out-degree)", minimum=0)),
               peer=True),
    SolverSpec("gunrock_sssp", "sssp", "gpu", "-", "external GPU peer: Gunrock's frontier SSSP (advance relaxing "
               "with atomic min, then filter), built from its pinned archive with gpusp's driver, run on the same "
               "graph and sources; the whole sssp::run call timed with CUDA events, Gunrock's own enact time beside "
               "it; distances checked against SciPy (no predecessors)",
               "gpusp.solvers.gunrock:GunrockSolver",
               params=(Param("load_balance", "block_mapped", "how the advance spreads a frontier's arcs over threads "
                             "(Gunrock's load_balance_t): 'block_mapped' a block per chunk of frontier vertices, their "
                             "arcs shared by the block (Gunrock's default); 'thread_mapped' a thread per frontier "
                             "vertex; 'merge_path' and 'merge_path_v2' Merrill and Garland's merge-path split of "
                             "vertices and arcs (merge_path_v2 in the pinned commit also sorts and prints every "
                             "frontier: debug code its time includes)", choices=("block_mapped", "thread_mapped", "merge_path",
                                                           "merge_path_v2")),
                       Param("uniquify", False, "run Gunrock's uniquify operator after the filter (best effort, "
                             "hash-based): fewer duplicate vertices in the next frontier", choices=(False, True))),
               memory=lambda n, m, p, w: 4 * (n + 1) + (4 + w) * m + (w + 8) * n + 8 * max(n, m),
               memory_formula="4(n+1) + (4+w)m + (w+8)n + 8 max(n, m) bytes (CSR, distances, visited stamps, work "
                              "scan, two frontiers of max(n, m) vertices; a frontier that outgrows them is resized)",
               peer=True),
    # --- paper 000: Floyd-Warshall and GPU Dijkstra APSP ---------------------------------------------
    SolverSpec("floydwarshall_supernaive", "apsp", "gpu", "000", "2-D grid, one thread per (i, j), one "
               "launch per k", "gpusp.solvers.floydwarshall:SuperNaiveSolver",
               params=(Param("tile", 16, "block side of the 2-D launch", choices=(4, 8, 16, 32)), LAUNCHER),
               negative_weights=True, memory=_matrix, memory_formula=MATRIX_MEMORY),
    SolverSpec("floydwarshall_supernaiveshared", "apsp", "gpu", "000", "1-D blocks along a row share "
               "d[i][k] through shared memory, one launch per k",
               "gpusp.solvers.floydwarshall:SuperNaiveSharedSolver", params=(BLOCK, LAUNCHER), negative_weights=True,
               memory=_matrix, memory_formula=MATRIX_MEMORY),
    SolverSpec("floydwarshall_naive", "apsp", "gpu", "000", "one thread per row i loops over j, one launch "
               "per k", "gpusp.solvers.floydwarshall:NaiveSolver", params=(BLOCK, LAUNCHER), negative_weights=True,
               memory=_matrix, memory_formula=MATRIX_MEMORY),
    SolverSpec("floydwarshall_tiledglobal", "apsp", "gpu", "000", "three-phase tiled FW in global memory",
               "gpusp.solvers.floydwarshall:TiledGlobalSolver", params=(TILE, LAUNCHER), negative_weights=True,
               memory=_matrix, memory_formula=MATRIX_MEMORY),
    SolverSpec("floydwarshall_tiledshared", "apsp", "gpu", "000", "three-phase tiled FW with tiles staged "
               "in shared memory", "gpusp.solvers.floydwarshall:TiledSharedSolver", params=(TILE, LAUNCHER),
               negative_weights=True, memory=_matrix, memory_formula=MATRIX_MEMORY),
    SolverSpec("dijkstra_gpunaive", "apsp", "gpu", "000", "one thread per source runs Dijkstra on the "
               "adjacency matrix with an O(V^2) linear extract-min", "gpusp.solvers.dijkstragpu:NaiveApspSolver",
               params=(BLOCK,), memory=lambda n, m, p, w: (2 * w + 5) * n * n,
               memory_formula="(2w+5) n^2 bytes"),
    # --- paper 002: blocked Floyd-Warshall -------------------------------------------------------------
    *(SolverSpec(f"blockedfw_{v}", "apsp", "gpu", "002", summary, f"gpusp.solvers.blockedfw.versions:{cls}",
                 params=(BLOCKING, BLOCKEDFW_PATHS) + extra, negative_weights=True,
                 memory=lambda n, m, p, w: blockedfw_layout.device_bytes(n, p["block_size"], w, paths=p["paths"]),
                 memory_formula=blockedfw_layout.MEMORY_FORMULA)
      for v, cls, extra, summary in (
          ("v10", "V10Solver", (LAUNCHER,), "1.0: one launch per block of every phase (global memory)"),
          ("v11", "V11Solver", (LAUNCHER,), "1.1: one launch per phase over the full r x r grid of blocks"),
          ("v12", "V12Solver", (LAUNCHER,), "1.2: rationalised grids of 1, 2r-1 and (r-1)^2 blocks"),
          ("v20", "V20Solver", (LAUNCHER,), "2.0: 1.2 with blocks staged in shared memory"),
          ("v21", "V21Solver", (LAUNCHER,), "2.1: 2.0 with bank-conflict prevention (transposition and padding "
                                            "where the lcm rule predicts a conflict)"),
          ("v30", "V30Solver", (LAUNCHER,), "3.0: phases 2 and 3 split into pieces launched on several streams"),
          ("v40", "V40Solver", (BLOCKEDFW_CAPTURE,), "4.0: the 3.0 launches captured into a CUDA graph and replayed"),
          ("v41", "V41Solver", (BLOCKEDFW_CAPTURE,), "4.1: CUDA graph with the dependency structure between phase "
                                                   "pieces"),
      )),
    SolverSpec("blockedfw_fast", "apsp", "gpu", "-", "register-blocked Floyd-Warshall beside paper 002's "
               "versions: large tiles staged in shared memory, each thread an R x R register block of cells "
               "(R^2 add-mins per 2R shared loads); tile and register block from a table measured on the H200; "
               "kernel variants (p12, inner, unroll, stage: phases 1-2 in shared memory, vector loads, unrolled "
               "and double-buffered phase 3) as compile-time constants; 'auto' = the fastest measured "
               "(benchmarks/apsp-fast-h200.md)",
               "gpusp.solvers.fastfw.solver:FastSolver",
               params=(Param("tile", 0, "tile side (0: from the measured table, " + _fastfw_table() + ")",
                             choices=(0, 16, 32, 64, 128)),
                       Param("regblock", 0, "cells per thread along each side (0: from the table; with a tile given, "
                             f"tile / {fastfw.THREADS_SIDE})", choices=(0, 1, 2, 4, 8)),
                       Param("arith", "auto", "inner add-min: 'int32' plain, 'dpx' fused __viaddmin_s32, 'float32' "
                             f"exact below 2^{fastfw.FLOAT_EXACT.bit_length() - 1} ('auto': {fastfw.AUTO_ARITH}, the "
                             "fastest exact one)", choices=("auto",) + fastfw.ARITHS),
                       Param("paths", True, "record the predecessor matrix", choices=(True, False)),
                       Param("p12", "auto", "phases 1-2: operands from global memory, or from shared-memory copies "
                             "of the tile and the pivot tile (tile <= 64); 'auto': "
                             + _fastfw_auto("p12") + " where it fits, global with launch=persistent",
                             choices=("auto",) + fastfw.P12S),
                       Param("inner", "auto", "phase-3 operand loads from shared memory: 32-bit, or 64/128-bit vectors "
                             "(each thread then owns R consecutive rows and columns); 'auto': " + _fastfw_auto("inner"),
                             choices=("auto",) + tuple(fastfw.INNERS)),
                       Param("unroll", 0, "phase-3 pivots per k-loop iteration, written out (>= the vector width); "
                             "0: " + _fastfw_auto("unroll") + " where the tile allows, else "
                             + str(fastfw.DEFAULTS["unroll"]), choices=(0,) + fastfw.UNROLLS),
                       Param("stage", "auto", "phase-3 operand chunks: one shared buffer, or two with the next "
                             "chunk's global loads in flight during the current chunk's compute ('auto': "
                             + _fastfw_auto("stage") + ")", choices=("auto",) + fastfw.STAGES),
                       Param("launch", "auto", "rounds launched from the host, replayed as one CUDA graph, or run "
                             f"in one cooperative kernel ('auto': {fastfw.AUTO_LAUNCH}, the fastest measured)",
                             choices=fastfw.LAUNCHES),
                       Param("pivots", "auto", "'all': every vertex is a pivot, the paper's algorithm; 'useful': "
                             "only vertices with an arc from and an arc to another vertex (the only ones inside a "
                             "shortest path or on a cycle), renumbered first, so rounds of pivots stop after their "
                             "tiles; 'auto': useful when that saves a round", choices=fastfw.PIVOTS),
                       Param("phase2", "auto", "'serial': the pivot row and column tiles relaxed pivot by pivot (a "
                             "barrier each, the papers' phase 2); 'product': as min-plus products with the closed pivot "
                             "tile by phase 3's kernel; 'auto': product where the packed-key kernels and host or graph "
                             "launches run", choices=fastfw.PHASE2S)),
               negative_weights=True, memory=_fastfw_memory,
               memory_formula="2(w+4) n_pad^2 bytes (matrices and their pristine copies; 2w n_pad^2 without paths), "
                              "n_pad = n rounded up to the tile"),
    # --- paper 001: task-parallel N-SSSP APSP --------------------------------------------------------
    SolverSpec("nsssp_shared", "apsp", "gpu", "001", "N SSSPs per launch, interleaved per-source arrays, "
               "edges staged in shared memory; recording kernel on the inverted graph",
               "gpusp.solvers.nsssp:SharedSolver",
               params=NSSSP_PARAMS, memory=_nsssp, memory_formula=NSSSP_MEMORY),
    SolverSpec("nsssp_global", "apsp", "gpu", "001", "as nsssp_shared without shared memory",
               "gpusp.solvers.nsssp:GlobalSolver",
               params=NSSSP_PARAMS, memory=_nsssp, memory_formula=NSSSP_MEMORY),
    # --- beyond the papers: batched multi-source APSP for sparse graphs -------------------------------
    SolverSpec("multisource_fast", "apsp", "gpu", "-", "batched multi-source APSP for sparse graphs: S sources "
               "per batch stored vertex-major so one arc read serves 32 sources, frontier lists of (vertex, "
               "32-source word) items, every round and every batch in one cooperative kernel, trees grown over "
               "tight arcs, rows written through shared-memory transposes",
               "gpusp.solvers.multisource:MultiSourceSolver",
               params=MULTISOURCE_PARAMS,
               memory=_multisource,
               memory_formula="CSR + (w+8) n S bytes (distances, stamps, parents) + 4 n S/32 (item stamps) + "
                              "8 (n + m/split) S/32 (two round lists) + (w+4) n^2 result on the device if it fits, "
                              "else on the host"),
    SolverSpec("multisource_sssp", "sssp", "gpu", "-", "many-source SSSP: the sources of a job solved together "
               "by multisource_fast's kernel (S sources per batch stored vertex-major, one arc read serving 32 of "
               "them, every round of every batch in one cooperative kernel); per-source rows and the batch's time",
               "gpusp.solvers.multisource:MultiSourceSssp", params=MULTISOURCE_PARAMS + (MULTISOURCE_ORDER,),
               batched=True,
               memory=_multisource_sssp,
               memory_formula="CSR + (w+8) n S bytes (distances, stamps, parents) + 4 n S/32 (item stamps) + "
                              "8 (n + m/split) S/32 (two round lists; with items=pairs 20 n S for lists, far piles "
                              "and marks); the (w+4) n K result of K sources apart"),
    SolverSpec("phast_gpu", "sssp", "gpu", "-", "PHAST (Delling, Goldberg, Nowatzyk and Werneck, IPDPS'11): a "
               "contraction hierarchy built once on the host (its time and size reported apart), then per source an "
               "upward search and one downward sweep over the vertices level by level in a cooperative kernel, "
               "the sources of a job swept together (vertex-major distances, as GPHAST)",
               "gpusp.solvers.phast:PhastSolver", batched=True,
               params=(Param("batch", 0, "sources per batch S, swept together (0: the smallest power of two >= the "
                             f"job's K sources, at most {rules.PHAST_BATCH_MAX}, halved while (w+8) n S bytes exceed "
                             f"{rules.PHAST_BATCH_BYTES / 2**30:g} GiB)",
                             choices=(0,) + tuple(2**i for i in range(13))),
                       BLOCK,
                       Param("grid", 0, f"blocks of the cooperative kernel (0: {rules.PHAST_BLOCKS_PER_SM} per "
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
                             f"mean out-degree <= {rules.ROAD_MEAN_DEGREE} and none over {rules.ROAD_MAX_DEGREE}, else "
                             f"{rules.CORE_DEGREE})", minimum=-1),
                       Param("threads", 0, "host threads of the upward searches, a chunk of the sources each (0: "
                             "every core)", minimum=0)),
               memory=lambda n, m, params, itemsize: (
                   (4 + itemsize) * 4 * m + 24 * n + (params["batch"] or max(1, min(rules.PHAST_BATCH_MAX,
                                                  rules.PHAST_BATCH_BYTES // max(1, (itemsize + 8) * n))))
                   * (itemsize + 8) * n),
               memory_formula="hierarchy (4+w)(m_up + m_down) + 4 n (about 3 m arcs counted) + the original in-arcs "
                              "(4+w) m + (w+8) n S (distances, parents, round marks of a batch); the (w+4) n K result "
                              "of K sources apart"),
    # --- paper 004: min-plus squaring and BF from every source ---------------------------------------
    SolverSpec("minplus_naive", "apsp", "gpu", "004", "ceil(log2 n) min-plus squarings, one thread per "
               "entry, early stop when nothing changes", "gpusp.solvers.minplus:NaiveSolver",
               params=(TRANSPOSE, LAUNCHER),
               negative_weights=True, memory=lambda n, m, p, w: (2 * w + 8 + w * p["transpose"]) * n * n,
               memory_formula="(2w+8) n^2 bytes, (3w+8) n^2 with transpose"),
    SolverSpec("minplus_tiled", "apsp", "gpu", "004", "min-plus squaring with 32 x 32 shared-memory tiles",
               "gpusp.solvers.minplus:TiledSolver",
               params=(Param("tile", 32, "tile side", choices=(4, 8, 16, 32)),
                       TRANSPOSE, LAUNCHER),
               negative_weights=True, memory=lambda n, m, p, w: (2 * w + 8 + w * p["transpose"]) * n * n,
               memory_formula="(2w+8) n^2 bytes, (3w+8) n^2 with transpose"),
    SolverSpec("bellmanford_allsources", "apsp", "gpu", "004", "an SSSP solver of the Bellman-Ford "
               "families run from every source", "gpusp.solvers.allsources:AllSourcesSolver",
               params=(Param("sssp", "edgebf_coo", "the SSSP solver run per source",
                             choices=("bellmanford_naive", "bellmanford_stride", "bellmanford_flag",
                                      "edgebf_coo", "vertexbf_pull", "vertexbf_push")),
                       BLOCK,
                       Param("streams", 1, "sources in flight at once, each on a CUDA stream of its own (paper 004 "
                             "Section V.B; its dynamic-parallelism version launches from the device, which Numba "
                             "cannot compile); streams > 1 takes an SSSP solver of the edgebf family (edgebf_coo, "
                             "vertexbf_pull, vertexbf_push): bellmanford_* launch on the default stream",
                             minimum=1, maximum=32),
                       LAUNCHER),
               negative_weights=True, memory=lambda n, m, p, w: _csr(n, m, p, w) + p["streams"] * (2 * w + 16) * n,
               memory_formula="CSR + streams (2w+16) n bytes on the device + (w+4) n^2 bytes on the host"),
)

REGISTRY: dict[str, SolverSpec] = {s.name: s for s in SPECS}


def get(name: str) -> SolverSpec:
    """The spec of a solver, or SolverError listing the close names."""
    try:
        return REGISTRY[name]
    except KeyError:
        near = [n for n in REGISTRY if n.split("_")[0] == name.split("_")[0]] or sorted(REGISTRY)
        raise SolverError(f"unknown solver {name!r}; known: {', '.join(near)}") from None


def list_solvers(problem: str | None = None, device: str | None = None) -> list[str]:
    """Solver names, optionally only those for one problem ('sssp'/'apsp') or device ('gpu'/'cpu')."""
    if problem is not None and problem not in PROBLEMS:
        raise SolverError(f"problem must be one of {PROBLEMS}, not {problem!r}")
    return [s.name for s in SPECS if (problem is None or s.problem == problem)
            and (device is None or s.device == device)]
