"""Run a registered solver with honest timing and return its answer (:func:`solve`, :func:`solve_many`, :func:`path`):
upload timed apart, warm-ups (the first holds the JIT), CUDA events around each trial's device work, download timed
apart, every sample kept; end-to-end runs, peers that time themselves and batched solvers as docs/timing.md says.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np

from ..solvers import registry
from ..solvers.common.base import counters_of
from ..device import DeviceTimer, require_cuda
from ..device import mode as device_mode
from ..errors import SolverError, SolverUnavailable
from ..data.graph import Graph


@dataclass
class Timings:
    """Every sample in milliseconds, with median, quartiles and the separately measured costs."""

    samples_ms: list
    warmup_ms: list
    compile_s: float
    h2d_ms: float
    d2h_ms: float
    clock: str
    end_to_end_ms: list = field(default_factory=list)  # host clock around upload + run + download (see above)
    end_to_end_clock: str | None = None
    end_to_end_h2d_ms: list = field(default_factory=list)  # each end-to-end run's upload, on the trials' clock
    batch_sources: int = 1  # > 1: the samples are this source's share of a batch's samples (see above)
    batch_ms: list = field(default_factory=list)  # the whole batch's samples (the same for each of its sources)
    median_ms: float = field(init=False)
    q1_ms: float = field(init=False)
    q3_ms: float = field(init=False)
    iqr_ms: float = field(init=False)
    min_ms: float = field(init=False)

    def __post_init__(self):
        s = np.asarray(self.samples_ms, dtype=float)
        self.q1_ms, self.median_ms, self.q3_ms = (float(x) for x in np.percentile(s, [25, 50, 75]))
        self.iqr_ms = self.q3_ms - self.q1_ms
        self.min_ms = float(s.min())

    def to_dict(self) -> dict:
        return asdict(self)


PEER_TIME = "peer_trial_ms"  # counter of a peer's run(): the binary's own time of the trial
PEER_VERDICT = "peer_verified"  # counter of a peer's run(): its verifier's verdict (True / False), where it has one
PEER_SERIES = "peer_series"  # counter of a peer's run(): names of counters kept for every trial, not only the last


@dataclass
class Result:
    """A solver's answer: distances, parents, INF marker, timings and counters (dist and parent are None for a
    peer whose binary prints no distances, parent alone for one that computes no predecessors)."""

    solver: str
    problem: str
    params: dict
    source: int | None
    dist: np.ndarray | None
    parent: np.ndarray | None
    inf: int
    timings: Timings
    counters: dict

    @property
    def reachable(self) -> np.ndarray | None:
        return None if self.dist is None else self.dist != self.inf


def solve(graph: Graph, name, source: int | None = 0, *, trials: int = 1, warmup: int = 1, end_to_end: int = 0,
          **params) -> Result:
    """Run solver ``name`` (a registered name or its :class:`~gpusp.solvers.registry.SolverSpec`) on ``graph``
    (from ``source`` for SSSP) and return a :class:`Result`.

    Raises SolverError for an unknown solver, a bad parameter, a source out of range or a graph the
    solver cannot take (negative weights where they are not allowed), and NegativeCycleError when a
    negative cycle is reachable.
    """
    return next(iter(solve_many(graph, name, [source], trials=trials, warmup=warmup, end_to_end=end_to_end,
                                **params)))


def solve_many(graph: Graph, name, sources, *, trials: int = 1, warmup: int = 1, end_to_end: int = 0,
               on_run=None, **params):
    """Yield one :class:`Result` per source, uploading the graph and compiling once.

    ``name`` is a registered solver name or its spec. Warm-up runs happen before the first source only (they
    include JIT compilation); each source then gets ``trials`` timed runs, then ``end_to_end`` runs of a fresh
    solver timed from allocation to download (module docstring). APSP solvers take ``sources=[None]``.
    ``on_run(kind, k, seconds)``, where given, hears of each run as it ends ("warm-up" or "trial", its number from
    1, its time), so that a job cut short by a time limit has said how far it got.
    """
    report = on_run or (lambda kind, k, seconds: None)
    spec = name if isinstance(name, registry.SolverSpec) else registry.get(name)
    name = spec.name
    resolved = spec.resolve(params)
    reason = spec.why_not(graph.n, graph.m, negative=graph.has_negative_weights, itemsize=graph.dtype.itemsize,
                          params=resolved)
    if reason:  # a peer baseline that cannot take the input is skipped, not an error of the run
        raise (SolverUnavailable if spec.peer else SolverError)(reason)
    sources = list(sources)
    if not sources:
        raise SolverError("no sources given")
    if spec.problem == "sssp":
        for s in sources:
            if s is None or not 0 <= int(s) < graph.n:
                raise SolverError(f"source {s} out of range 0..{graph.n - 1}")
        sources = [int(s) for s in sources]
    else:
        sources = [None]
    if trials < 1 or warmup < 0 or end_to_end < 0:
        raise SolverError("trials must be >= 1, warmup >= 0 and end_to_end >= 0")
    if end_to_end and spec.peer:
        raise SolverError(f"{name} is a peer binary that times itself: it has no end-to-end runs")
    ours_on_gpu = spec.device == "gpu" and not spec.peer  # a GPU peer checks for its GPU itself and times itself
    if ours_on_gpu:
        require_cuda(name)
    solver = spec.load()(graph, **resolved)
    timer = DeviceTimer(on_device=ours_on_gpu)
    h2d_ms, _ = timer.time(solver.upload)
    if spec.batched and spec.problem == "sssp":
        yield from _solve_batch(spec, graph, solver, timer, np.array(sources, dtype=np.int64), trials, warmup,
                                end_to_end, resolved, h2d_ms, report)
        return
    warm_wall = []
    with numba_compile_clock() as jit_s:
        for k in range(warmup):
            t0 = time.perf_counter()
            ms, _ = _trial(timer, solver, sources[0], spec.peer)
            warm_wall.append(ms / 1e3 if spec.peer else time.perf_counter() - t0)
            report("warm-up", k + 1, warm_wall[-1])
    clock = f"peer:{spec.family}" if spec.peer else timer.clock
    for i, source in enumerate(sources):
        samples, per_trial = [], []
        for k in range(trials):
            ms, counters = _trial(timer, solver, source, spec.peer)
            samples.append(ms)
            per_trial.append(counters)
            report("trial", k + 1, ms / 1e3)
        counters = _peer_counters(per_trial) if spec.peer else per_trial[-1]
        d2h_ms, (dist, parent) = timer.time(solver.download)
        whole, uploads = _end_to_end_runs(spec, graph, resolved, source, end_to_end)
        median_s = float(np.median(samples)) / 1e3
        compile_s = 0.0
        if i == 0 and not spec.peer:  # the kernels' JIT in the first warm-up, the host's in the solver's build
            compile_s = _warmup_compile_s(spec, warm_wall, median_s, jit_s()) + host_compile_s(solver)
        timings = Timings(samples_ms=samples, warmup_ms=[w * 1e3 for w in warm_wall] if i == 0 else [],
                          compile_s=compile_s, h2d_ms=h2d_ms if i == 0 else 0.0, d2h_ms=d2h_ms, clock=clock,
                          end_to_end_ms=whole, end_to_end_clock=_host_clock(spec) if whole else None,
                          end_to_end_h2d_ms=uploads)
        yield Result(name, spec.problem, resolved, source, _host(dist), _host(parent), graph.inf, timings,
                     counters)


def _solve_batch(spec, graph: Graph, solver, timer, sources: np.ndarray, trials: int, warmup: int, end_to_end: int,
                 resolved: dict, h2d_ms: float, report):
    """The batch protocol (module docstring): every run takes all ``sources``; one Result per source, its row and
    its share of the batch's times."""
    k = len(sources)
    warm = []
    with numba_compile_clock() as jit_s:
        for j in range(warmup):
            t0 = time.perf_counter()
            _trial(timer, solver, sources, False)
            warm.append(time.perf_counter() - t0)
            report("warm-up", j + 1, warm[-1])
    batch, counters = [], {}
    for j in range(trials):
        ms, counters = _trial(timer, solver, sources, False)
        batch.append(ms)
        report("trial", j + 1, ms / 1e3)
    d2h_ms, (dist, parent) = timer.time(solver.download)
    dist, parent = _host(dist), _host(parent)
    if dist.shape != (k, graph.n) or (parent is not None and parent.shape != (k, graph.n)):
        raise SolverError(f"{spec.name}.download gave {dist.shape} rows for {k} sources of n = {graph.n}")
    whole, uploads = _end_to_end_runs(spec, graph, resolved, sources, end_to_end)
    compile_s = _warmup_compile_s(spec, warm, float(np.median(batch)) / 1e3, jit_s()) + host_compile_s(solver)
    counters = {**counters, "batch_sources": k}
    for i, source in enumerate(sources):
        first = i == 0
        timings = Timings(samples_ms=[ms / k for ms in batch], warmup_ms=[w * 1e3 for w in warm] if first else [],
                          compile_s=compile_s if first else 0.0, h2d_ms=h2d_ms if first else 0.0, d2h_ms=d2h_ms / k,
                          clock=timer.clock, end_to_end_ms=[ms / k for ms in whole],
                          end_to_end_clock=_host_clock(spec) if whole else None, batch_sources=k, batch_ms=batch,
                          end_to_end_h2d_ms=uploads if first else [])
        yield Result(spec.name, spec.problem, resolved, int(source), dist[i],
                     None if parent is None else parent[i], graph.inf, timings, dict(counters))


