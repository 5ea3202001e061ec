"""``gunrock_sssp``: Gunrock's frontier SSSP (advance with atomic minima, then filter) run as an external GPU peer
through gpusp's driver (``gunrock_sssp.cu``, built by :mod:`gpusp.solvers.peers.build`): the graph written in gpusp's
binary CSR, the driver serving runs over a pipe, each run timed by the driver with CUDA events, the distances read
back and checked against SciPy (no predecessors). Design: docs/peers.md.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from .... import device
from ....atomic import atomic_path
from .. import build as peers
from ..served import Served
from ....data.graph import Graph
from ....errors import GpuspError, SolverError, SolverUnavailable
from ...common.base import Solver

PEER = "gunrock"
TARGET = "gunrock_sssp"
CSR_MAGIC = b"GPUSPCSR"
DIST_MAGIC = b"GPUSPDST"
EXIT_NO_GPU = 3  # the driver's exit status when no GPU it can run on is usable
MAX_ARCS = 2**31 - 1  # Gunrock's advance indexes arcs with the driver's 32-bit edge_t


def refusal(graph: Graph) -> str | None:
    """Why gunrock_sssp cannot take ``graph`` (negative weights, too many arcs for the driver), or None."""
    if graph.has_negative_weights:
        return "gunrock_sssp does not accept negative weights (its frontier loop never ends on a negative cycle)"
    if graph.m > MAX_ARCS:
        return f"gunrock_sssp's driver indexes arcs with 32-bit integers; {graph.name} has {graph.m:,} arcs"
    return None


def gpu_refusal() -> str | None:
    """Why Gunrock's compiled CUDA code cannot run here (no GPU, or only the CUDA simulator), or None."""
    mode = device.mode()
    if mode == "sim":
        return ("gunrock_sssp runs Gunrock's compiled CUDA code on a GPU; the CUDA simulator "
                "(NUMBA_ENABLE_CUDASIM=1) cannot run it")
    if mode != "gpu":
        return "gunrock_sssp needs a CUDA GPU; none is usable here"
    return None


# --- gpusp's binary CSR and distance files (the driver's formats, little-endian) -----------------------------------
def write_csr(graph: Graph, path) -> Path:
    """Write ``graph`` exactly (every arc) as gpusp's binary CSR, atomically: ``GPUSPCSR``, then n, m and the
    weight itemsize as int64, the n + 1 offsets as int64, the m targets as int32, the m weights (int32 or int64)."""
    itemsize = graph.weights.dtype.itemsize
    with atomic_path(path, suffix=".csr") as tmp, open(tmp, "wb") as fh:
        fh.write(CSR_MAGIC)
        fh.write(np.array([graph.n, graph.m, itemsize], dtype="<i8").tobytes())
        fh.write(np.ascontiguousarray(graph.indptr, dtype="<i8").tobytes())
        fh.write(np.ascontiguousarray(graph.indices, dtype="<i4").tobytes())
        fh.write(np.ascontiguousarray(graph.weights, dtype=f"<i{itemsize}").tobytes())
    return Path(path)


def read_csr(path, name: str = "graph") -> Graph:
    """The graph in a binary CSR file of :func:`write_csr`; GpuspError naming the file when it is not one."""
    data = Path(path).read_bytes()
    if data[:8] != CSR_MAGIC or len(data) < 32:
        raise GpuspError(f"{path}: not a gpusp binary CSR (no GPUSPCSR header)")
    n, m, itemsize = (int(v) for v in np.frombuffer(data, dtype="<i8", count=3, offset=8))
    if n < 0 or m < 0 or itemsize not in (4, 8) or len(data) != 32 + 8 * (n + 1) + 4 * m + itemsize * m:
        raise GpuspError(f"{path}: {len(data)} bytes do not hold n = {n}, m = {m} and {itemsize}-byte weights")
    indptr = np.frombuffer(data, dtype="<i8", count=n + 1, offset=32)
    indices = np.frombuffer(data, dtype="<i4", count=m, offset=32 + 8 * (n + 1))
    weights = np.frombuffer(data, dtype=f"<i{itemsize}", count=m, offset=32 + 8 * (n + 1) + 4 * m)
    try:
        return Graph(n, indptr, indices, weights, name=name)
    except ValueError as exc:
        raise GpuspError(f"{path}: {exc}") from None


