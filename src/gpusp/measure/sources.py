"""Deterministic SSSP sources, GAPBS style: seeded picks among vertices with out-degree > 0.

The same list goes to the solver and to the verifier, and is written to a file the workflow shares.
"""

from __future__ import annotations

import numpy as np

from ..atomic import atomic_open
from ..data.graph import Graph
from ..errors import SolverError


def pick_sources(graph: Graph, count: int, seed: int, option: str = "number of sources") -> list[int]:
    """``count`` distinct sources, the same for the same seed: the one place that decides how many
    sources a graph can give. Asking for more than it has is an error, never a silently shorter list:
    every timing and verdict of a run is over its sources, so fewer sources would be another
    experiment. ``option`` is how the caller's user asked for ``count`` (``--num-sources``,
    ``sources.count``), named in every error."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise SolverError(f"{option} must be a positive integer, not {count!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SolverError(f"the seed of the sources must be a non-negative integer, not {seed!r}")
    candidates = np.flatnonzero(graph.out_degree() > 0)
    which = "vertices with out-degree > 0"
    if candidates.size == 0:
        if graph.n == 0:
            raise SolverError(f"{graph.name} has no vertices")
        candidates, which = np.arange(graph.n), "vertices (none has an out-arc)"
    if count > candidates.size:
        raise SolverError(f"{option} {count}: {graph.name} has only {candidates.size} {which}, and sources are "
                          f"distinct: ask for at most {candidates.size}")
    rng = np.random.default_rng(seed)
    return [int(v) for v in rng.choice(candidates, size=int(count), replace=False)]


def read_sources(path) -> list[int]:
    """One vertex id per line; blank lines and '#' comments ignored."""
    out = []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SolverError(f"{path}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at column "
                                  f"{exc.start + 1}); a sources file holds one vertex id per line") from None
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                out.append(int(line))
            except ValueError:
                raise SolverError(f"{path}:{lineno}: source {line!r} is not an integer") from None
    return out


def write_sources(path, graph: Graph, sources, seed: int) -> None:
    """The sources file (atomically), with a comment naming the graph, its checksum and the seed."""
    with atomic_open(path) as fh:
        fh.write(f"# {len(sources)} sources of {graph.name} (checksum {graph.checksum()[:16]}), seed {seed}\n")
        fh.writelines(f"{s}\n" for s in sources)
