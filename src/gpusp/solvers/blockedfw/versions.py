"""The eight versions of paper 002 as solver classes (``blockedfw_v10`` ... ``blockedfw_v41``).

:class:`_BlockedFW` holds what every version shares: the padded matrices on the device with pristine copies to
reset from, the hop tie-break, the negative-cycle check, the counters and the download. A version adds how it
launches the rounds: single blocks (1.0), full grids (1.1), rationalised grids (1.2 and, with shared memory, 2.0 /
2.1), pieces on four streams (3.0) or one CUDA graph of the pieces (4.0 / 4.1). Each version and the parameters
``paths``, ``launcher`` (1.0 ... 3.0) and ``capture`` (4.0 / 4.1): docs/solvers/blockedfw.md.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...errors import NegativeCycleError, SolverError
from ..common.base import Solver
from ..common.dense import (apsp_tight_parents, check_diagonal, hop_tiebreak, negative_diagonal, padded_matrices,
                            undo_tiebreak)
from ..common.graph import NativeGraph
from ..common.launch import TARGET, Launch, NativeRead, StreamEvent, capture_graph
from .globalmem import global_kernels
from .layout import LANES, adversarial_order, conflict_plan, dependency_dag, padded, piece_ranges, wire_dag
from .sharedmem import shared_kernels


class _BlockedFW(Solver):
    """Shared state of every version: padded matrices on the device, reset, check, download."""

    device = "gpu"
    version = "?"
    layout = None  # shared-memory layout {"transpose", "pad"}; None: conflict_plan(B); tests may force one

    def __init__(self, graph, *, block_size: int, paths: bool, **variant):
        """``variant``: ``launcher`` (1.0 ... 3.0) or ``capture`` (4.0 / 4.1), as the registry declares them."""
        super().__init__(graph, block_size=block_size, paths=paths, **variant)
        self.paths = bool(paths)
        self.B = int(block_size)
        self.n = graph.n
        self.r = -(-self.n // self.B)
        self.n_pad = padded(self.n, self.B)
        self.tie = hop_tiebreak(graph)  # w' = w (n + 1) + 1 when a zero-weight cycle can exist
        self.scale = self.tie.scale
        self.dtype = self.tie.dtype
        self.dtype_name = self.dtype.name
        self.inf = self.tie.inf
        self.launches = 0
        self.d = self.p = self.d0 = self.p0 = self.flag = None

    def upload(self):
        if self.n == 0:
            return
        d0, p0 = padded_matrices(self.graph, self.n_pad, self.tie)
        self.d0 = cuda.to_device(d0)
        self.d = cuda.device_array_like(d0)
        if self.paths:
            self.p0 = cuda.to_device(p0)
            self.p = cuda.device_array_like(p0)
        else:  # a placeholder argument: kernels built without paths never touch it
            self.p = cuda.device_array((1, 1), dtype=np.int32)
        self.flag = cuda.device_array(1, dtype=np.int32)
        self.read_flag = NativeRead(self.flag, native=self.native)
        self.B2 = (self.B, self.B)
        self.check_stream = 0
        self.prepare()
        self.l_check = Launch(negative_diagonal, 1, TARGET.threads(256, 32), self.check_stream, native=self.native)

    def prepare(self):
        """Version-specific set-up after the arrays exist (configured launchers, streams, events)."""

    def shared(self) -> dict:
        """The shared-memory kernels for this B, dtype and layout."""
        lay = self.layout or conflict_plan(self.B)
        return shared_kernels(self.B, self.dtype_name, lay["transpose"], lay["pad"], self.paths)

    def global_kernels(self) -> dict:
        """The global-memory kernels for this B, dtype and paths."""
        return global_kernels(self.B, self.dtype_name, self.paths)

    def launch(self, kernel, griddim, stream=0) -> Launch:
        """``kernel`` configured on ``griddim`` blocks of B x B threads, launched as ``launcher`` says."""
        return Launch(kernel, griddim, self.B2, stream, native=self.native)

    def reset(self, stream=0):
        self.d.copy_to_device(self.d0, stream=stream)
        if self.paths:
            self.p.copy_to_device(self.p0, stream=stream)

    def check(self, stream=0):
        """The negative-diagonal check on ``stream``: the configured launch on the check stream, else (a graph
        builder under capture) Numba's."""
        if stream is self.check_stream:
            self.l_check(self.d, self.n, self.flag)
        else:
            check_diagonal(self.d, self.n, self.flag, stream)

    def finish(self):
        """Read the check's flag (a sync on the legacy default stream, which waits for every stream's work) and
        raise on a negative cycle."""
        v = int(self.read_flag()[0])
        if v < self.n:
            raise NegativeCycleError("negative-weight cycle: a diagonal entry of the distance matrix is negative",
                                     vertex=v)

    def counters(self, **extra):
        out = {"iterations": self.r, "launches": self.launches, "relaxations": self.n_pad ** 3,
               "hop_tiebreak": bool(self.scale), "matrix_dtype": self.dtype_name, "paths": self.paths}
        out.update(extra)
        return out

    def run(self, source=None):
        if self.n == 0:
            self.launches = 0
            return self.counters()
        self.reset()
        self.launches = self.rounds() + 1
        self.check()
        self.finish()
        return self.counters()

    def rounds(self) -> int:
        raise NotImplementedError

    def download(self):
        n = self.n
        if n == 0:
            return np.zeros((0, 0), dtype=self.dtype), np.zeros((0, 0), dtype=np.int32)
        raw = self.d.copy_to_host()[:n, :n]
        dist = undo_tiebreak(raw, self.tie, self.graph)
        if self.paths:
            return dist, np.ascontiguousarray(self.p.copy_to_host()[:n, :n])
        # nothing recorded on the device: parents from tight arcs on the host (untimed), for validation
        return dist, apsp_tight_parents(self.graph, raw, self.inf, self.scale)


