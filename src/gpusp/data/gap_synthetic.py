"""GAPBS's synthetic graphs at the field's sizes: ``kron`` (Graph500 Kronecker) and ``urand`` (uniform random), built
in parallel with Numba into a CSR :class:`~gpusp.data.graph.Graph`.

Every random number is SplitMix64's output at a counter fixed by the seed and the edge index, so an edge is the same
whatever thread draws it, and the CSR is canonical (rows sorted by target), so the arrays are the same bytes whatever
the thread count. The builder does what GAPBS's does with a weighted edge list: both directions of every edge,
self-loops dropped, parallel arcs merged into the lightest. Rules, stages and peak memory: docs/data.md (Generators).
"""

from __future__ import annotations

import sys
import time

import numba
import numpy as np
from numba import njit, prange

from .csrops import mix64
from .graph import distance_dtype, path_bound_from_row_maxima

KRON, URAND = 0, 1
MAX_WEIGHT_SPAN = 2**20 - 1
"""Largest ``wmax - wmin``: a weight offset is packed into 20 bits of an arc's sort key."""

_MASK64 = 2**64 - 1
_GAMMA = 0x9E3779B97F4A7C15
_U32 = 2**32 - 1
# Graph500's quadrant thresholds as GAPBS writes them (uint32 products, truncated): a = 0.57, b = c = 0.19
_A = int(0.57 * _U32)
_AB = _A + int(0.19 * _U32)
_ABC = _AB + int(0.19 * _U32)
_SALT = {"topology": 1, "weights": 2, "permutation": 3}


def splitmix64(z: int) -> int:
    """SplitMix64's output function (Steele, Lea and Flood 2014) on a 64-bit integer, in Python ints."""
    z = (z + _GAMMA) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def stream_key(kind: int, seed: int, purpose: str) -> np.uint64:
    """The key of one of a graph's three independent streams (topology, weights, permutation)."""
    return np.uint64(splitmix64(splitmix64(splitmix64(seed) ^ kind) ^ _SALT[purpose]))


@njit(inline="always")
def _draw(key, i):
    """Output ``i`` of the SplitMix64 stream that starts at ``key``."""
    return mix64(key + (np.uint64(i) + np.uint64(1)) * np.uint64(_GAMMA))


@njit(inline="always")
def _kron_pair(key, e, scale):
    """Graph500 R-MAT: per bit one uint32 picks the quadrant exactly as GAPBS's MakeRMatEL does; two per draw."""
    words = (scale + 1) >> 1
    base = np.uint64(e) * np.uint64(words)
    u = 0
    v = 0
    for j in range(words):
        x = _draw(key, base + np.uint64(j))
        for half in range(2):
            if 2 * j + half >= scale:
                break
            r = (x >> np.uint64(32)) if half == 0 else (x & np.uint64(_U32))
            u <<= 1
            v <<= 1
            if r < np.uint64(_AB):
                if r > np.uint64(_A):
                    v += 1
            else:
                u += 1
                if r > np.uint64(_ABC):
                    v += 1
    return u, v


@njit(inline="always")
def _urand_pair(key, e, scale):
    """Both endpoints uniform in [0, 2**scale): the top ``scale`` bits of one draw, then the next ``scale``."""
    if scale == 0:
        return 0, 0
    x = _draw(key, e)
    mask = (np.uint64(1) << np.uint64(scale)) - np.uint64(1)
    return np.int64(x >> np.uint64(64 - scale)), np.int64((x >> np.uint64(64 - 2 * scale)) & mask)


@njit(inline="always")
def _permute(x, scale, key):
    """A keyed pseudo-random permutation of 0..2**scale - 1 (GAPBS shuffles kron's ids with std::shuffle): a
    four-round Feistel network, SplitMix64 as round function, on halves of floor(scale / 2) and ceil(scale / 2) bits
    that swap widths each round (so no value leaves the range)."""
    high = scale >> 1
    low = scale - high
    y = np.uint64(x)
    for r in range(4):
        lo = y & ((np.uint64(1) << np.uint64(low)) - np.uint64(1))
        f = _draw(key ^ lo, r) & ((np.uint64(1) << np.uint64(high)) - np.uint64(1))
        y = (lo << np.uint64(high)) | ((y >> np.uint64(low)) ^ f)
        high, low = low, high
    return np.int64(y)