def _end_to_end_runs(spec, graph: Graph, resolved: dict, source, runs: int) -> tuple[list, list]:
    """``runs`` end-to-end runs: (their milliseconds, their uploads' milliseconds)."""
    out = [_end_to_end(spec, graph, resolved, source) for _ in range(runs)]
    return [whole for whole, _ in out], [upload for _, upload in out]


@contextmanager
def numba_compile_clock():
    """Yield a function giving the seconds Numba spent compiling on this thread inside the block: from the start of
    each outermost "numba:compile" event to its end (a function compiled inside another's compile counts once; a
    load from the on-disk cache is no compile; a validation compiling on another thread of the process is not
    this solve's)."""
    from numba.core import event

    class Clock(event.Listener):
        def __init__(self):
            self.thread, self.depth, self.since, self.seconds = threading.get_ident(), 0, 0.0, 0.0

        def on_start(self, ev):
            if threading.get_ident() == self.thread:
                self.depth += 1
                if self.depth == 1:
                    self.since = time.perf_counter()

        def on_end(self, ev):
            if threading.get_ident() == self.thread and self.depth:
                self.depth -= 1
                if self.depth == 0:
                    self.seconds += time.perf_counter() - self.since

    clock = Clock()
    with event.install_listener("numba:compile", clock):
        yield lambda: clock.seconds