class V10Solver(_BlockedFW):
    """1.0: every block of every phase is its own single-block launch (r^2 launches per round)."""

    version = "1.0"

    def prepare(self):
        self.k_block = self.launch(self.global_kernels()["block"], 1)

    def rounds(self):
        d, p, r, k = self.d, self.p, self.r, self.k_block
        for t in range(r):
            k(d, p, t, t, t)
            for J in range(r):
                if J != t:
                    k(d, p, t, t, J)
            for I in range(r):
                if I != t:
                    k(d, p, t, I, t)
            for I in range(r):
                if I == t:
                    continue
                for J in range(r):
                    if J != t:
                        k(d, p, t, I, J)
        return r ** 3


class V11Solver(_BlockedFW):
    """1.1: one kernel per phase, each over the full r x r grid (blocks outside the phase return)."""

    version = "1.1"

    def prepare(self):
        ks = self.global_kernels()
        grid = (self.r, self.r)
        self.k = [self.launch(ks[name], grid) for name in ("full1", "full2", "full3")]

    def rounds(self):
        d, p = self.d, self.p
        k1, k2, k3 = self.k
        for t in range(self.r):
            k1(d, p, t)
            k2(d, p, t)
            k3(d, p, t)
        return 3 * self.r


class _Rational(_BlockedFW):
    """Grids of 1, 2(r-1) and (r-1)^2 blocks (versions 1.2, 2.0, 2.1)."""

    def kernels(self) -> tuple:
        raise NotImplementedError

    def prepare(self):
        k1, k2, k3 = self.kernels()
        r = self.r
        self.k1 = self.launch(k1, 1)
        self.k2 = self.launch(k2, max(1, 2 * (r - 1)))
        self.k3 = self.launch(k3, (max(1, r - 1), max(1, r - 1)))

    def rounds(self):
        d, p, r = self.d, self.p, self.r
        for t in range(r):
            self.k1(d, p, t)
            if r > 1:
                self.k2(d, p, t, r)
                self.k3(d, p, t)
        return r if r == 1 else 3 * r


class V12Solver(_Rational):
    """1.2: rationalised grids, global memory."""

    version = "1.2"

    def kernels(self):
        ks = self.global_kernels()
        return ks["rat1"], ks["rat2"], ks["rat3"]


