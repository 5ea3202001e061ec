"""Directed weighted graphs in CSR form, the container every reader, generator and solver shares.

A :class:`Graph` holds ``indptr`` (n + 1 offsets), ``indices`` (m targets) and ``weights`` (m integer
weights) as NumPy arrays; the edges of vertex ``u`` are ``indices[indptr[u]:indptr[u + 1]]``.
Parallel edges and self-loops are kept as given (solvers must cope with them; ``info`` reports them).
Every graph, whatever built it (a text reader, an ``.npz`` cache, a generator, a caller), passes one
check, ``Graph.__post_init__``: integer arrays of CSR shape and range (a ValueError names the array;
the readers add the file), at most ``MAX_VERTICES`` vertices, and the arrays in their canonical
dtypes (indptr int32 below 2**31 arcs unless ``offsets_dtype`` asks for int64, indices int32, weights in the
distance dtype below).

Distances are integers. The weight dtype is picked from the longest possible simple path (the sum
over vertices of the largest |out-weight|, at most ``(n - 1) * max|w|``): int32 while that bound stays
below ``INF32 = 2**30 - 1`` (below ``2**29`` with negative weights), else int64 while it stays below
``2**61``, else :class:`~gpusp.errors.WeightOverflowError`; the bound also covers every single weight
(a self-loop of a one-vertex graph lies on no simple path but is still relaxed). ``INF + INF`` and
``INF + w`` never overflow the chosen dtype, and no real distance reaches ``INF``.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import WeightOverflowError

INF32 = np.int32(2**30 - 1)
INF64 = np.int64(2**62 - 1)
WEIGHT_KINDS = ("real", "generated", "unit")
MAX_VERTICES = 2**31 - 1  # vertex ids are int32 (indices, parents)
DAVIDSON_WIDTH = 32  # Davidson et al.'s bucket width: this many x mean arc weight / mean out-degree


def inf_for(dtype) -> int:
    """The unreachable marker for an int32 or int64 distance dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.int32:
        return int(INF32)
    if dtype == np.int64:
        return int(INF64)
    raise TypeError(f"distances are int32 or int64, not {dtype}")


def path_bound(n: int, weights: np.ndarray, indptr: np.ndarray | None = None) -> int:
    """Largest absolute length of a simple path, as a Python int.

    A simple path leaves each vertex at most once, so with CSR offsets it is at most the sum over
    vertices of their largest |out-weight| (far tighter than ``(n - 1) * max|w|`` on road graphs);
    the smaller of the two bounds is returned. The bound is exact: where int64 arithmetic could wrap,
    Python ints take over.
    """
    return _path_bound(n, weights, indptr, *_weight_range(weights))


def _weight_range(weights: np.ndarray) -> tuple[int, int]:
    """(smallest, largest) weight as Python ints, exact for every integer dtype; (0, 0) when there is none."""
    return (int(weights.min()), int(weights.max())) if weights.size else (0, 0)


def _path_bound(n: int, weights: np.ndarray, indptr, wmin: int, wmax: int) -> int:
    if n <= 1 or weights.size == 0:
        return 0
    largest = max(abs(wmin), abs(wmax))
    bound = (n - 1) * largest
    if indptr is not None and largest < 2**63:
        rows = indptr[:-1][np.diff(indptr) > 0]
        # the largest |w| per vertex; the absolute value only where there are negative weights (in int64, so
        # that the smallest int32 has one), the per-vertex maxima widened before they are summed
        magnitude = weights if wmin >= 0 else np.abs(weights.astype(np.int64))
        per_vertex = np.maximum.reduceat(magnitude, rows).astype(np.int64, copy=False)
        exact = float(per_vertex.sum(dtype=np.float64)) < 2**62  # else int64's sum could wrap
        total = int(per_vertex.sum()) if exact else sum(map(int, per_vertex))
        return path_bound_from_row_maxima(n, largest, total, int(per_vertex.min()), per_vertex.size)
    return bound


