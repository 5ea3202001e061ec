"""gpusp: GPU shortest-path solvers (Numba CUDA) and the tools to benchmark them.

Public API (kept stable; tools and tests depend on it):
``read_graph``, ``write_graph``, ``Graph``, ``list_solvers``, ``solver_info``, ``solve``, ``path``,
``Result``.
"""

from .measure.harness import Result, path, solve
from .errors import GpuspError, GraphFormatError, NegativeCycleError, SolverError
from .data.graph import Graph
from .solvers.registry import list_solvers

from ._version import __version__


def solver_info(name: str) -> dict:
    """Parameters, allowed values, constraints and paper of a registered solver."""
    from .solvers.registry import get

    return get(name).info()


def read_graph(path, **options) -> Graph:
    """Read a graph file; the format comes from the extension or ``format=`` (see gpusp.data.formats)."""
    from .data.formats import read_graph as _read

    return _read(path, **options)


def write_graph(graph: Graph, path, **options) -> None:
    """Write a graph atomically; the format comes from the extension or ``format=``."""
    from .data.formats import write_graph as _write

    _write(graph, path, **options)


__all__ = ["Graph", "GpuspError", "GraphFormatError", "NegativeCycleError", "Result", "SolverError",
           "list_solvers", "path", "read_graph", "solve", "solver_info", "write_graph", "__version__"]