def _warmup_compile_s(spec, warm_s: list, median_s: float, numba_s: float) -> float:
    """The warm-ups' JIT: for a CPU solver the seconds Numba reported compiling, since a host run's spread can
    exceed its compile; for a GPU solver the first warm-up's excess over the median trial, which also holds the
    first launch's module load and link that no compile event covers."""
    if spec.device == "cpu":
        return numba_s
    return max(0.0, warm_s[0] - median_s) if warm_s else 0.0


def host_compile_s(solver) -> float:
    """Seconds a solver's construction spent compiling its host functions (Numba's JIT of a preprocessing step,
    counter ``host_compile_s``), reported with the compile time rather than in the preprocessing."""
    return float(getattr(solver, "host_compile_s", 0.0))


def _end_to_end(spec, graph: Graph, resolved: dict, source) -> tuple[float, float]:
    """One end-to-end run of a fresh solver: milliseconds on the host clock from its upload to its download
    and a device synchronise (its counters are not read: a deferred read-back is no part of the solve), and its
    upload's milliseconds, between CUDA events on the default stream that nothing waits for inside the window
    (the host clock in the simulator and for CPU solvers), so that every end-to-end run is one more upload sample."""
    on_gpu = spec.device == "gpu" and device_mode() == "gpu"
    solver = spec.load()(graph, **resolved)
    if on_gpu:
        from numba import cuda

        cuda.current_context().deallocations.clear()  # the frees of earlier runs happen here, outside the window
        start, end = cuda.event(), cuda.event()
        start.record()
    t0 = time.perf_counter()
    solver.upload()
    t1 = time.perf_counter()
    if on_gpu:
        end.record()
    solver.run(source)
    solver.download()
    if on_gpu:
        cuda.synchronize()
    whole = (time.perf_counter() - t0) * 1e3
    return whole, float(cuda.event_elapsed_time(start, end)) if on_gpu else (t1 - t0) * 1e3


