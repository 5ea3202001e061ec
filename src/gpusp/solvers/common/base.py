"""The protocol every solver class follows, so that one harness can time them all alike.

A solver is built from a graph and its resolved parameters: the registry (:mod:`gpusp.solvers.registry`) holds
every parameter's default, allowed values and help, fills in the defaults and checks the values
(:meth:`~gpusp.solvers.registry.SolverSpec.build`), so a solver's ``__init__`` takes them as keyword-only arguments
without defaults and checks only what a parameter cannot say alone (a combination, a graph it cannot take).
``__init__`` does host-side preparation only. The harness then calls:

* ``upload()`` - host to device copies of the graph (timed apart as ``h2d_ms``);
* ``run(source)`` - the device work of one trial, from resetting the distance arrays to convergence
  (timed with CUDA events per trial); returns a dict of counters such as ``iterations`` (rounds or
  launches) and ``relaxations`` (edges examined), or a callable that returns that dict once the trial's
  clock has stopped (for counters that live on the device: their read-back is not the trial's work), and
  raises NegativeCycleError when it finds one; APSP solvers receive ``source=None``;
* ``download()`` - device to host copies (timed apart as ``d2h_ms``); returns ``(dist, parent)``.
  SSSP: two length-n arrays. APSP: two n x n arrays where ``parent[s, v]`` is the vertex before ``v``
  on a shortest ``s -> v`` path (-1 for ``v == s`` and unreachable ``v``).

``dist`` uses the graph's distance dtype and marks unreachable vertices with ``graph.inf``.
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

