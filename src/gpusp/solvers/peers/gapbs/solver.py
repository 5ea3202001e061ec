"""``gapbs_sssp``: the GAP Benchmark Suite's ``sssp`` binary (OpenMP delta-stepping) run as an external CPU peer on
our graph made simple (DIMACS ``.gr`` converted to GAPBS's ``.wsg``); the sample is GAPBS's own time of its second
trial in a process, validated by its own verifier; a source whose distances could overflow GAPBS's int32 is refused.
Design: docs/peers.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .. import build as peers
from ....atomic import atomic_open, atomic_path
from ....errors import SolverError, SolverUnavailable
from ....data.graph import Graph
from ...common.base import Solver

PEER = "gapbs"
_GRAPH = re.compile(r"^Graph has (\d+) nodes and (\d+) directed edges", re.MULTILINE)
_TRIAL = re.compile(r"^Trial Time:\s+([0-9.]+)\s*$", re.MULTILINE)
_VERDICT = re.compile(r"^Verification:\s+(PASS|FAIL)\s*$", re.MULTILINE)
_REACHED = re.compile(r"^SSSP Tree reaches (\d+) nodes", re.MULTILINE)
_MISMATCH = re.compile(r"^(\d+): (-?\d+) != (-?\d+)$", re.MULTILINE)
MAX_MISMATCHES = 10
PROCESS_TRIALS = 2  # GAPBS trials per process: the first warms the thread pool, the last is the sample


GAPBS_INF = 2**30 - 1  # GAPBS's infinite distance for its int32 WeightT


def refusal(graph: Graph) -> str | None:
    """Why GAPBS cannot take ``graph`` (negative weights, weights beyond int32, no arc), or None."""
    if graph.has_negative_weights:
        return "gapbs_sssp does not accept negative weights (delta-stepping)"
    if graph.m and int(graph.weights.max()) >= GAPBS_INF:
        return f"gapbs_sssp needs arc weights below 2^30 - 1 (GAPBS int32 WeightT); {graph.name} has larger"
    src, dst, _ = graph.coo()
    if not np.any(src != dst):
        return f"gapbs_sssp needs at least one arc that is not a self-loop ({graph.name} has none)"
    return None


def hop_eccentricity(graph: Graph, source: int) -> int:
    """Hops from ``source`` to the farthest vertex it reaches (level-synchronous BFS over the CSR)."""
    seen = np.zeros(graph.n, dtype=bool)
    seen[source] = True
    frontier, depth = np.array([source]), 0
    while True:
        starts, counts = graph.indptr[frontier], np.diff(graph.indptr)[frontier]
        arcs = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        reached = np.unique(graph.indices[arcs])
        reached = reached[~seen[reached]]
        if not len(reached):
            return depth
        seen[reached] = True
        frontier, depth = reached, depth + 1


def source_refusal(graph: Graph, source: int, delta: int) -> str | None:
    """Why GAPBS's int32 distances could overflow from ``source`` (the hop eccentricity times the heaviest arc, plus
    a bucket and an arc, reaches 2^30 - 1; docs/peers.md), or None."""
    if graph.dtype == np.int32:  # every simple path is below 2^30 - 1
        return None
    w_max = int(graph.weights.max())
    bound = hop_eccentricity(graph, source) * w_max + delta + w_max
    if bound >= GAPBS_INF:
        return (f"gapbs_sssp needs int32 distances (GAPBS WeightT, below 2^30 - 1); from source {source} of "
                f"{graph.name} they are bounded only by {bound}")
    return None


def write_gr(graph: Graph, path) -> Path:
    """Write the simple graph as DIMACS ``.gr`` (1-based) atomically; keep every vertex in GAPBS's n."""
    g = graph.simple()
    src, dst, w = g.coo()
    rows = np.column_stack([src.astype(np.int64) + 1, dst.astype(np.int64) + 1, w.astype(np.int64)])
    if g.n and max(int(src.max()), int(dst.max())) < g.n - 1:
        rows = np.vstack([rows, [[g.n, g.n, 0]]])  # GAPBS drops the self-loop but counts the vertex
    with atomic_open(path) as fh:
        fh.write(f"c gpusp {graph.name} (simple: no self-loops, lightest of parallel arcs)\n")
        fh.write(f"p sp {g.n} {len(rows)}\n")
        np.savetxt(fh, rows, fmt="a %d %d %d")
    return Path(path)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, e.g. a SLURM allocation)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _run(cmd, env=None) -> str:
    """Run a GAPBS binary; its stdout, or SolverError with the command and the output's tail."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise SolverError(f"`{' '.join(map(str, cmd))}` exited {proc.returncode}: {' | '.join(tail)}")
    return proc.stdout


def parse_output(text: str, n: int, trials: int = PROCESS_TRIALS) -> dict:
    """Counters from one ``sssp -n TRIALS -v -a`` run: the last trial's time, the verdict of every
    trial, the first mismatches, the vertices reached."""
    graph, times, verdicts = _GRAPH.search(text), _TRIAL.findall(text), _VERDICT.findall(text)
    if graph is None or len(times) != trials or len(verdicts) != trials:
        raise SolverError(f"gapbs sssp output not understood (expected {trials} 'Trial Time' and "
                          f"'Verification' lines): {text[-500:]!r}")
    if int(graph.group(1)) != n:
        raise SolverError(f"gapbs loaded {graph.group(1)} vertices, the graph has {n}")
    reached = _REACHED.search(text)
    mismatches = [f"dist[{v}] = {got}, gapbs verifier {want}" for v, got, want in _MISMATCH.findall(text)]
    return {"peer_trial_ms": float(times[-1]) * 1e3, "cold_trial_ms": float(times[0]) * 1e3,
            "peer_verified": all(v == "PASS" for v in verdicts), "peer_mismatches": mismatches[:MAX_MISMATCHES],
            "arcs": int(graph.group(2)), "reachable": int(reached.group(1)) if reached else None}


class GapbsSolver(Solver):
    """Drives the GAPBS ``sssp`` binary (docs/peers.md); a peer: it times itself."""

    device = "cpu"

    def __init__(self, graph: Graph, *, threads: int, delta: int):
        super().__init__(graph, threads=threads, delta=delta)
        reason = refusal(graph)
        if reason:
            raise SolverUnavailable(reason)
        self.build = peers.locate(PEER)
        self.sssp = peers.binary(self.build, "sssp")
        self.threads = threads or available_cores()
        self.delta = delta or graph.default_delta()
        self._tmp = tempfile.TemporaryDirectory(prefix="gpusp-gapbs-")
        self.input: Path | None = None
        self.checked: set[int] = set()  # sources whose distances fit GAPBS's int32

    def upload(self):
        """Write the graph as .gr and convert it to GAPBS's serialized .wsg (both atomically)."""
        folder = Path(self._tmp.name)
        gr = write_gr(self.graph, folder / "graph.gr")
        wsg = folder / "graph.wsg"
        with atomic_path(wsg, suffix=".wsg") as tmp:  # GAPBS picks the format by the suffix
            _run([peers.binary(self.build, "converter"), "-f", gr, "-w", "-b", tmp])
        self.input = wsg

    def run(self, source):
        """One GAPBS trial from ``source``: its own trial time, its verifier's verdict, the wall time."""
        if int(source) not in self.checked:
            reason = source_refusal(self.graph, int(source), self.delta)
            if reason:
                raise SolverUnavailable(reason)
            self.checked.add(int(source))
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads)}
        cmd = [self.sssp, "-f", self.input, "-r", int(source), "-n", PROCESS_TRIALS, "-d", self.delta, "-v", "-a"]
        counters = parse_output(_run(cmd, env), self.graph.n)
        counters.update(threads=self.threads, delta=self.delta, gapbs_commit=self.build["commit"])
        return counters

    def download(self):
        """GAPBS prints no distances: there is no answer to hand back (validation: its verifier)."""
        return None, None