class V20Solver(_Rational):
    """2.0: v12 with the blocks each phase reads staged in shared memory."""

    version = "2.0"
    layout = {"transpose": False, "pad": False}

    def kernels(self):
        ks = self.shared()
        return ks["p1"], ks["p2"], ks["p3"]


class V21Solver(V20Solver):
    """2.1: v20 with transposition / padding where the paper's lcm rule predicts bank conflicts."""

    version = "2.1"
    layout = None


class V30Solver(_BlockedFW):
    """3.0: v21's kernels, phase 2 in four pieces and phase 3 in four quadrants on four streams."""

    version = "3.0"
    relaxed = False

    def prepare(self):
        self.ks = self.shared()
        self.dag = dependency_dag(self.r, relaxed=self.relaxed)
        self.streams = [cuda.stream() for _ in range(4)]
        self.events = [StreamEvent(native=self.native) for _ in self.dag]
        self.lanes = [LANES.get(kind, 0) for _, kind, _, _ in self.dag]
        self.kernel_nodes = sum(1 for _, kind, _, _ in self.dag if kind not in ("start", "end"))
        self.plan = None
        self.check_stream = self.streams[LANES.get("end", 0)]

    def piece_call(self, kind, t, stream):
        """(configured kernel, args) of one piece of round t on ``stream`` (numba stream, 0 or a builder)."""
        (i0, i1), (j0, j1) = piece_ranges(kind, t, self.r)
        d, p, ks = self.d, self.p, self.ks
        if kind == "p1":
            return self.launch(ks["p1"], 1, stream), (d, p, t)
        if kind in ("up", "down"):
            return self.launch(ks["col"], i1 - i0, stream), (d, p, t, i0)
        if kind in ("left", "right"):
            return self.launch(ks["row"], j1 - j0, stream), (d, p, t, j0)
        return self.launch(ks["quad"], (j1 - j0, i1 - i0), stream), (d, p, t, i0, j0)

    def launch_piece(self, kind, t, stream):
        """Launch one piece of round t on ``stream``."""
        kern, args = self.piece_call(kind, t, stream)
        kern(*args)

    def stream_plan(self):
        """Per node: (stream, event waits to issue first, kernel or None, args, event recording to issue after or
        None).

        Built once: configuring a launch (and converting its stream) costs more host time than the
        launch itself, and v30 issues up to 9r of them a run."""
        s, ev, lanes = self.streams, self.events, self.lanes
        needed = [False] * len(self.dag)
        for v, (_, _, _, deps) in enumerate(self.dag):
            for u in deps:
                if lanes[u] != lanes[v]:
                    needed[u] = True
        plan = []
        for v, (_, kind, t, deps) in enumerate(self.dag):
            st = s[lanes[v]]
            waits = [ev[u].waiter(st) for u in deps if lanes[u] != lanes[v]]
            if kind in ("start", "end"):
                kern, args = None, kind
            else:
                kern, args = self.piece_call(kind, t, st)
            plan.append((st, waits, kern, args, ev[v].recorder(st) if needed[v] else None))
        return plan

    def run_streams(self):
        """Issue the DAG in program order on four streams; events carry the cross-stream dependencies."""
        if self.plan is None:
            self.plan = self.stream_plan()
        for st, waits, kern, args, record in self.plan:
            for wait in waits:
                wait()
            if kern is not None:
                kern(*args)
            elif args == "start":
                self.reset(st)
            else:
                self.check(st)
            if record is not None:
                record()
        self.finish()

    def run(self, source=None):
        if self.n == 0:
            self.launches = 0
            return self.counters()
        self.run_streams()
        self.launches = self.kernel_nodes + 1
        return self.counters()


