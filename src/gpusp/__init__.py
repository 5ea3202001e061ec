"""gpusp: GPU shortest-path solvers (Numba CUDA) and the tools to benchmark them.

Public API (kept stable; tools and tests depend on it):
``read_graph``, ``write_graph``, ``Graph``, ``list_solvers``, ``solver_info``, ``solve``, ``path``,
``Result``.
"""

from .api import Result, path, solve
from .errors import GpuspError, GraphFormatError, NegativeCycleError, SolverError
from .graph import Graph
from .registry import list_solvers

__version__ = "0.1.0"


def solver_info(name: str) -> dict:
    """Parameters, allowed values, constraints and paper of a registered solver."""
    from .registry import get

    return get(name).info()


def read_graph(path, **options) -> Graph:
    """Read a graph file; the format comes from the extension or ``format=`` (see gpusp.formats)."""
    from .formats import read_graph as _read

    return _read(path, **options)


def write_graph(graph: Graph, path, **options) -> None:
    """Write a graph atomically; the format comes from the extension or ``format=``."""
    from .formats import write_graph as _write

    _write(graph, path, **options)


__all__ = ["Graph", "GpuspError", "GraphFormatError", "NegativeCycleError", "Result", "SolverError",
           "list_solvers", "path", "read_graph", "solve", "solver_info", "write_graph", "__version__"]
