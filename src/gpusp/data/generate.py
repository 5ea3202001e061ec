"""Seeded synthetic graph generators: the papers' (complete, random, R-MAT / power-law, ring, grid), drawn with one
``numpy.random.default_rng(seed)``, topology before weights; GAPBS's ``kron`` and ``urand`` at the field's sizes
(:mod:`gpusp.data.gap_synthetic`); DIMACS10's ``delaunay``. The same arguments and seed give the same CSR arrays.
:func:`generate` dispatches with checked parameters, :func:`check_params` is the check alone and :func:`estimate`
the sizes and bytes implied. Each generator's rule: docs/data.md.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ..errors import GpuspError
from . import gap_synthetic
from .graph import INF32, Graph
from .weights import _as_int, check_range, draw_weights

__all__ = ["ALIASES", "GENERATORS", "MAX_ARCS", "MAX_EDGES", "GeneratorError", "check_params", "complete",
           "delaunay", "delaunay_points", "estimate", "generate", "grid", "kinds_listing", "kron", "powerlaw",
           "random_sparse", "ring", "rmat", "urand"]

MAX_EDGES = 2**31 - 1
"""Largest edge count the NumPy generators will produce (edge offsets stay within int32)."""
MAX_ARCS = 2**35
"""Largest arc count ``kron`` and ``urand`` will draw (over 400 GB while they are built: no host here has that)."""
MAX_DELAUNAY_SCALE = 24
"""Largest ``delaunay`` scale: DIMACS10's largest, 2**24 points (Qhull runs single-threaded for many minutes)."""
OFFSETS = ("auto", "int32", "int64")
"""A generator's ``offsets``: Graph's choice (int32 below 2**31 arcs, else int64), or forced."""

_DEFAULT_W = (1, 100)
_GAP_W = (1, 255)
_BIG = ("kron", "urand")


class GeneratorError(GpuspError, ValueError):
    """A generator was asked for something impossible (unknown kind, bad or missing parameter)."""


# helpers ----------------------------------------------------------------------------------------
def _int(name: str, value, minimum: int | None = None) -> int:
    return _as_int(name, value, minimum=minimum, error=GeneratorError)


def _bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise GeneratorError(f"{name} must be True or False, not {value!r}")
    return bool(value)


def _weights_ok(wmin, wmax, seed) -> tuple[int, int, int]:
    return check_range(wmin, wmax, seed, error=GeneratorError)


def _check_m(kind: str, m: int) -> None:
    if m > MAX_EDGES:
        raise GeneratorError(f"{kind}: {m} edges requested, more than the limit of {MAX_EDGES}")


def _check_n(kind: str, n: int) -> None:
    # vertex ids are stored as int32
    if n > 2**31 - 1:
        raise GeneratorError(f"{kind}: n = {n} vertices is more than int32 vertex ids allow")


def _size_complete(p: dict) -> tuple[int, int]:
    n = p["n"] = _int("n", p["n"], 1)
    return n, n * (n - 1)


def _size_random(p: dict) -> tuple[int, int]:
    n = p["n"] = _int("n", p["n"], 1)
    k = p["k"] = _int("k", p["k"], 1)
    if k * n > n * (n - 1):
        raise GeneratorError(
            f"random: k*n = {k * n} distinct edges without self-loops do not fit in n = {n} vertices "
            f"(at most n(n-1) = {n * (n - 1)}; k must be <= n - 1 = {n - 1})"
        )
    return n, k * n


def _size_rmat(p: dict) -> tuple[int, int]:
    scale = p["scale"] = _int("scale", p["scale"], 0)
    edge_factor = p["edge_factor"] = _int("edge_factor", p["edge_factor"], 1)
    if scale > 30:
        raise GeneratorError(f"rmat: scale = {scale} is more than int32 vertex ids allow (max 30)")
    return 1 << scale, edge_factor << scale


def _size_powerlaw(p: dict) -> tuple[int, int]:
    n = p["n"] = _int("n", p["n"], 1)
    m = p["m"] = _int("m", p["m"], 0)
    return n, m


def _size_ring(p: dict) -> tuple[int, int]:
    n = p["n"] = _int("n", p["n"], 1)
    return n, n