class _GraphVersion(V30Solver):
    """4.x: the DAG as one CUDA graph, built once and replayed (``capture='once'``), or built, instantiated, launched
    and released inside every run (``capture='per-run'``, as the thesis). ``launcher='native'`` builds it node by node
    through the driver's graph API, as the thesis's C code does; 'numba' records Numba's launches into a cuda.core
    GraphBuilder."""

    def __init__(self, graph, **params):
        super().__init__(graph, **params)
        self.per_run = params["capture"] == "per-run"

    def prepare(self):
        super().prepare()
        self.graph_exec = None
        self.core_stream = None
        self.compiled = False

    def run(self, source=None):
        if self.n == 0:
            self.launches = 0
            return self.counters(graph=False)
        self.launches = self.kernel_nodes + 1
        if not TARGET.gpu:  # no CUDA graphs: both modes launch the pieces one by one
            self.run_order(adversarial_order(self.dag))
            return self.counters(graph=False, captured=0)
        plain = 0
        if not self.compiled:
            # Compiles every kernel before the first build. The graph below then recomputes from its reset node, so
            # the first build's parameter blocks and the graph's first launch (the driver's upload) fall in this run,
            # the harness's warm-up, not in the first timed one.
            self.compiled = True
            self.run_streams()
            plain = self.launches
        fresh = self.per_run or self.graph_exec is None  # 'once' whose first run stopped at a negative cycle
        built = self.capture() if fresh else self.graph_exec
        try:
            built.launch(0 if self.native else self.core_stream)
            self.finish()
        finally:
            if self.per_run:
                built.close()  # after the finishing sync, or an error: the graph is not launched again
            else:
                self.graph_exec = built
        return self.counters(graph=True, captured=int(fresh), host_launches=1 + plain)

    def run_order(self, order):
        """Launch the DAG's nodes one by one in ``order`` on the default stream (simulator fallback)."""
        for v in order:
            self.launch_node(v, 0)
        self.finish()

    def launch_node(self, v, stream):
        """Issue node v of the DAG on ``stream`` (0, or a GraphBuilder under capture)."""
        _, kind, t, _ = self.dag[v]
        if kind == "start":  # under capture: two memcpy nodes on the builder's stream
            self.reset(stream if isinstance(stream, int) else cuda.external_stream(int(stream.stream.handle)))
        elif kind == "end":
            self.check(stream)
        else:
            self.launch_piece(kind, t, stream)

    def capture(self):
        """The executable graph: every DAG node after exactly its dependencies (``launcher`` says how it is built)."""
        return self.build_nodes() if self.native else self.record()

    def build_nodes(self):
        """Nodes and edges through the driver: the reset's memcpy nodes, a kernel node per piece with the parameters
        of its native launch in the stream plan (run once before, which compiled it), the check's kernel node."""
        graph = NativeGraph()
        try:
            nodes = []  # per DAG node, the graph nodes its users wait for
            for v, (_, kind, _, deps) in enumerate(self.dag):
                after = [node for u in deps for node in nodes[u]]
                if kind == "start":
                    nodes.append([graph.copy(self.d, self.d0, after)]
                                 + ([graph.copy(self.p, self.p0, after)] if self.paths else []))
                elif kind == "end":
                    nodes.append([graph.kernel(self.l_check, (self.d, self.n, self.flag), after)])
                else:
                    kern, args = self.plan[v][2:4]
                    nodes.append([graph.kernel(kern, args, after)])
            return graph.instantiate()
        except SolverError as exc:
            raise SolverError(f"{type(self).__name__}: building the CUDA graph failed: {exc}") from exc
        finally:
            graph.close()

    def record(self):
        """Record the graph: one branch per dependency edge via GraphBuilder.split / join."""
        try:
            from cuda.core.graph import GraphBuilder
        except ImportError:  # cuda.core < 1.0
            from cuda.core import GraphBuilder

        def issue(gb):
            if wire_dag(self.dag, gb, GraphBuilder.join, self.launch_node) is not gb:
                raise SolverError("the primary builder did not reach the last node")

        try:
            graph, self.core_stream = capture_graph(issue)
        except Exception as exc:
            raise SolverError(f"{type(self).__name__}: CUDA graph capture failed: {exc}") from exc
        return graph


class V40Solver(_GraphVersion):
    """4.0: the v30 pieces and dependencies (round barrier) as one CUDA graph."""

    version = "4.0"
    relaxed = False


class V41Solver(_GraphVersion):
    """4.1: the CUDA graph with the paper's relaxed inter-round dependencies."""

    version = "4.1"
    relaxed = True

