"""Deterministic SSSP sources, GAPBS style: seeded picks among vertices with out-degree > 0.

The same list goes to the solver and to the verifier, and is written to a file the workflow shares.
"""

from __future__ import annotations

import numpy as np

from ..atomic import atomic_open
from ..data.graph import Graph
from ..errors import SolverError


def pick_sources(graph: Graph, count: int, seed: int) -> list[int]:
    """``count`` distinct sources (fewer if the graph has fewer candidates), the same for the same seed."""
    candidates = np.flatnonzero(graph.out_degree() > 0)
    if candidates.size == 0:
        if graph.n == 0:
            raise SolverError(f"{graph.name} has no vertices")
        candidates = np.arange(graph.n)
    rng = np.random.default_rng(seed)
    take = min(int(count), candidates.size)
    return [int(v) for v in rng.choice(candidates, size=take, replace=False)]


def read_sources(path) -> list[int]:
    """One vertex id per line; blank lines and '#' comments ignored."""
    out = []
    with open(path) as fh:
        for lineno, line in enumerate(fh, 1):
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
