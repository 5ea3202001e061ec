"""``gapbs_sssp``: the GAP Benchmark Suite's delta-stepping (OpenMP) run as an external CPU peer through gpusp's driver
``gapbs_sssp_many`` (GAPBS's own ``sssp.cc`` compiled into one process that loads the graph once and serves every
source of a job over a pipe): the graph is ours made simple, as GAPBS's serialized ``.wsg``; the sample is GAPBS's own
time of each trial; the distances come back to gpusp's checks, or GAPBS's verifier checks them (``check=verifier``);
a source whose answer GAPBS's int32 distances cannot hold is refused. Design: docs/peers.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .. import build as peers
from ..served import Served
from ....errors import GpuspError, SolverError, SolverUnavailable
from ....data.csrops import simple_and_sorted, symmetric
from ....data.formats import write_graph
from ....data.graph import Graph
from ...common.base import Solver

PEER = "gapbs"
TARGET = "gapbs_sssp_many"  # gpusp's driver in the GAPBS build (src/gpusp/solvers/peers/gapbs_sssp_many.cc)
GAPBS_INF = 2**30 - 1  # GAPBS's infinite distance for its int32 WeightT
_MISMATCH = re.compile(r"^(\d+): (-?\d+) != (-?\d+)$")


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


def answer_refusal(graph: Graph, source: int, largest: int, w_max: int) -> str | None:
    """Why GAPBS's int32 answer from ``source`` may leave out vertices (its largest distance ``largest`` plus the
    heaviest arc ``w_max`` reaches its infinity, 2^30 - 1: a farther vertex could not be held; docs/peers.md), or
    None: then every distance is exact and every vertex it left at infinity is unreachable."""
    if largest + w_max >= GAPBS_INF:
        return (f"gapbs_sssp needs int32 distances (GAPBS WeightT, below 2^30 - 1); from source {source} of "
                f"{graph.name} it reached distance {largest}, and one more arc of up to {w_max} may not fit")
    return None


def write_input(graph: Graph, folder) -> Path:
    """The file the driver loads: ``graph`` made simple (as GAPBS's builder makes every graph it reads) as GAPBS's
    serialized ``.wsg`` in ``folder``, written by gpusp (the bytes GAPBS's converter writes for the same graph):
    undirected when the graph is symmetric, which halves the file and spares the transpose."""
    simple = graph if simple_and_sorted(graph) else graph.simple()
    wsg = Path(folder) / "graph.wsg"
    write_graph(simple, wsg, undirected=simple.m % 2 == 0 and symmetric(simple))
    return wsg


def read_distances(path, graph: Graph) -> np.ndarray:
    """One source's distances as the driver saves them (n int32, GAPBS's infinity 2^30 - 1 where unreachable) in
    ``graph``'s dtype with ``graph.inf``; GpuspError naming the file when it does not hold n int32."""
    raw = np.fromfile(path, dtype="<i4")
    if raw.size != graph.n or Path(path).stat().st_size != 4 * graph.n:
        raise GpuspError(f"{path}: {Path(path).stat().st_size} bytes, not the {graph.n} int32 distances of "
                         f"{graph.name}")
    if graph.inf == GAPBS_INF:  # int32 graphs: gpusp's infinity is GAPBS's, the file is the answer as it is
        return raw.astype(graph.dtype, copy=False)
    dist = raw.astype(graph.dtype)
    dist[raw == GAPBS_INF] = graph.inf
    return dist


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, e.g. a SLURM allocation)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _run(cmd) -> str:
    """Run a GAPBS binary; its stdout, or SolverError with the command and the output's tail."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise SolverError(f"`{' '.join(map(str, cmd))}` exited {proc.returncode}: {' | '.join(tail)}")
    return proc.stdout


def mismatches(verdict: dict) -> list[str]:
    """The verifier's first wrong vertices of a ``verify`` answer, in gpusp's words, and how many more there were."""
    out = []
    for line in verdict["mismatches"]:
        found = _MISMATCH.match(line)
        out.append(f"dist[{found[1]}] = {found[2]}, gapbs verifier {found[3]}" if found else line)
    more = verdict["mismatch_count"] - len(out)
    return out + [f"and {more} more"] if more > 0 else out


class GapbsSolver(Solver):
    """Drives gpusp's GAPBS driver over a pipe (docs/peers.md); a peer: it times itself."""

    device = "cpu"

    def __init__(self, graph: Graph, *, threads: int, delta: int, check: str = "distances"):
        super().__init__(graph, threads=threads, delta=delta, check=check)
        reason = refusal(graph)
        if reason:
            raise SolverUnavailable(reason)
        self.build = peers.locate(PEER)
        self.binary = peers.binary(self.build, TARGET)
        self.threads = threads or available_cores()
        if delta > GAPBS_INF:
            raise SolverError(f"gapbs_sssp: delta {delta} is beyond GAPBS's int32 bucket width (at most 2^30 - 1)")
        self.delta = delta or min(graph.default_delta(), GAPBS_INF)  # wider: one bucket holds every distance anyway
        self.verifier = check == "verifier"
        self._tmp = tempfile.TemporaryDirectory(prefix="gpusp-gapbs-")
        self.driver: Served | None = None
        self.ready: dict = {}
        self.w_max = int(graph.weights.max())

    def upload(self):
        """Write the graph GAPBS reads, start the driver on it and wait until GAPBS has loaded it."""
        folder = Path(self._tmp.name)
        graph_file = write_input(self.graph, folder)
        cmd = [self.binary, graph_file, "--serve", "--delta", self.delta, "--threads", self.threads]
        self.driver = Served(cmd, folder / "driver.stderr", f"gapbs_sssp's driver {self.binary}")
        self.ready = self.driver.ask(None)
        if self.ready.get("n") != self.graph.n:
            raise SolverError(f"gapbs loaded {self.ready.get('n')} vertices from {graph_file}, the graph has "
                              f"{self.graph.n}")

    def run(self, source):
        """One GAPBS trial from ``source``: its own trial time and, with ``check=verifier``, its verifier's verdict
        (timed apart, ``verify_ms``)."""
        reply = self.driver.ask(f"run {int(source)}")
        counters = {"peer_trial_ms": reply["trial_ms"], "threads": self.threads, "delta": self.delta,
                    "arcs": self.ready["m"], "driver_load_ms": self.ready["load_ms"],
                    "gapbs_commit": self.build["commit"]}
        if self.verifier:
            verdict = self._checked(self.driver.ask("verify"))
            counters.update(peer_verified=verdict["verified"], peer_mismatches=mismatches(verdict),
                            verify_ms=verdict["verify_ms"], reachable=verdict["reached"], peer_series=["verify_ms"])
        return counters

    def download(self):
        """The last trial's distances (GAPBS computes no predecessors: parent is None); none with
        ``check=verifier``, whose verdict stands for them."""
        if self.verifier:
            return None, None
        path = Path(self._tmp.name) / "distances.int32"
        self._checked(self.driver.ask(f"save {path}"))
        return read_distances(path, self.graph), None

    def _checked(self, answer: dict) -> dict:
        """A ``verify`` or ``save`` answer, once its distances are known to hold GAPBS's whole answer
        (:func:`answer_refusal`; SolverUnavailable otherwise)."""
        reason = answer_refusal(self.graph, answer["source"], answer["max_distance"], self.w_max)
        if reason:
            raise SolverUnavailable(reason)
        return answer