def _size_gap(p: dict) -> tuple[int, int]:
    scale = p["scale"] = _int("scale", p["scale"], 0)
    edge_factor = p["edge_factor"] = _int("edge_factor", p["edge_factor"], 1)
    if scale > 30:
        raise GeneratorError(f"scale = {scale} is more than int32 vertex ids allow (max 30)")
    span = _int("wmax", p["wmax"]) - _int("wmin", p["wmin"])
    if span > gap_synthetic.MAX_WEIGHT_SPAN:
        raise GeneratorError(f"wmax - wmin = {span} is more than {gap_synthetic.MAX_WEIGHT_SPAN} (the weight offset "
                             f"is packed into 20 bits)")
    return 1 << scale, 2 * edge_factor << scale  # both directions of every edge drawn: squished ones drop out


def _size_delaunay(p: dict) -> tuple[int, int]:
    scale = p["scale"] = _int("scale", p["scale"], 0)
    if scale > MAX_DELAUNAY_SCALE:
        raise GeneratorError(f"delaunay: scale = {scale} is more than {MAX_DELAUNAY_SCALE} (DIMACS10's largest)")
    n = 1 << scale
    return n, 6 * n - 12 if n >= 3 else n * (n - 1)  # planar: at most 3n - 6 edges, both directions


def _size_grid(p: dict) -> tuple[int, int]:
    rows = p["rows"] = _int("rows", p["rows"], 1)
    cols = p["cols"] = _int("cols", p["cols"], 1)
    one_way = 2 * rows * cols - rows - cols
    return rows * cols, 2 * one_way if p["directed_both_ways"] else one_way


_SIZES = {"complete": _size_complete, "random": _size_random, "rmat": _size_rmat, "powerlaw": _size_powerlaw,
          "ring": _size_ring, "grid": _size_grid, "kron": _size_gap, "urand": _size_gap, "delaunay": _size_delaunay}
"""Per kind: converts its count parameters in place and returns (n, m), m the edges drawn (an upper bound
when ``simple`` drops loops and duplicates, for kron and urand, whose squish drops them, and for delaunay)."""


def _checked(kind: str, **args) -> dict:
    """Every parameter of generator ``kind`` checked and converted (the same keys in the same order), so a
    bad value fails before anything is drawn and :func:`check_params` decides exactly what the generator
    would accept."""
    return _checked_with_size(kind, args)[0]


def _checked_with_size(kind: str, args: dict) -> tuple[dict, int, int]:
    p = dict(args)
    for name in ("simple", "directed_both_ways"):
        if name in p:
            p[name] = _bool(name, p[name])
    n, m = _SIZES[kind](p)
    if "a" in p:
        p["a"], p["b"], p["c"], _ = _check_abc(p["a"], p["b"], p["c"])
    if "wmin" in p:
        p["wmin"], p["wmax"], p["seed"] = _weights_ok(p["wmin"], p["wmax"], p["seed"])
    else:
        p["seed"] = _int("seed", p["seed"], 0)
    if "offsets" in p and p["offsets"] not in OFFSETS:
        raise GeneratorError(f"offsets must be one of {', '.join(OFFSETS)}, not {p['offsets']!r}")
    _check_n(kind, n)
    if kind in _BIG:
        if m > MAX_ARCS:
            raise GeneratorError(f"{kind}: {m} arcs requested, more than the limit of {MAX_ARCS}")
    else:
        _check_m(kind, m)
    if p.get("offsets") == "int32" and m > MAX_EDGES:
        raise GeneratorError(f"{kind}: offsets int32 cannot index up to {m:,} arcs")
    return p, n, m


def _name(base: str, wmin: int, wmax: int, seed: int, *extra: str, default_w=_DEFAULT_W) -> str:
    parts = [base, *extra]
    if (wmin, wmax) != default_w:
        parts.append(f"w{wmin}_{wmax}")
    parts.append(f"seed{seed}")
    return "-".join(parts)


def _build(kind, n, src, dst, rng, wmin, wmax, seed, name, params) -> Graph:
    """Graph from the edge arrays, with weights drawn from ``rng`` in CSR order."""
    order = np.argsort(src, kind="stable")  # the CSR order Graph.from_edges will use
    src, dst = src[order], dst[order]
    w = draw_weights(rng, src.size, wmin, wmax)
    meta = {"generator": kind, "params": params, "weights": {"min": wmin, "max": wmax, "seed": seed}}
    return Graph.from_edges(n, src, dst, w, name=name, weight_kind="generated", meta=meta)