def _host_clock(spec) -> str:
    """The end-to-end samples' clock: the host's, around device work in the simulator where GPU solvers ran there."""
    return "wall-simulated" if spec.device == "gpu" and device_mode() == "sim" else "wall"


def _host(array):
    """A device or host array as a host ndarray; a matrix derived row by row when asked for (the parents of an
    APSP run without paths, :class:`~gpusp.solvers.common.dense.TightParents`) stays so: validation reads a few rows."""
    if array is None or callable(getattr(array, "rows", None)):
        return array
    return np.asarray(array)


def _trial(timer, solver, source, peer: bool):
    """One run: (sample in ms, counters). A peer's sample is its binary's own time; the wall clock
    around the call is kept as the counter ``wall_ms``."""
    ms, ran = timer.time(solver.run, source)
    counters = counters_of(ran)  # a deferred read-back happens here, after the trial's clock stopped
    if not peer:
        return ms, counters
    if PEER_TIME not in counters:
        raise SolverError(f"peer solver {type(solver).__name__}.run returned no {PEER_TIME}")
    counters["wall_ms"] = ms
    return float(counters.pop(PEER_TIME)), counters


def _peer_counters(per_trial: list[dict]) -> dict:
    """A source's counters from its peer trials: the last trial's, with every trial's wall time and series
    counters and, for a peer with a verifier, the verdict true only when every trial passed (the first failure's
    mismatches kept)."""
    out = dict(per_trial[-1])
    for key in ["wall_ms", *out.pop(PEER_SERIES, [])]:
        out[key] = [c[key] for c in per_trial]
    if PEER_VERDICT not in out:
        return out
    out[PEER_VERDICT] = all(bool(c[PEER_VERDICT]) for c in per_trial)
    failed = [c for c in per_trial if not c[PEER_VERDICT]]
    out["peer_mismatches"] = failed[0].get("peer_mismatches", []) if failed else []
    out["peer_trials_verified"] = len(per_trial)
    return out


def path(result: Result, target: int, source: int | None = None) -> list[int]:
    """Vertices of the shortest path to ``target`` (from ``source`` for APSP), [] when unreachable."""
    if result.problem == "apsp":
        if source is None:
            raise SolverError("APSP results need a source for path()")
        dist, parent = result.dist[source], result.parent[source]
        start = int(source)
    else:
        dist, parent, start = result.dist, result.parent, result.source
    target = int(target)
    if not 0 <= target < dist.size:
        raise SolverError(f"target {target} out of range 0..{dist.size - 1}")
    if dist[target] == result.inf:
        return []
    out = [target]
    while out[-1] != start:
        p = int(parent[out[-1]])
        if p < 0 or len(out) > dist.size:
            raise SolverError(f"parent chain from {target} does not reach the source {start}")
        out.append(p)
    return out[::-1]