@njit(parallel=True, cache=True)
def feistel_permutation(scale, key):
    """The permutation kron relabels its vertices with, as an array (``perm[raw id]``)."""
    perm = np.empty(1 << scale, np.int64)
    for x in prange(1 << scale):
        perm[x] = _permute(x, scale, key)
    return perm


@njit(inline="always")
def _pair(kind, key, pkey, e, scale):
    if kind == KRON:
        u, v = _kron_pair(key, e, scale)
        return _permute(u, scale, pkey), _permute(v, scale, pkey)
    return _urand_pair(key, e, scale)


@njit(inline="always")
def _weight_offset(wkey, e, span1):
    """Uniform in 0..span1 - 1: the top 32 bits of a draw times span1, shifted down (bias below span1 / 2**32)."""
    return ((_draw(wkey, e) >> np.uint64(32)) * np.uint64(span1)) >> np.uint64(32)


@njit(parallel=True, cache=True)
def _draw_edges(kind, key, pkey, scale, n_edges, chunks, low_bits, buckets):
    """Every edge's endpoints, and the arcs per (chunk of edges, bucket of sources): an edge u-v, u != v, gives
    u -> v and v -> u, a self-loop none."""
    src = np.empty(n_edges, np.int32)
    dst = np.empty(n_edges, np.int32)
    hist = np.zeros((chunks, buckets), np.int64)
    for c in prange(chunks):
        for e in range(n_edges * c // chunks, n_edges * (c + 1) // chunks):
            u, v = _pair(kind, key, pkey, e, scale)
            src[e], dst[e] = u, v
            if u != v:
                hist[c, u >> low_bits] += 1
                hist[c, v >> low_bits] += 1
    return src, dst, hist


@njit(parallel=True, cache=True)
def _scatter(src, dst, wkey, scale, low_bits, wbits, span1, cursor, arcs):
    """Each chunk gives its edges their weights and writes both arcs, packed as (source's low bits, target, weight
    offset) into one uint64 sort key, at its own cursor in the bucket of the arc's source."""
    chunks = cursor.shape[0]
    n_edges = src.size
    low_mask = (1 << low_bits) - 1
    top = np.uint64(scale + wbits)
    for c in prange(chunks):
        pos = cursor[c]
        for e in range(n_edges * c // chunks, n_edges * (c + 1) // chunks):
            u, v = np.int64(src[e]), np.int64(dst[e])
            if u == v:
                continue
            w = _weight_offset(wkey, e, span1)
            b = u >> low_bits
            arcs[pos[b]] = (np.uint64(u & low_mask) << top) | (np.uint64(v) << np.uint64(wbits)) | w
            pos[b] += 1
            b = v >> low_bits
            arcs[pos[b]] = (np.uint64(v & low_mask) << top) | (np.uint64(u) << np.uint64(wbits)) | w
            pos[b] += 1


@njit(parallel=True, cache=True)
def _edge_weights(wkey, n_edges, wmin, span1):
    weight = np.empty(n_edges, np.int64)
    for e in prange(n_edges):
        weight[e] = wmin + np.int64(_weight_offset(wkey, e, span1))
    return weight


@njit(parallel=True, cache=True)
def _squish(arcs, bstart, low_bits, scale, wbits, wmin, degree, kept, row_max):
    """Per bucket: an LSD radix sort of its arcs by (source, target), digits of at most 11 bits, then one arc per
    (source, target) with the smallest weight of the group (GAPBS's SquishCSR keeps the lightest of parallel arcs),
    compacted to the bucket's start. ``degree[v]`` gets v's row length, ``kept[b]`` the bucket's arcs,
    ``row_max[b]`` (sum, smallest, count, largest) of the non-empty rows' largest |weight| (what the distance dtype's
    path bound needs)."""
    key_bits = scale + low_bits
    passes = max(1, (key_bits + 10) // 11)
    digit = (key_bits + passes - 1) // passes
    radix = 1 << digit
    dmask = np.uint64(radix - 1)
    wshift = np.uint64(wbits)
    wmask = (np.uint64(1) << wshift) - np.uint64(1)
    top = np.uint64(scale + wbits)
    for b in prange(bstart.size - 1):
        size = bstart[b + 1] - bstart[b]
        here = arcs[bstart[b]:bstart[b + 1]]
        counts = np.zeros((passes, radix), np.int64)
        for k in range(size):
            key = here[k] >> wshift
            for p in range(passes):
                counts[p, np.int64((key >> np.uint64(p * digit)) & dmask)] += 1
        for p in range(passes):
            total = 0
            for d in range(radix):
                total, counts[p, d] = total + counts[p, d], total
        src, dst = here, np.empty(size, np.uint64)
        for p in range(passes):
            shift = np.uint64(p * digit) + wshift
            for k in range(size):
                d = np.int64((src[k] >> shift) & dmask)
                dst[counts[p, d]] = src[k]
                counts[p, d] += 1
            src, dst = dst, src
        out = 0
        k = 0
        total, smallest, rows, heaviest = 0, np.int64(2**62), 0, 0
        while k < size:  # one row (source) a turn, one (source, target) group a step
            row = src[k] >> top
            before = out
            largest = 0
            while k < size and src[k] >> top == row:
                group = src[k] >> wshift
                w = src[k] & wmask
                k += 1
                while k < size and src[k] >> wshift == group:
                    w = min(w, src[k] & wmask)
                    k += 1
                here[out] = (group << wshift) | w
                out += 1
                largest = max(largest, abs(wmin + np.int64(w)))
            degree[(b << low_bits) + np.int64(row)] = out - before
            total += largest
            smallest = min(smallest, largest)
            heaviest = max(heaviest, largest)
            rows += 1
        kept[b] = out
        row_max[b, 0], row_max[b, 1], row_max[b, 2], row_max[b, 3] = total, smallest, rows, heaviest


@njit(parallel=True, cache=True)
def _unpack(arcs, bstart, kept, indptr, low_bits, wbits, scale, wmin, indices, weights):
    """The compacted buckets into the CSR arrays: a bucket's rows are consecutive vertices, in order."""
    dmask = (np.uint64(1) << np.uint64(scale)) - np.uint64(1)
    wmask = (np.uint64(1) << np.uint64(wbits)) - np.uint64(1)
    for b in prange(bstart.size - 1):
        src = bstart[b]
        dst = np.int64(indptr[b << low_bits])
        for k in range(kept[b]):
            key = arcs[src + k]
            indices[dst + k] = np.int32((key >> np.uint64(wbits)) & dmask)
            weights[dst + k] = wmin + np.int64(key & wmask)


def edge_list(kind: int, scale: int, edge_factor: int, seed: int, wmin: int, wmax: int):
    """(src, dst, weight) of every edge drawn, self-loops and repeats included: the edge list GAPBS's generator
    hands its builder, before :func:`build` symmetrises and squishes it."""
    n_edges = edge_factor << scale
    src, dst, _ = _draw_edges(kind, stream_key(kind, seed, "topology"), stream_key(kind, seed, "permutation"), scale,
                              n_edges, 1, 0, 1 << scale)
    return src, dst, _edge_weights(stream_key(kind, seed, "weights"), n_edges, wmin, wmax - wmin + 1)


def layout(scale: int, edge_factor: int, wbits: int) -> tuple[int, int, int]:
    """(low_bits, buckets, chunks): sources share a bucket when they agree above their ``low_bits`` bits, chosen so
    that a bucket holds about 2**16 arcs (512 KiB, within a core's cache) and there are at most 2**14 buckets; the
    edges are drawn in ``chunks`` runs. Neither changes the graph, only how the work is split."""
    low_bits = max(scale - 14, 17 - (2 * edge_factor).bit_length())
    low_bits = max(0, min(low_bits, scale, 64 - scale - wbits))
    return low_bits, 1 << (scale - low_bits), int(min(max(1, (edge_factor << scale) >> 16), 1024))


def peak_bytes(scale: int, edge_factor: int, offset_bytes: int, weight_bytes: int) -> int:
    """Most bytes :func:`build` holds at once, an upper bound: with E = edge_factor * 2**scale edges drawn and
    A = 2E arcs at most, the packed arcs (8A) beside either the edge list and the chunk tables (8E + 16 chunks
    buckets) or the CSR arrays being unpacked ((4 + weight_bytes) A + offset_bytes (n + 1)); plus sort space for 16
    threads, 8 bytes an arc in buckets of up to 4 times the mean."""
    n = 1 << scale
    n_edges = edge_factor * n
    arcs = 2 * n_edges
    _, buckets, chunks = layout(scale, edge_factor, 20)
    sort_space = 16 * (8 * 4 * arcs // buckets + 2**16)
    return 8 * arcs + max(8 * n_edges + 16 * chunks * buckets, (4 + weight_bytes) * arcs + offset_bytes * (n + 1)
                          + sort_space)


def build(kind: int, scale: int, edge_factor: int, seed: int, wmin: int, wmax: int, force_int64: bool = False,
          split: tuple[int, int] | None = None):
    """(indptr, indices, weights) of a GAPBS kron or urand graph; the weights already in the distance dtype
    :class:`~gpusp.data.graph.Graph` will choose, the offsets int64 from 2**31 arcs drawn or when forced (Graph
    narrows them when fewer than 2**31 arcs remain and none were forced). ``split``: (low_bits, chunks) instead of
    :func:`layout`'s (the tests' proof that the split does not change the graph)."""
    n = 1 << scale
    n_edges = edge_factor * n
    span = wmax - wmin
    wbits = span.bit_length()
    low_bits, buckets, chunks = layout(scale, edge_factor, wbits)
    if split is not None:
        low_bits, chunks = split
        buckets = 1 << (scale - low_bits)
    said = _Stages(f"{'kron' if kind == KRON else 'urand'} scale {scale}", scale >= PROGRESS_SCALE)
    src, dst, hist = _draw_edges(kind, stream_key(kind, seed, "topology"), stream_key(kind, seed, "permutation"),
                                 scale, n_edges, chunks, low_bits, buckets)
    said(f"{n_edges:,} edges drawn")
    bstart = np.zeros(buckets + 1, np.int64)
    np.cumsum(hist.sum(axis=0), out=bstart[1:])
    cursor = np.cumsum(hist, axis=0) - hist + bstart[:-1][None, :]
    del hist
    arcs = np.empty(int(bstart[-1]), np.uint64)
    _scatter(src, dst, stream_key(kind, seed, "weights"), scale, low_bits, wbits, span + 1, cursor, arcs)
    del src, dst, cursor
    said(f"{arcs.size:,} arcs placed by source, with their weights")
    kept = np.zeros(buckets, np.int64)
    row_max = np.zeros((buckets, 4), np.int64)
    indptr = np.zeros(n + 1, np.int64 if force_int64 or arcs.size >= 2**31 else np.int32)
    with numba.parallel_chunksize(1):  # buckets differ in size (kron's hubs): hand them out one at a time
        _squish(arcs, bstart, low_bits, scale, wbits, wmin, indptr[1:], kept, row_max)
    np.cumsum(indptr[1:], out=indptr[1:])
    m = int(indptr[-1])
    said(f"made simple: {m:,} arcs kept")
    rows = row_max[row_max[:, 2] > 0]
    largest = int(rows[:, 3].max()) if m else 0
    bound = path_bound_from_row_maxima(n, largest, int(rows[:, 0].sum()), int(rows[:, 1].min()),
                                       int(rows[:, 2].sum())) if m else 0
    indices = np.empty(m, np.int32)
    weights = np.empty(m, distance_dtype(max(bound, largest), wmin < 0))
    _unpack(arcs, bstart, kept, indptr, low_bits, wbits, scale, wmin, indices, weights)
    said("CSR arrays written")
    return indptr, indices, weights


PROGRESS_SCALE = 22  # from this scale (a few seconds and up), build() says each stage done on stderr


class _Stages:
    """``said(what)``: one line on stderr with the seconds since the build began, when ``on``."""

    def __init__(self, title: str, on: bool):
        self.title, self.on, self.t0 = title, on, time.perf_counter()

    def __call__(self, what: str) -> None:
        if self.on:
            print(f"gpusp: {self.title}: {what} ({time.perf_counter() - self.t0:.1f} s)", file=sys.stderr, flush=True)


__all__ = ["KRON", "MAX_WEIGHT_SPAN", "URAND", "build", "edge_list", "feistel_permutation", "layout", "peak_bytes",
           "splitmix64", "stream_key"]