# generators -------------------------------------------------------------------------------------
def complete(n: int, wmin: int = 1, wmax: int = 100, seed: int = 0) -> Graph:
    """All ``n(n-1)`` ordered pairs ``i != j`` (row-major), random weights in ``[wmin, wmax]`` (paper 000).

    ``n == 1``: one vertex, no edges.
    """
    n, wmin, wmax, seed = _checked("complete", n=n, wmin=wmin, wmax=wmax, seed=seed).values()
    idt = np.int32 if n < 2**31 else np.int64
    src = np.repeat(np.arange(n, dtype=idt), n - 1)
    j = np.tile(np.arange(max(n - 1, 0), dtype=idt), n)
    dst = j + (j >= src)
    params = {"n": n, "wmin": wmin, "wmax": wmax, "seed": seed}
    return _build("complete", n, src, dst, np.random.default_rng(seed), wmin, wmax, seed,
                  _name(f"complete-n{n}", wmin, wmax, seed), params)


def random_sparse(n: int, k: int, wmax: int = 100, seed: int = 0, wmin: int = 1) -> Graph:
    """``k*n`` distinct random edges without self-loops, weights in ``[wmin, wmax]`` (paper 001).

    The edge set is a uniformly random ``k*n``-subset of the ``n(n-1)`` ordered pairs ``u != v``
    (duplicates are rejected and resampled), so ``k <= n - 1`` is required. Each vertex's edges
    appear in the order they were drawn.
    """
    n, k, wmax, seed, wmin = _checked("random", n=n, k=k, wmax=wmax, seed=seed, wmin=wmin).values()
    m = k * n
    pairs = n * (n - 1)
    rng = np.random.default_rng(seed)
    # a pair index e in [0, n(n-1)) encodes u = e // (n-1), v = j + (j >= u) with j = e % (n-1)
    if 2 * m >= pairs:
        # dense: sample without replacement directly (population at most 2m)
        codes = rng.choice(pairs, size=m, replace=False)
    else:
        codes = np.empty(0, dtype=np.int64)
        while codes.size < m:
            need = m - codes.size
            # oversample by the expected duplicate rate so one or two rounds usually suffice
            density = (codes.size + need) / pairs
            draw = int(need / max(1.0 - density, 0.5) * 1.05) + 16
            cand = np.concatenate([codes, rng.integers(0, pairs, size=draw, dtype=np.int64)])
            _, first = np.unique(cand, return_index=True)
            first.sort()  # keep first occurrences, in draw order
            codes = cand[first[:m]] if first.size >= m else cand[first]
    codes = np.asarray(codes, dtype=np.int64)
    src = codes // (n - 1)  # n >= 2 here: k >= 1 and k <= n - 1
    j = codes % (n - 1)
    dst = j + (j >= src)
    params = {"n": n, "k": k, "wmax": wmax, "seed": seed, "wmin": wmin}
    return _build("random", n, src, dst, rng, wmin, wmax, seed,
                  _name(f"random-n{n}-k{k}", wmin, wmax, seed), params)


def _check_abc(a, b, c) -> tuple[float, float, float, float]:
    try:
        a, b, c = float(a), float(b), float(c)
    except (TypeError, ValueError):
        raise GeneratorError(f"R-MAT probabilities must be numbers, got a={a!r}, b={b!r}, c={c!r}") from None
    d = 1.0 - a - b - c
    if min(a, b, c) < 0 or d < -1e-12 or not all(map(math.isfinite, (a, b, c))):
        raise GeneratorError(
            f"R-MAT probabilities must be >= 0 with a + b + c <= 1 (d = 1 - a - b - c), got a={a}, b={b}, c={c}"
        )
    return a, b, c, max(d, 0.0)


_RMAT_CHUNK = 1 << 16
"""Edges generated per vectorised block in R-MAT (keeps the per-bit arrays in cache). Part of the
random stream's definition: changing it changes the graphs a seed gives."""


