"""Exceptions raised by gpusp, each naming what went wrong and where."""

from __future__ import annotations


class GpuspError(Exception):
    """Base class of every error gpusp raises on purpose (the CLI prints it in one line)."""


class GraphFormatError(GpuspError, ValueError):
    """A graph file could not be parsed: carries the file, the 1-based line and the problem."""

    def __init__(self, path, line: int | None, problem: str):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class WeightOverflowError(GpuspError, OverflowError):
    """Path lengths of a graph could exceed what int64 distances can hold."""


class NegativeCycleError(GpuspError):
    """A negative-weight cycle is reachable from the source, so shortest paths are undefined; ``cycle`` holds its
    vertices in arc order where the solver names them."""

    def __init__(self, message: str = "negative-weight cycle reachable from the source", vertex: int | None = None,
                 cycle: tuple[int, ...] = ()):
        self.vertex = vertex
        self.cycle = tuple(cycle)
        super().__init__(message if vertex is None else f"{message} (vertex {vertex} lies on or after it)")


class SolverError(GpuspError, ValueError):
    """A solver was asked for something it cannot do (unknown name, bad parameter, unsupported input)."""


class DownloadError(GpuspError):
    """A dataset could not be fetched or did not verify."""


class SolverUnavailable(SolverError):
    """A solver cannot run here or on this input (no C++ compiler, int64 distances, ...).

    ``gpusp solve --record`` records the run as skipped with this reason, so a workflow job still
    finishes and the reason shows in the summary and the report.
    """


class BuildError(GpuspError):
    """A peer baseline failed to build although its tools are present (names the command and log)."""