def path_bound_from_row_maxima(n: int, largest: int, total: int, smallest: int, rows: int) -> int:
    """:func:`path_bound` from the largest |out-weight| of each of the ``rows`` vertices that have arcs: their
    ``total`` and ``smallest``, and the ``largest`` |weight| of all. A simple path leaves at most n - 1 vertices, so
    when every vertex has arcs the smallest maximum drops out."""
    if n <= 1 or rows == 0:
        return 0
    return min((n - 1) * largest, total - (smallest if rows == n else 0))


def choose_dtype(n: int, weights: np.ndarray, indptr: np.ndarray | None = None) -> np.dtype:
    """int32 when every path length fits below INF32, else int64; raise if neither does.

    Non-negative weights need ``bound < INF32`` (sums of two values below INF32 still fit in int32);
    with negative weights the bound must stay below 2**29 so that a value derived from INF can never
    pass for a real distance. The bound covers every single weight as well as every simple path: a
    solver adds a weight to a distance even where no simple path uses the arc (a self-loop of a
    one-vertex graph), so the dtype must hold each weight exactly.
    """
    wmin, wmax = _weight_range(weights)
    largest = max(abs(wmin), abs(wmax))
    int32_limit = 2**29 if wmin < 0 else int(INF32)
    total = None
    if largest * weights.size < 2**63:  # the sum of every |w| bounds every simple path too, and costs one pass
        total = int(weights.sum(dtype=np.int64) if wmin >= 0 else np.abs(weights.astype(np.int64)).sum())
        if max(total, largest) < int32_limit:
            return np.dtype(np.int32)
    if indptr is not None and weights.size and largest < int32_limit:
        # cheap bounds on the per-vertex bound, whose exact value costs a segmented pass over every arc: it lies
        # at most at largest x (vertices with arcs), and at least at the sum of each vertex's first |w|, less largest
        starts = indptr[:-1][np.diff(indptr) > 0]
        if starts.size * largest < int32_limit:
            return np.dtype(np.int32)
        first = weights[starts] if wmin >= 0 else np.abs(weights[starts].astype(np.int64))
        if total is not None and total < 2**61 and min((n - 1) * largest,
                                                       int(first.sum(dtype=np.int64)) - largest) >= int32_limit:
            return np.dtype(np.int64)
    return distance_dtype(max(_path_bound(n, weights, indptr, wmin, wmax), largest), wmin < 0, n)


def distance_dtype(bound: int, negative: bool, n: int | None = None) -> np.dtype:
    """The distance dtype for a largest path length (or |weight|) ``bound``: int32 below INF32 (below 2**29 with
    ``negative`` weights), int64 below 2**61, else WeightOverflowError (``n`` named in it)."""
    if bound < (2**29 if negative else int(INF32)):
        return np.dtype(np.int32)
    if bound < 2**61:
        return np.dtype(np.int64)
    raise WeightOverflowError(f"simple paths up to {bound} long (n={n}) could overflow int64 distances")


def dense_predecessors(mat: np.ndarray, inf: int) -> np.ndarray:
    """The predecessor matrix that goes with a distance matrix of arcs (:meth:`Graph.to_dense`): p[i, j] = i for
    every arc i -> j, else -1 (and -1 on the diagonal)."""
    n = mat.shape[0]
    p = np.where(mat != inf, np.arange(n, dtype=np.int32)[:, None], -1).astype(np.int32)
    np.fill_diagonal(p, -1)
    return p


def _vertex_count(n) -> int:
    """``n`` as a Python int, checked: an integer in 0..MAX_VERTICES (vertex ids are stored as int32)."""
    if isinstance(n, (bool, np.bool_)):
        raise ValueError(f"n: {n!r} is not a vertex count")
    try:
        n = operator.index(n)
    except TypeError:
        raise ValueError(f"n: {n!r} is not an integer vertex count") from None
    if not 0 <= n <= MAX_VERTICES:
        raise ValueError(f"n = {n}: the vertex count must lie in 0..{MAX_VERTICES} (vertex ids are int32)")
    return n