def _rmat_edges(rng: np.random.Generator, scale: int, m: int, a: float, b: float, c: float):
    """Graph500 ``kronecker_generator``, then a random relabelling of the vertices.

    For every edge and every bit one uniform ``r`` picks the quadrant: ``[0, a)`` -> (row 0, col 0),
    ``[a, a+b)`` -> (0, 1), ``[a+b, a+b+c)`` -> (1, 0), else (1, 1) - the same distribution as the
    reference code's two draws per bit. Edges are generated in blocks of :data:`_RMAT_CHUNK`, looping
    over the scale bits inside each block. The reference's final shuffle of the edge list is left
    out: the edges are i.i.d., so it would not change the distribution.
    """
    ab, abc = a + b, a + b + c
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    for start in range(0, m, _RMAT_CHUNK):
        size = min(_RMAT_CHUNK, m - start)
        s = np.zeros(size, dtype=np.int32)
        d = np.zeros(size, dtype=np.int32)
        for bit in range(scale):
            r = rng.random(size)
            row = r >= ab
            col = (r >= a) ^ row ^ (r >= abc)  # r in [a, a+b) or r >= a+b+c
            s |= row.astype(np.int32) << bit
            d |= col.astype(np.int32) << bit
        src[start:start + size] = s
        dst[start:start + size] = d
    perm = rng.permutation(1 << scale).astype(np.int32)
    return perm[src], perm[dst]


def _drop_loops_and_duplicates(n: int, src: np.ndarray, dst: np.ndarray):
    keep = src != dst
    src, dst = src[keep], dst[keep]
    _, first = np.unique(src.astype(np.int64) * n + dst, return_index=True)
    first.sort()
    return src[first], dst[first]


def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed: int = 0, wmin: int = 1, wmax: int = 100, simple: bool = False) -> Graph:
    """Graph500 R-MAT/Kronecker graph: ``n = 2**scale``, ``m = edge_factor * n`` edges, power-law degrees.

    ``d = 1 - a - b - c``. Self-loops and parallel edges are kept as in Graph500 (exactly ``m``
    edges); ``simple=True`` drops them (keeping the first occurrence), so fewer edges remain.
    """
    params = _checked("rmat", scale=scale, edge_factor=edge_factor, a=a, b=b, c=c, seed=seed, wmin=wmin, wmax=wmax,
                      simple=simple)
    scale, edge_factor = params["scale"], params["edge_factor"]
    n = 1 << scale
    m = edge_factor * n
    return _kronecker("rmat", n, scale, m, params, f"rmat-s{scale}-ef{edge_factor}")


def powerlaw(n: int, m: int, a: float = 0.57, b: float = 0.19, c: float = 0.19, seed: int = 0,
             wmin: int = 1, wmax: int = 100, simple: bool = False) -> Graph:
    """R-MAT graph with any ``n``: generate ``m`` edges on ``2**ceil(log2 n)`` vertices, fold ids ``>= n``.

    After the random Graph500 relabelling every id ``v >= n`` becomes ``v - n``, so the fold merges
    randomly chosen pairs of R-MAT vertices and keeps the heavy-tailed degrees. Exactly ``m`` edges
    (self-loops and parallel edges kept) unless ``simple=True``. ``n`` a power of two gives the same
    edges as ``rmat`` with ``edge_factor = m / n``.
    """
    params = _checked("powerlaw", n=n, m=m, a=a, b=b, c=c, seed=seed, wmin=wmin, wmax=wmax, simple=simple)
    n, m = params["n"], params["m"]
    return _kronecker("powerlaw", n, (n - 1).bit_length(), m, params, f"powerlaw-n{n}-m{m}")


def _kronecker(kind, n, scale, m, params, base_name) -> Graph:
    """R-MAT edges on ``2**scale`` vertices, ids ``>= n`` folded onto ``v - n`` (none when n = 2**scale)."""
    a, b, c, seed, simple = params["a"], params["b"], params["c"], params["seed"], params["simple"]
    rng = np.random.default_rng(seed)
    src, dst = _rmat_edges(rng, scale, m, a, b, c)
    if n < 1 << scale:
        src = np.where(src >= n, src - n, src)
        dst = np.where(dst >= n, dst - n, dst)
    if simple:
        src, dst = _drop_loops_and_duplicates(n, src, dst)
    extra = [f"abc{a:g}_{b:g}_{c:g}"] if (a, b, c) != (0.57, 0.19, 0.19) else []
    if simple:
        extra.append("simple")
    wmin, wmax = params["wmin"], params["wmax"]
    return _build(kind, n, src, dst, rng, wmin, wmax, seed, _name(base_name, wmin, wmax, seed, *extra), params)


