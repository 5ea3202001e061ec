"""The protocol every solver class follows, so that one harness times them all alike: ``upload()`` (the graph to the
device), ``run(source)`` (one trial's device work; returns its counters) and ``download()`` (``(dist, parent)``).
Design: docs/solvers/common.md.
"""

from __future__ import annotations

import numpy as np

from ...data.graph import Graph


class Solver:
    """Base class: stores the graph and parameters; CPU solvers need only override ``run``."""

    device = "cpu"

    def __init__(self, graph: Graph, **params):
        self.graph = graph
        self.params = params
        self.dist: np.ndarray | None = None
        self.parent: np.ndarray | None = None

    @property
    def native(self) -> bool:
        """Whether host-driven launches go to the driver directly (registry parameter ``launcher``, default
        'native'; :class:`~gpusp.solvers.common.launch.Launch`) rather than through Numba's dispatcher ('numba')."""
        return self.params.get("launcher", "native") == "native"

    def upload(self) -> None:
        """Copy the graph to the device (nothing to do on the CPU)."""

    def run(self, source) -> dict:
        raise NotImplementedError

    def download(self):
        """Return (dist, parent) as host arrays."""
        return self.dist, self.parent


def counters_of(ran) -> dict:
    """The counters a ``run`` returned: the dict itself, or what its deferred read-back returns."""
    return dict((ran() if callable(ran) else ran) or {})

