"""Deterministic SSSP sources, GAPBS style: seeded picks among vertices with out-degree > 0.

The same list goes to the solver and to the verifier, and is written to a file the workflow shares.
"""

from __future__ import annotations

import numpy as np

from .errors import SolverError
from .graph import Graph


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