def read_distances(path, graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(sources, distances) of a distance file the driver wrote: ``GPUSPDST``, n and the itemsize as int64, then per
    source its id (int64) and n distances. Gunrock's infinity (the type's largest value) becomes ``graph.inf``;
    GpuspError naming the file when it is not a distance file of ``graph``."""
    data = Path(path).read_bytes()
    if data[:8] != DIST_MAGIC or len(data) < 24:
        raise GpuspError(f"{path}: not a gunrock_sssp distance file (no GPUSPDST header)")
    n, itemsize = (int(v) for v in np.frombuffer(data, dtype="<i8", count=2, offset=8))
    if n != graph.n or itemsize != graph.dtype.itemsize:
        raise GpuspError(f"{path}: distances of n = {n} in {itemsize}-byte integers; {graph.name} has n = "
                         f"{graph.n} and {graph.dtype} distances")
    record = 8 + n * itemsize
    if (len(data) - 24) % record:
        raise GpuspError(f"{path}: {len(data) - 24} bytes after the header are not whole records of {record} bytes")
    count = (len(data) - 24) // record
    rows = np.frombuffer(data, dtype=np.uint8, offset=24).reshape(count, record)
    sources = rows[:, :8].copy().view("<i8").ravel().astype(np.int64)
    dist = rows[:, 8:].copy().view(f"<i{itemsize}").astype(graph.dtype)
    dist[dist == np.iinfo(graph.dtype).max] = graph.inf
    return sources, dist


class GunrockSolver(Solver):
    """Drives gpusp's Gunrock driver over a pipe (docs/peers.md); a peer: it times itself."""

    device = "gpu"

    def __init__(self, graph: Graph, *, load_balance: str, uniquify: bool):
        super().__init__(graph, load_balance=load_balance, uniquify=uniquify)
        reason = refusal(graph)
        if reason:
            raise SolverUnavailable(reason)
        self.build = peers.locate(PEER)  # first: a build without nvcc says so, whatever the GPU
        reason = gpu_refusal()
        if reason:
            raise SolverUnavailable(reason)
        self.binary = peers.binary(self.build, TARGET)
        self._tmp = tempfile.TemporaryDirectory(prefix="gpusp-gunrock-")
        self.driver: Served | None = None
        self.ready: dict = {}

    def upload(self):
        """Write the binary CSR, start the driver on it and wait until the graph is on the GPU."""
        folder = Path(self._tmp.name)
        csr = write_csr(self.graph, folder / "graph.csr")
        cmd = [str(self.binary), str(csr), "--serve", "--load-balance", self.params["load_balance"],
               "--uniquify", "1" if self.params["uniquify"] else "0"]
        self.driver = Served(cmd, folder / "driver.stderr", f"gunrock_sssp's driver {self.binary}",
                             unavailable_status=EXIT_NO_GPU)
        self.ready = self.driver.ask(None)
        if self.ready.get("n") != self.graph.n or self.ready.get("m") != self.graph.m:
            raise SolverError(f"gunrock_sssp's driver read n = {self.ready.get('n')}, m = {self.ready.get('m')} from "
                              f"{csr}; the graph has n = {self.graph.n}, m = {self.graph.m}")

    def run(self, source):
        """One run from ``source``: the whole call's CUDA-event time, Gunrock's enact time, the iterations."""
        reply = self.driver.ask(f"run {int(source)}")
        return {"peer_trial_ms": reply["call_ms"], "gunrock_enact_ms": reply["enact_ms"], "host_ms": reply["host_ms"],
                "iterations": reply["iterations"], "peer_series": ["gunrock_enact_ms", "host_ms"],
                "load_balance": self.params["load_balance"], "uniquify": self.params["uniquify"],
                "gunrock_commit": self.build["commit"], "device_fix": self.build.get("device_fix"),
                "atomic_min_ok": self.ready.get("atomic_min_ok"), "driver_upload_ms": self.ready.get("upload_ms")}

    def download(self):
        """The last run's distances (Gunrock computes no predecessors: parent is None)."""
        path = Path(self._tmp.name) / "distances.bin"
        self.driver.ask(f"save {path}")
        _, dist = read_distances(path, self.graph)
        return dist[0], None
