"""Seeded edge weights and symmetrisation (the paper's ``utils.py`` ``add`` / ``replace`` actions, redone).

* :func:`random_weights` - ``m`` integers drawn uniformly from ``[wmin, wmax]`` (both ends included).
* :func:`add_weights` - give an unweighted graph (``weight_kind == 'unit'``) random weights; refuses a
  graph that already has real or generated weights (use :func:`replace_weights` for that).
* :func:`replace_weights` - new random weights for any graph; the edges stay exactly as they were.
* :func:`symmetrize` - add the reverse of every edge (used for undirected SNAP graphs).

Determinism: everything draws from ``numpy.random.default_rng(seed)`` (never the global random state),
and weights are assigned to edges in **CSR order** (vertex 0's edges first, each vertex's edges in
the order ``graph.indices`` stores them). The same graph, range and seed therefore give identical
arrays, and so byte-identical files, under the same NumPy version (NumPy does not promise identical
``Generator`` streams across releases). They do not reproduce the original paper code's numbers.

Both weighting functions return a graph with ``weight_kind='generated'`` and record
``meta['weights'] = {'min': wmin, 'max': wmax, 'seed': seed}`` (the rest of ``meta``, the name and
``id_map`` are kept).

Complexity: O(m) draws; :func:`symmetrize` is O(m log m) (one lexicographic sort of 2m triples).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import GpuspError
from .graph import Graph

__all__ = ["WeightsError", "add_weights", "random_weights", "replace_weights", "symmetrize"]


class WeightsError(GpuspError, ValueError):
    """Bad weight parameters, or weights asked for on a graph that already has them."""


def _as_int(name: str, value, *, minimum: int | None = None, error=WeightsError) -> int:
    """``value`` as a Python int (ints, NumPy ints and integral floats accepted; bools refused)."""
    if isinstance(value, (bool, np.bool_)):
        raise error(f"{name} must be an integer, not {value!r}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        out = int(value)
    else:
        raise error(f"{name} must be an integer, not {value!r}")
    if minimum is not None and out < minimum:
        raise error(f"{name} must be >= {minimum}, got {out}")
    return out


def check_range(wmin, wmax, seed, *, error=WeightsError, names=("wmin", "wmax", "seed")) -> tuple[int, int, int]:
    """Validate a weight range and seed; returns them as Python ints. ``names``: what the caller's user
    calls the three (``--min``, a config's ``weights/min``), named in the errors."""
    low, high, seed_name = names
    wmin = _as_int(low, wmin, error=error)
    wmax = _as_int(high, wmax, error=error)
    seed = _as_int(seed_name, seed, minimum=0, error=error)
    if wmin > wmax:
        raise error(f"{low} ({wmin}) must be <= {high} ({wmax})")
    if wmin < -(2**62) or wmax > 2**62:
        raise error(f"{low} and {high} must lie within +-2**62, got [{wmin}, {wmax}]")
    return wmin, wmax, seed


def draw_weights(rng: np.random.Generator, m: int, wmin: int, wmax: int) -> np.ndarray:
    """``m`` int64 weights uniform in ``[wmin, wmax]`` from an existing generator (no validation)."""
    return rng.integers(wmin, wmax, size=m, dtype=np.int64, endpoint=True)


def random_weights(m: int, wmin: int, wmax: int, seed: int) -> np.ndarray:
    """``m`` integers drawn uniformly from ``[wmin, wmax]``, both ends included, as an int64 array.

    ``wmin`` may be negative (for solvers that accept negative weights, e.g. Bellman-Ford style
    ones); note that a graph with a negative weight on an edge whose reverse is also present (a
    symmetric graph, a two-way grid, ``complete``) then almost surely has a negative cycle.
    ``wmin == wmax`` gives a constant array. ``seed`` must be a non-negative integer.
    """
    m = _as_int("m", m, minimum=0)
    wmin, wmax, seed = check_range(wmin, wmax, seed)
    return draw_weights(np.random.default_rng(seed), m, wmin, wmax)


def _weighted(graph: Graph, wmin: int, wmax: int, seed: int) -> Graph:
    out = graph.with_weights(random_weights(graph.m, wmin, wmax, seed), weight_kind="generated")
    out.meta = {**graph.meta, "weights": {"min": wmin, "max": wmax, "seed": seed}}
    return out


def add_weights(graph: Graph, wmin: int, wmax: int, seed: int) -> Graph:
    """Random integer weights in ``[wmin, wmax]`` for an unweighted graph (``weight_kind == 'unit'``).

    Weights go to the edges in CSR order (see the module docstring). Raises :class:`WeightsError`
    (a ``ValueError``) when the graph already has ``'real'`` or ``'generated'`` weights.
    """
    wmin, wmax, seed = check_range(wmin, wmax, seed)
    if graph.weight_kind != "unit":
        raise WeightsError(
            f"{graph.name} already has {graph.weight_kind} weights; add_weights only weights unweighted "
            f"('unit') graphs - use replace_weights to overwrite existing weights"
        )
    return _weighted(graph, wmin, wmax, seed)


def replace_weights(graph: Graph, wmin: int, wmax: int, seed: int) -> Graph:
    """New random integer weights in ``[wmin, wmax]`` for any graph; same edges, same order.

    Weights go to the edges in CSR order (see the module docstring).
    """
    wmin, wmax, seed = check_range(wmin, wmax, seed)
    return _weighted(graph, wmin, wmax, seed)


def symmetrize(graph: Graph) -> Graph:
    """Add the reverse ``v -> u`` (same weight) of every edge ``u -> v``, without doubling anything.

    Counting each ``(source, target, weight)`` triple as a multiset, the result holds
    ``max(count(u, v, w), count(v, u, w))`` copies of every triple: all original edges are kept
    (parallel edges included), and a reverse edge is added only where the graph does not already
    have it with the same weight. So an edge whose reverse already exists with the same weight is
    not doubled, a self-loop is its own reverse, a graph that is already symmetric comes back with
    the same edges, and ``symmetrize(symmetrize(g))`` has the same edges as ``symmetrize(g)``. An edge
    whose reverse exists with a *different* weight does get its same-weight reverse added (the
    result then has two parallel edges in each direction; :meth:`Graph.simple` keeps the lighter).

    Edge order: each vertex keeps its original edges first (in CSR order), followed by the added
    reverse edges in the CSR order of the edges they reverse. ``name``, ``weight_kind``, ``id_map``
    and ``meta`` are kept; ``meta['symmetrized'] = True`` is recorded. O(m log m).
    """
    src, dst, w = graph.coo()
    m = graph.m
    if m == 0:
        out = Graph.from_edges(graph.n, src, dst, w, name=graph.name, weight_kind=graph.weight_kind,
                               id_map=graph.id_map, meta=graph.meta)
        out.meta["symmetrized"] = True
        return out
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    w = w.astype(np.int64)
    # rows 0..m-1: the original edges; rows m..2m-1: their reverses
    s_all = np.concatenate([src, dst])
    d_all = np.concatenate([dst, src])
    w_all = np.concatenate([w, w])
    order = np.lexsort((w_all, d_all, s_all))
    new_group = np.ones(2 * m, dtype=bool)
    new_group[1:] = ((s_all[order][1:] != s_all[order][:-1]) | (d_all[order][1:] != d_all[order][:-1])
                     | (w_all[order][1:] != w_all[order][:-1]))
    group_sorted = np.cumsum(new_group) - 1
    gid = np.empty(2 * m, dtype=np.int64)
    gid[order] = group_sorted
    ngroups = int(group_sorted[-1]) + 1
    count_orig = np.bincount(gid[:m], minlength=ngroups)
    count_rev = np.bincount(gid[m:], minlength=ngroups)
    extra = np.maximum(count_rev - count_orig, 0)
    # keep the first extra[g] reverse rows of every group g (first = earliest in CSR order)
    rev_gid = gid[m:]
    rorder = np.argsort(rev_gid, kind="stable")
    sorted_g = rev_gid[rorder]
    starts = np.searchsorted(sorted_g, np.arange(ngroups), side="left")
    rank = np.empty(m, dtype=np.int64)
    rank[rorder] = np.arange(m) - starts[sorted_g]
    keep = rank < extra[rev_gid]
    out = Graph.from_edges(
        graph.n,
        np.concatenate([src, dst[keep]]),
        np.concatenate([dst, src[keep]]),
        np.concatenate([w, w[keep]]),
        name=graph.name,
        weight_kind=graph.weight_kind,
        id_map=graph.id_map,
        meta=graph.meta,
    )
    out.meta["symmetrized"] = True
    return out