def ring(n: int, wmin: int = 1, wmax: int = 100, seed: int = 0) -> Graph:
    """Directed cycle ``i -> (i + 1) mod n`` (paper 001's ring); ``n == 1`` is the self-loop ``0 -> 0``."""
    n, wmin, wmax, seed = _checked("ring", n=n, wmin=wmin, wmax=wmax, seed=seed).values()
    src = np.arange(n, dtype=np.int64)
    dst = (src + 1) % n
    params = {"n": n, "wmin": wmin, "wmax": wmax, "seed": seed}
    return _build("ring", n, src, dst, np.random.default_rng(seed), wmin, wmax, seed,
                  _name(f"ring-n{n}", wmin, wmax, seed), params)


def value_grid(values: np.ndarray, name: str = "value-grid") -> Graph:
    """Paper 003's graph of a matrix: the 4-neighbour grid of its cells, both ways, where every arc into
    cell v weighs ``values[v]`` (entering a cell costs its value). Vertex ``r*cols + c``."""
    values = np.asarray(values)
    if values.ndim != 2 or values.size == 0:
        raise GeneratorError(f"value_grid: a non-empty matrix is needed, not shape {values.shape}")
    rows, cols = values.shape
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    a, b = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()]), np.concatenate([ids[:, 1:].ravel(),
                                                                                       ids[1:, :].ravel()])
    src, dst = np.concatenate([a, b]), np.concatenate([b, a])
    meta = {"matrix": {"rows": rows, "cols": cols}}
    return Graph.from_edges(rows * cols, src, dst, values.ravel()[dst].astype(np.int64), name=name,
                            weight_kind="real", meta=meta)


def grid(rows: int, cols: int, wmin: int = 1, wmax: int = 100, seed: int = 0,
         directed_both_ways: bool = True) -> Graph:
    """2-D 4-neighbour grid (paper 003), vertex ``r*cols + c``, independent weights per directed edge.

    Both ways: ``2 * (2*rows*cols - rows - cols)`` edges, each vertex's listed up, left, right, down.
    ``directed_both_ways=False``: only right and down edges (``2*rows*cols - rows - cols``).
    """
    rows, cols, wmin, wmax, seed, directed_both_ways = _checked(
        "grid", rows=rows, cols=cols, wmin=wmin, wmax=wmax, seed=seed, directed_both_ways=directed_both_ways).values()
    n = rows * cols
    ids = np.arange(n, dtype=np.int64).reshape(rows, cols)
    right_s, right_d = ids[:, :-1].ravel(), ids[:, 1:].ravel()
    down_s, down_d = ids[:-1, :].ravel(), ids[1:, :].ravel()
    if directed_both_ways:
        # concatenated up, left, right, down: the stable CSR sort keeps each vertex's targets ascending
        src = np.concatenate([down_d, right_d, right_s, down_s])
        dst = np.concatenate([down_s, right_s, right_d, down_d])
    else:
        src = np.concatenate([right_s, down_s])
        dst = np.concatenate([right_d, down_d])
    extra = [] if directed_both_ways else ["oneway"]
    params = {"rows": rows, "cols": cols, "wmin": wmin, "wmax": wmax, "seed": seed,
              "directed_both_ways": bool(directed_both_ways)}
    return _build("grid", n, src, dst, np.random.default_rng(seed), wmin, wmax, seed,
                  _name(f"grid-{rows}x{cols}", wmin, wmax, seed, *extra), params)


def kron(scale: int, edge_factor: int = 16, seed: int = 0, wmin: int = 1, wmax: int = 255,
         offsets: str = "auto") -> Graph:
    """GAPBS's ``kron`` (``-g scale -k edge_factor``): ``edge_factor * 2**scale`` Graph500 R-MAT edges (A = 0.57,
    B = C = 0.19) on ``2**scale`` randomly relabelled vertices, weights uniform in ``[wmin, wmax]``, symmetrised and
    squished (no self-loops, the lightest of parallel arcs, rows sorted); ``offsets`` as :data:`OFFSETS`."""
    return _gap("kron", gap_synthetic.KRON, scale=scale, edge_factor=edge_factor, seed=seed, wmin=wmin, wmax=wmax,
                offsets=offsets)