def _check_memory_for(n: int) -> None:
    """Refuse a vertex count whose per-vertex arrays alone outgrow this machine's memory.

    Such an allocation does not fail cleanly: the kernel kills the process. A header that announces
    far more vertices than the file could mean is caught here with the count named.
    """
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows): nothing to compare with
        return
    need = 24 * (n + 1)  # degree counts (int64), offsets, and their int64 copy when the dtype is chosen
    if need > physical:
        raise ValueError(f"n = {n:,} vertices: building the graph needs at least {_size(need)}, more than this "
                         f"machine's {_size(physical)} of memory (is the vertex count right?)")


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


def _offsets_dtype(value, m: int) -> np.dtype | None:
    """A graph's ``offsets_dtype`` checked: None (automatic), int32 (only below 2**31 arcs) or int64."""
    if value is None:
        return None
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError):
        dtype = None
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"offsets_dtype: {value!r}, expected None (automatic), 'int32' or 'int64'")
    if dtype == np.int32 and m >= 2**31:
        raise ValueError(f"offsets_dtype: int32 offsets cannot index m = {m:,} arcs (2**31 or more)")
    return dtype


def _integer_array(name: str, values) -> np.ndarray:
    """``values`` as a 1-D integer array (any width, either sign); bool, float, object and text are refused.

    An empty array of any numeric dtype passes as int64: it holds no value that could be wrong.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, found shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind in "bf":
            return arr.astype(np.int64)
        raise ValueError(f"{name}: dtype {arr.dtype}, expected integers")
    return arr


def _integral_weights(weight: np.ndarray) -> np.ndarray:
    """Float weights that hold whole numbers within int64, as int64; anything else is refused."""
    if weight.dtype.kind != "f" or weight.size == 0:
        return weight
    if not np.all(np.mod(weight, 1) == 0):  # NaN and infinities fail too
        raise ValueError("weights must be integers")
    if float(np.abs(weight).max()) >= 2.0**63:
        raise WeightOverflowError(f"weight {float(np.abs(weight).max()):g} does not fit int64")
    return weight.astype(np.int64)



def morton(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Z-order keys of pairs of non-negative integers (16 bits of each used; -1, unreached, sorts last): sorting by
    them keeps pairs close in both coordinates close in the order (:meth:`Graph.hop_landmarks` gives the pairs)."""
    x = np.where(x < 0, 0xFFFF, np.minimum(x, 0xFFFF)).astype(np.uint64)
    y = np.where(y < 0, 0xFFFF, np.minimum(y, 0xFFFF)).astype(np.uint64)
    key = np.zeros_like(x)
    one = np.uint64(1)
    for bit in range(16):
        key |= ((x >> np.uint64(bit)) & one) << np.uint64(2 * bit)
        key |= ((y >> np.uint64(bit)) & one) << np.uint64(2 * bit + 1)
    return key

