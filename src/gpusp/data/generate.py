"""Seeded synthetic graph generators (complete, random, R-MAT / power-law, ring, grid): the same arguments and seed
give the same CSR arrays, the topology drawn before the weights from one ``numpy.random.default_rng(seed)``.
:func:`generate` dispatches with checked parameters, :func:`check_params` is the check alone. Each generator's
rule: docs/data.md.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ..errors import GpuspError
from .graph import Graph
from .weights import _as_int, check_range, draw_weights

__all__ = ["ALIASES", "GENERATORS", "MAX_EDGES", "GeneratorError", "check_params", "complete", "generate", "grid",
           "powerlaw", "random_sparse", "ring", "rmat"]

MAX_EDGES = 2**31 - 1
"""Largest edge count any generator will produce (edge offsets stay within int32)."""

_DEFAULT_W = (1, 100)


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


def _size_grid(p: dict) -> tuple[int, int]:
    rows = p["rows"] = _int("rows", p["rows"], 1)
    cols = p["cols"] = _int("cols", p["cols"], 1)
    one_way = 2 * rows * cols - rows - cols
    return rows * cols, 2 * one_way if p["directed_both_ways"] else one_way


_SIZES = {"complete": _size_complete, "random": _size_random, "rmat": _size_rmat, "powerlaw": _size_powerlaw,
          "ring": _size_ring, "grid": _size_grid}
"""Per kind: converts its count parameters in place and returns (n, m), m the edges drawn (an upper bound
when ``simple`` drops loops and duplicates)."""


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
    p["wmin"], p["wmax"], p["seed"] = _weights_ok(p["wmin"], p["wmax"], p["seed"])
    _check_n(kind, n)
    _check_m(kind, m)
    return p, n, m


def _name(base: str, wmin: int, wmax: int, seed: int, *extra: str) -> str:
    parts = [base, *extra]
    if (wmin, wmax) != _DEFAULT_W:
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


GENERATORS = {
    "complete": complete,
    "random": random_sparse,
    "rmat": rmat,
    "powerlaw": powerlaw,
    "ring": ring,
    "grid": grid,
}
"""Generator kind -> function (the kind is what ``meta['generator']`` records and what the graph
name starts with)."""

ALIASES = {"random_sparse": "random"}
"""Other names :func:`generate` accepts for a kind."""


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


def generate(kind: str, **params) -> Graph:
    """Run generator ``kind`` (a :data:`GENERATORS` key or an :data:`ALIASES` name) with keyword
    ``params``; unknown kinds, unknown or missing parameters and bad values raise GeneratorError."""
    kind, checked, _, _ = check_params(kind, params)
    return GENERATORS[kind](**checked)