def urand(scale: int, edge_factor: int = 16, seed: int = 0, wmin: int = 1, wmax: int = 255,
          offsets: str = "auto") -> Graph:
    """GAPBS's ``urand`` (``-u scale -k edge_factor``): ``edge_factor * 2**scale`` edges with both endpoints uniform
    on ``2**scale`` vertices, otherwise as :func:`kron`."""
    return _gap("urand", gap_synthetic.URAND, scale=scale, edge_factor=edge_factor, seed=seed, wmin=wmin, wmax=wmax,
                offsets=offsets)


def _gap(kind: str, code: int, **args) -> Graph:
    p = _checked(kind, **args)
    scale, edge_factor, seed, wmin, wmax = p["scale"], p["edge_factor"], p["seed"], p["wmin"], p["wmax"]
    indptr, indices, weights = gap_synthetic.build(code, scale, edge_factor, seed, wmin, wmax,
                                                   force_int64=p["offsets"] == "int64")
    extra = ["off64"] if p["offsets"] == "int64" else []
    meta = {"generator": kind, "params": p, "weights": {"min": wmin, "max": wmax, "seed": seed}}
    return Graph(1 << scale, indptr, indices, weights, name=_name(f"{kind}-s{scale}-ef{edge_factor}", wmin, wmax, seed,
                                                                  *extra, default_w=_GAP_W),
                 weight_kind="generated", meta=meta, offsets_dtype=_offsets_dtype(p["offsets"]))


def _offsets_dtype(offsets: str) -> str | None:
    return None if offsets == "auto" else offsets


def delaunay_points(scale: int, seed: int = 0) -> np.ndarray:
    """The ``2**scale`` points of :func:`delaunay`, uniform in the unit square: ``default_rng(seed).random((n, 2))``."""
    return np.random.default_rng(seed).random((1 << scale, 2))


def delaunay_weight_bits(scale: int) -> int:
    """k of delaunay's weights ``max(1, round(length * 2**k))``: 28 - ceil(scale / 2), so that the mean edge,
    about 1.15 / sqrt(n) long, weighs about 2**(28 - scale) and the path bound stays near 2**29 (int32 distances)."""
    return 28 - (scale + 1) // 2


def delaunay(scale: int, seed: int = 0, offsets: str = "auto") -> Graph:
    """DIMACS10's ``delaunay_n<scale>``: the Delaunay triangulation (``scipy.spatial.Delaunay``) of
    :func:`delaunay_points`, every edge both ways, weight ``max(1, round(length * 2**k))`` with k from
    :func:`delaunay_weight_bits`; rows sorted by target. ``n < 3``: the ``n(n-1)`` arcs between the points."""
    p = _checked("delaunay", scale=scale, seed=seed, offsets=offsets)
    scale, seed = p["scale"], p["seed"]
    n = 1 << scale
    points = delaunay_points(scale, seed)
    if n >= 3:
        from scipy.spatial import Delaunay

        tri = Delaunay(points)
        if tri.coplanar.size:  # uniform doubles: never seen; Qhull would leave these points out of the graph
            raise GeneratorError(f"delaunay: Qhull left {tri.coplanar.shape[0]} points out of the triangulation")
        corners = tri.simplices.astype(np.int64)
        a, b = corners.ravel(), np.roll(corners, -1, axis=1).ravel()
    else:
        a, b = np.arange(n - 1, dtype=np.int64), np.arange(1, n, dtype=np.int64)
    pair = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    lo, hi = pair // n, pair % n
    length = np.hypot(*(points[lo] - points[hi]).T)
    k = delaunay_weight_bits(scale)
    weight = np.maximum(1, np.rint(np.ldexp(length, k))).astype(np.int64)
    src, dst, weight = np.concatenate([lo, hi]), np.concatenate([hi, lo]), np.concatenate([weight, weight])
    order = np.lexsort((dst, src))
    meta = {"generator": "delaunay", "params": p, "weights": {"rule": f"max(1, round(length * 2**{k}))"}}
    name = f"delaunay-s{scale}-{'off64-' if p['offsets'] == 'int64' else ''}seed{seed}"
    return Graph.from_edges(n, src[order], dst[order], weight[order], name=name, weight_kind="generated", meta=meta,
                            offsets_dtype=_offsets_dtype(p["offsets"]))