@dataclass(eq=False)
class Graph:
    """A directed graph with integer edge weights in CSR form (see the module docstring)."""

    n: int
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    name: str = "graph"
    weight_kind: str = "real"
    id_map: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    offsets_dtype: np.dtype | str | None = None  # None: int32 below 2**31 arcs, else int64; "int64" forces int64
    _landmarks: tuple | None = field(default=None, init=False, repr=False)  # hop_landmarks(), once
    _checksum: str | None = field(default=None, init=False, repr=False)  # checksum(), once (or from a .gcsr header)

    def __post_init__(self):
        """The one check of what a graph is, whatever built it (a reader, a generator, a cache, a caller).

        Shapes, integer dtypes and ranges are checked (a ValueError names the array at fault; the
        readers add the file), then the arrays take their canonical dtypes: indptr int32 (int64 from
        2**31 arcs, or when ``offsets_dtype`` is int64), indices int32 and the weights in
        :func:`choose_dtype`'s distance dtype, so a graph whose arrays came in other dtypes (a foreign
        cache) is the graph its text file gives.
        """
        n = self.n = _vertex_count(self.n)
        indptr = _integer_array("indptr", self.indptr)
        indices = _integer_array("indices", self.indices)
        weights = _integer_array("weights", self.weights)
        m = int(indices.size)
        if indptr.shape != (n + 1,):
            raise ValueError(f"indptr: {indptr.size} entries, expected n + 1 = {n + 1}")
        if int(indptr[0]) != 0 or int(indptr[-1]) != m:
            raise ValueError(f"indptr: runs from {int(indptr[0])} to {int(indptr[-1])}, expected 0 to m = {m} "
                             f"(the number of indices)")
        if weights.shape != (m,):
            raise ValueError(f"weights: {weights.size} entries, expected one per arc (m = {m})")
        falls = np.flatnonzero(indptr[1:] < indptr[:-1])
        if falls.size:
            j = int(falls[0])
            raise ValueError(f"indptr: decreases after entry {j} ({int(indptr[j])} then {int(indptr[j + 1])}); "
                             f"offsets must be non-decreasing")
        if m and (int(indices.min()) < 0 or int(indices.max()) >= n):
            bad = int(indices.min()) if int(indices.min()) < 0 else int(indices.max())
            raise ValueError(f"indices: vertex id {bad} out of range 0..{n - 1}")
        if self.weight_kind not in WEIGHT_KINDS:
            raise ValueError(f"weight_kind must be one of {WEIGHT_KINDS}")
        if self.id_map is not None:
            ids = np.asarray(self.id_map)
            if ids.shape != (n,) or ids.dtype.kind not in "iuU":
                raise ValueError(f"id_map: expected one integer or text id per vertex (n = {n}), found shape "
                                 f"{ids.shape} and dtype {ids.dtype}")
            self.id_map = ids
        if not isinstance(self.meta, dict):
            raise ValueError(f"meta: expected a dict, found {type(self.meta).__name__}")
        self.offsets_dtype = _offsets_dtype(self.offsets_dtype, m)
        self.indptr = np.ascontiguousarray(indptr, dtype=self.offsets_dtype or (np.int32 if m < 2**31 else np.int64))
        self.indices = np.ascontiguousarray(indices, dtype=np.int32)
        self.weights = np.ascontiguousarray(weights, dtype=choose_dtype(n, weights, self.indptr))

    # construction -------------------------------------------------------------------------------
    @classmethod
    def from_edges(cls, n, src, dst, weight=None, *, name="graph", weight_kind=None, id_map=None, meta=None,
                   offsets_dtype=None):
        """Build a graph from edge arrays (0-based ids); ``weight=None`` gives unit weights.

        Edges keep their input order within each source vertex; the weight dtype follows
        :func:`choose_dtype`. Float weights are accepted when they hold whole numbers.
        """
        n = _vertex_count(n)
        _check_memory_for(n)
        src = _integer_array("src", src)
        dst = _integer_array("dst", dst)
        if src.shape != dst.shape:
            raise ValueError("src and dst must be 1-D arrays of equal length")
        if weight is None:
            weight = np.ones(src.size, dtype=np.int64)
            weight_kind = weight_kind or "unit"
        weight = np.asarray(weight)
        if weight.shape != src.shape:
            raise ValueError("weight must have one entry per edge")
        weight = _integer_array("weights", _integral_weights(weight))
        for name_, arr in (("src", src), ("dst", dst)):
            if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= n):
                raise ValueError(f"{name_} vertex id out of range 0..{n - 1}")
        src = src.astype(np.int64, copy=False)  # ids are < n <= 2**31 - 1 now: the cast is exact
        if src.size > 1 and bool(np.any(src[1:] < src[:-1])):
            order = np.argsort(src, kind="stable")
            dst, weight = dst[order], weight[order]
        counts = np.bincount(src, minlength=n) if src.size else np.zeros(n, dtype=np.int64)
        indptr = np.zeros(n + 1, dtype=np.int32 if src.size < 2**31 else np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(n, indptr, dst, weight, name=name, weight_kind=weight_kind or "real", id_map=id_map,
                   meta=dict(meta or {}), offsets_dtype=offsets_dtype)

    # views --------------------------------------------------------------------------------------
    @property
    def m(self) -> int:
        return int(self.indices.size)

    @property
    def dtype(self) -> np.dtype:
        """Distance dtype (the weight dtype)."""
        return self.weights.dtype

    @property
    def inf(self) -> int:
        return inf_for(self.weights.dtype)

    @property
    def path_bound(self) -> int:
        """Largest absolute length of a simple path (see :func:`path_bound`)."""
        return path_bound(self.n, self.weights, self.indptr)

    @property
    def has_negative_weights(self) -> bool:
        return bool(self.m and int(self.weights.min()) < 0)

    def default_delta(self, width: int = DAVIDSON_WIDTH) -> int:
        """Delta-stepping bucket width for this graph: ``width`` x mean arc weight / mean out-degree.

        Davidson et al.'s rule for near-far (IPDPS'14): a bucket then holds about a warp's worth of
        arcs; deltastep_gpu and gapbs_sssp both use it when no delta is given. At least 1.
        """
        if self.m == 0:
            return 1
        mean_w = float(np.abs(self.weights).mean())
        mean_deg = self.m / max(1, int(np.count_nonzero(np.diff(self.indptr))))
        return max(1, int(round(width * mean_w / mean_deg)))

    def hop_landmarks(self) -> tuple[int, np.ndarray, np.ndarray]:
        """(depth, hops_a, hops_b): breadth-first hop counts from two far-apart landmarks (-1 where one does not
        reach), a the vertex farthest from the vertex of largest out-degree, b the one farthest from a, and depth
        the larger eccentricity of those two starts, a lower bound on the hop diameter. The solvers' automatic
        settings read the depth (a long-diameter road graph or a shallow social one) and order sources by the two
        hop counts (an embedding that keeps vertices close in the graph close in it). Computed once per graph."""
        if self._landmarks is None:
            from .csrops import bfs_hops as hops

            if self.n == 0:
                self._landmarks = (0, np.zeros(0, np.int64), np.zeros(0, np.int64))
                return self._landmarks
            first = hops(self, int(np.argmax(np.diff(self.indptr))))
            hops_a = hops(self, int(np.argmax(first)))
            hops_b = hops(self, int(np.argmax(hops_a)))
            self._landmarks = (int(max(first.max(), hops_a.max())), hops_a, hops_b)
        return self._landmarks

    def out_degree(self) -> np.ndarray:
        return np.diff(self.indptr).astype(np.int64)

    def coo(self):
        """(src, dst, weight) arrays in CSR order."""
        src = np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.indptr))
        return src, self.indices, self.weights

    def reverse(self) -> Graph:
        """The graph of incoming edges (every edge u->v becomes v->u)."""
        src, dst, w = self.coo()
        return Graph.from_edges(self.n, dst, src, w, name=f"{self.name}.reverse", weight_kind=self.weight_kind,
                                offsets_dtype=self.offsets_dtype)

    def with_weights(self, weights, weight_kind="generated") -> Graph:
        """Same edges, new weights (the dtype is chosen again)."""
        src, dst, _ = self.coo()
        return Graph.from_edges(self.n, src, dst, weights, name=self.name, weight_kind=weight_kind,
                                id_map=self.id_map, meta=self.meta, offsets_dtype=self.offsets_dtype)

    def relabel(self, new_id) -> Graph:
        """The same graph with vertex v renamed ``new_id[v]`` (a permutation of 0..n-1)."""
        new_id = np.asarray(new_id)
        if new_id.shape != (self.n,) or not np.array_equal(np.sort(new_id), np.arange(self.n)):
            raise ValueError(f"new_id must be a permutation of 0..{self.n - 1}")
        src, dst, w = self.coo()
        return Graph.from_edges(self.n, new_id[src], new_id[dst], w, name=self.name, weight_kind=self.weight_kind,
                                offsets_dtype=self.offsets_dtype)

    def simple(self) -> Graph:
        """Parallel edges reduced to the lightest one, self-loops dropped unless negative."""
        src, dst, w = self.coo()
        keep = (src != dst) | (w < 0)
        src, dst, w = src[keep], dst[keep], w[keep]
        order = np.lexsort((w, dst, src))
        src, dst, w = src[order], dst[order], w[order]
        first = np.ones(src.size, dtype=bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        return Graph.from_edges(self.n, src[first], dst[first], w[first], name=self.name,
                                weight_kind=self.weight_kind, offsets_dtype=self.offsets_dtype)

    def to_dense(self, dtype=None) -> np.ndarray:
        """n x n distance matrix for APSP: min over parallel edges, diagonal min(0, self-loop), INF elsewhere."""
        dtype = np.dtype(dtype or self.dtype)
        inf = inf_for(dtype)
        mat = np.full((self.n, self.n), inf, dtype=dtype)
        src, dst, w = self.coo()
        np.minimum.at(mat, (src, dst), w.astype(dtype))
        diag = np.arange(self.n)
        mat[diag, diag] = np.minimum(mat[diag, diag], 0)
        return mat

    # identity and statistics --------------------------------------------------------------------
    def checksum(self) -> str:
        """sha256 of n and the CSR arrays as int64 offsets, int32 ids and int64 weights (identity of the graph a
        record was measured on), computed once per graph. Arrays already in those dtypes are hashed in place, the
        others converted a block at a time: no copy of a graph of billions of arcs."""
        if self._checksum is None:
            h = hashlib.sha256()
            h.update(np.int64(self.n).tobytes())
            for arr, dtype in ((self.indptr, np.int64), (self.indices, np.int32), (self.weights, np.int64)):
                if arr.dtype == dtype and arr.flags.c_contiguous:
                    h.update(arr)
                    continue
                for lo in range(0, arr.size, 1 << 24):
                    h.update(arr[lo:lo + (1 << 24)].astype(dtype))
            self._checksum = h.hexdigest()
        return self._checksum

    def stats(self) -> dict:
        """n, m, degree statistics, weight range, duplicates and self-loops (what ``gpusp info`` prints)."""
        src, dst, w = self.coo()
        deg = self.out_degree()
        pair = src.astype(np.int64) * max(self.n, 1) + dst
        duplicates = int(pair.size - np.unique(pair).size)
        return {
            "name": self.name,
            "n": self.n,
            "m": self.m,
            "out_degree_min": int(deg.min()) if self.n else 0,
            "out_degree_max": int(deg.max()) if self.n else 0,
            "out_degree_mean": float(deg.mean()) if self.n else 0.0,
            "zero_out_degree": int((deg == 0).sum()),
            "weight_min": int(w.min()) if self.m else None,
            "weight_max": int(w.max()) if self.m else None,
            "weight_kind": self.weight_kind,
            "weight_dtype": str(self.dtype),
            "duplicate_edges": duplicates,
            "self_loops": int((src == dst).sum()),
            "checksum": self.checksum(),
        }

    def describe(self, source: str = "") -> str:
        """:meth:`stats` as the text block that ``gpusp info`` prints."""
        st = self.stats()
        kinds = {"real": "real (from the file)", "generated": "generated (seeded)", "unit": "none (unit weights)"}
        lines = [f"graph            {st['name']}  ({source})", f"vertices n       {st['n']:,}",
                 f"edges m          {st['m']:,}",
                 f"out-degree       min {st['out_degree_min']}  mean {st['out_degree_mean']:.2f}  "
                 f"max {st['out_degree_max']}  (zero: {st['zero_out_degree']:,})",
                 f"weights          {kinds[st['weight_kind']]}, range [{st['weight_min']}, {st['weight_max']}], "
                 f"distances {st['weight_dtype']}",
                 f"duplicate edges  {st['duplicate_edges']:,}", f"self-loops       {st['self_loops']:,}",
                 f"checksum         {st['checksum']}"]
        if self.meta:
            lines.append(f"meta             {json.dumps(self.meta, default=str)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Graph(name={self.name!r}, n={self.n}, m={self.m}, dtype={self.dtype}, weights={self.weight_kind})"