GENERATORS = {
    "complete": complete,
    "random": random_sparse,
    "rmat": rmat,
    "powerlaw": powerlaw,
    "ring": ring,
    "grid": grid,
    "kron": kron,
    "urand": urand,
    "delaunay": delaunay,
}
"""Generator kind -> function (the kind is what ``meta['generator']`` records and what the graph
name starts with)."""

ALIASES = {"random_sparse": "random"}
"""Other names :func:`generate` accepts for a kind."""


def kinds_listing() -> str:
    """One line per generator kind: its parameters, a bare name for a required one, ``name=default`` otherwise
    (what ``gpusp generate --help`` lists)."""
    lines = []
    for kind, fn in GENERATORS.items():
        params = [p.name if p.default is p.empty else f"{p.name}={p.default}"
                  for p in inspect.signature(fn).parameters.values()]
        lines.append(f"  {kind:<9} {' '.join(params)}")
    return "\n".join(lines)


def check_params(kind: str, params: dict) -> tuple[str, dict, int, int]:
    """(kind, every parameter checked with its default filled in, n, m) of what :func:`generate` would
    build, without building it: the one decision on a generator's parameters, which the config planner
    (:mod:`gpusp.plan`) takes before any job runs. ``m`` is the number of edges drawn (``simple=True``
    keeps fewer). Unknown kinds, unknown or missing parameters and bad values raise GeneratorError."""
    kind = ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if kind not in GENERATORS:
        raise GeneratorError(f"unknown generator {kind!r}; known: {', '.join(sorted(GENERATORS))}")
    sig = inspect.signature(GENERATORS[kind])
    accepted = list(sig.parameters)
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise GeneratorError(f"{kind}: unknown parameter(s) {', '.join(unknown)}; accepted: {', '.join(accepted)}")
    missing = [p.name for p in sig.parameters.values() if p.default is p.empty and p.name not in params]
    if missing:
        raise GeneratorError(f"{kind}: missing required parameter(s) {', '.join(missing)}")
    args = {name: params.get(name, p.default) for name, p in sig.parameters.items()}
    return (kind, *_checked_with_size(kind, args))


_PEAK_PER_EDGE = {"complete": 48, "random": 100, "rmat": 48, "powerlaw": 48, "ring": 72, "grid": 72, "delaunay": 160}
"""Most bytes the NumPy generators hold per edge drawn (tracemalloc's peak over the edges, graph included, rounded
up; delaunay's from the process's resident memory, Qhull's own included)."""


def estimate(kind: str, params: dict) -> dict:
    """What generator ``kind`` with ``params`` implies, known before anything is drawn (the workflow's memory and
    runtime estimates): ``n``, ``arcs`` (an upper bound), ``graph_bytes`` (the CSR arrays, the weights in the dtype
    the worst-case path bound ``(n - 1) * max|w|`` asks for) and ``peak_bytes`` (most memory while it is built, an
    upper bound; kron and urand: :func:`gpusp.data.gap_synthetic.peak_bytes`). Bad parameters raise GeneratorError."""
    kind, p, n, m = check_params(kind, params)
    offset_bytes = 8 if p.get("offsets") == "int64" or m > MAX_EDGES else 4
    largest = (math.ceil(math.sqrt(2) * 2 ** delaunay_weight_bits(p["scale"])) if kind == "delaunay"
               else max(abs(p["wmin"]), abs(p["wmax"])))
    negative = kind != "delaunay" and p["wmin"] < 0
    weight_bytes = 4 if max(n - 1, 1) * largest < (2**29 if negative else int(INF32)) else 8
    graph_bytes = offset_bytes * (n + 1) + (4 + weight_bytes) * m
    if kind in _BIG:
        peak = gap_synthetic.peak_bytes(p["scale"], p["edge_factor"], offset_bytes, weight_bytes)
    else:
        peak = max(graph_bytes, _PEAK_PER_EDGE[kind] * m)
    return {"kind": kind, "n": n, "arcs": m, "graph_bytes": graph_bytes, "peak_bytes": peak}


def generate(kind: str, **params) -> Graph:
    """Run generator ``kind`` (a :data:`GENERATORS` key or an :data:`ALIASES` name) with keyword
    ``params``; unknown kinds, unknown or missing parameters and bad values raise GeneratorError."""
    kind, checked, _, _ = check_params(kind, params)
    return GENERATORS[kind](**checked)
