"""Contraction hierarchies built on the host with Numba (:func:`build`: a :class:`Hierarchy` in sweep order), the
upward searches of PHAST's queries (:func:`upward_spaces`) and a query on the host that checks a hierarchy without a
device (:func:`cpu_query`). Witness searches, the contraction order, the core and the sweep levels:
docs/solvers/phast.md ("Preprocessing").
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

INF = np.int64(2**62)
RECOMPUTE_PAIRS = 4096  # a neighbour with more in x out pairs gets +1 (and its depth) instead of new searches
HEAP_CAP = 1 << 20  # witness-search heap entries; a search that would exceed them stops (bounded, still exact)


# --- adjacency lists that grow: per vertex a (start, length, capacity) slice of a pool -------------------------------
@njit(cache=True)
def _lists(n, tail, head, w):
    """Out- and in-lists of the arcs (tail, head, w), each vertex with room for twice its degree."""
    odeg = np.zeros(n, np.int64)
    ideg = np.zeros(n, np.int64)
    for e in range(tail.size):
        odeg[tail[e]] += 1
        ideg[head[e]] += 1
    ost, icap_start = np.zeros(n, np.int64), np.zeros(n, np.int64)
    ocap, icap = 2 * odeg + 2, 2 * ideg + 2
    opos, ipos = 0, 0
    for v in range(n):
        ost[v] = opos
        icap_start[v] = ipos
        opos += ocap[v]
        ipos += icap[v]
    oto, ow = np.empty(2 * opos + 1024, np.int32), np.empty(2 * opos + 1024, np.int64)
    ito, iw = np.empty(2 * ipos + 1024, np.int32), np.empty(2 * ipos + 1024, np.int64)
    olen, ilen = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for e in range(tail.size):
        u, v = tail[e], head[e]
        oto[ost[u] + olen[u]] = v
        ow[ost[u] + olen[u]] = w[e]
        olen[u] += 1
        ito[icap_start[v] + ilen[v]] = u
        iw[icap_start[v] + ilen[v]] = w[e]
        ilen[v] += 1
    ends = np.array([opos, ipos], np.int64)
    return (ost, olen, ocap, oto, ow, icap_start, ilen, icap, ito, iw, ends)


@njit(cache=True)
def _append(start, length, cap, to, wt, ends, side, x, y, c):
    """Append arc (y, c) to x's list, moving the list to the pool's end with twice the room when it is full."""
    if length[x] == cap[x]:
        end = ends[side]
        s0 = start[x]
        for i in range(length[x]):
            to[end + i] = to[s0 + i]
            wt[end + i] = wt[s0 + i]
        start[x] = end
        cap[x] = 2 * cap[x] + 2
        ends[side] = end + cap[x]
    k = start[x] + length[x]
    to[k] = y
    wt[k] = c
    length[x] += 1


@njit(cache=True)
def _add_arc(g, u, w, c):
    """Shortcut u -> w of weight c: lowers an existing arc, else appends to both lists; True when the arc is new."""
    ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends = g
    for i in range(ost[u], ost[u] + olen[u]):
        if oto[i] == w:
            if c < ow[i]:
                ow[i] = c
                for j in range(ist[w], ist[w] + ilen[w]):
                    if ito[j] == u:
                        iw[j] = c
                        break
            return False
    _append(ost, olen, ocap, oto, ow, ends, 0, u, w, c)
    _append(ist, ilen, icap, ito, iw, ends, 1, w, u, c)
    return True


@njit(cache=True)
def _remove(start, length, to, wt, x, y):
    """Remove y from x's list (the last entry takes its place)."""
    last = start[x] + length[x] - 1
    for i in range(start[x], last + 1):
        if to[i] == y:
            to[i] = to[last]
            wt[i] = wt[last]
            length[x] -= 1
            return


@njit(cache=True)
def _unlink(start, length, to, other_start, other_length, other_to, other_w, v, mark, nbrs, k):
    """Take v out of the other-side lists of its neighbours on one side (out-neighbours' in-lists, or the reverse),
    and collect each neighbour once into nbrs[k:] (mark[x] == v + 1: collected); returns the new k."""
    for i in range(start[v], start[v] + length[v]):
        x = to[i]
        _remove(other_start, other_length, other_to, other_w, x, v)
        if mark[x] != v + 1:
            mark[x] = v + 1
            nbrs[k] = x
            k += 1
    return k


@njit(cache=True)
def _room(g, v):
    """Pool entries contracting v may take at most (each list it appends to can double more than once)."""
    ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends = g
    need_out, need_in = 8, 8
    for i in range(ist[v], ist[v] + ilen[v]):
        need_out += 4 * (olen[ito[i]] + olen[v] + 2)
    for i in range(ost[v], ost[v] + olen[v]):
        need_in += 4 * (ilen[oto[i]] + ilen[v] + 2)
    return need_out, need_in


@njit(cache=True)
def _pool(to, wt, used, need):
    """One side's (heads, weights) pool with room for ``need`` entries after the ``used`` ones (doubled at least)."""
    if used + need <= to.size:
        return to, wt
    size = max(2 * to.size, used + need)
    to2, wt2 = np.empty(size, np.int32), np.empty(size, np.int64)
    to2[:used] = to[:used]
    wt2[:used] = wt[:used]
    return to2, wt2


@njit(cache=True)
def _grown(g, need_out, need_in):
    """The lists with pools large enough for ``need_out`` / ``need_in`` more entries."""
    ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends = g
    oto, ow = _pool(oto, ow, ends[0], need_out)
    ito, iw = _pool(ito, iw, ends[1], need_in)
    return (ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends)


# --- a binary min-heap of (key, vertex, hops) entries; stale entries are skipped when popped -------------------------
@njit(cache=True)
def _push(hk, hv, hh, size, key, v, h):
    i = size
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] < key or (hk[p] == key and hv[p] <= v):
            break
        hk[i], hv[i], hh[i] = hk[p], hv[p], hh[p]
        i = p
    hk[i], hv[i], hh[i] = key, v, h
    return size + 1


@njit(cache=True)
def _pop(hk, hv, hh, size):
    """Remove the smallest entry (returned first) and return the new size."""
    key, v, h = hk[0], hv[0], hh[0]
    size -= 1
    lk, lv, lh = hk[size], hv[size], hh[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and (hk[c + 1] < hk[c] or (hk[c + 1] == hk[c] and hv[c + 1] < hv[c])):
            c += 1
        if lk < hk[c] or (lk == hk[c] and lv <= hv[c]):
            break
        hk[i], hv[i], hh[i] = hk[c], hv[c], hh[c]
        i = c
    if size > 0:
        hk[i], hv[i], hh[i] = lk, lv, lh
    return key, v, h, size


@njit(cache=True)
def _witness(g, ws, src, skip, limit, settle, hops):
    """Bounded Dijkstra from src avoiding ``skip`` up to distance ``limit``; returns the stamp that marks the
    distances it found (``dist[x]`` is valid where ``seen[x] == stamp``)."""
    ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends = g
    dist, seen, done, hk, hv, hh, ctr = ws
    ctr[0] += 1
    stamp = ctr[0]
    seen[src] = stamp
    dist[src] = 0
    size = _push(hk, hv, hh, 0, 0, src, 0)
    settled = 0
    while size > 0:
        key, x, h, size = _pop(hk, hv, hh, size)
        if done[x] == stamp or key > dist[x]:
            continue
        if key > limit or settled >= settle:
            break
        done[x] = stamp
        settled += 1
        if h >= hops:
            continue
        for i in range(ost[x], ost[x] + olen[x]):
            y = oto[i]
            nd = key + ow[i]
            if y == skip or nd > limit or (seen[y] == stamp and nd >= dist[y]):
                continue
            if size >= hk.size:
                return stamp
            seen[y] = stamp
            dist[y] = nd
            size = _push(hk, hv, hh, size, nd, y, h + 1)
    return stamp


@njit(cache=True)
def _process(g, ws, v, apply, settle, hops):
    """Contract v (``apply``) or count what contracting it would do: (shortcuts needed, new arcs added)."""
    ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends = g
    dist, seen = ws[0], ws[1]
    if olen[v] == 0 or ilen[v] == 0:
        return 0, 0
    wmax = 0
    for j in range(ost[v], ost[v] + olen[v]):
        wmax = max(wmax, ow[j])
    needed, added = 0, 0
    for i in range(ist[v], ist[v] + ilen[v]):
        u, wu = ito[i], iw[i]
        stamp = _witness(g, ws, u, v, wu + wmax, settle, hops)
        for j in range(ost[v], ost[v] + olen[v]):
            w = oto[j]
            c = wu + ow[j]
            if w == u or (seen[w] == stamp and dist[w] <= c):
                continue
            needed += 1
            if apply and _add_arc(g, u, w, c):
                added += 1
    return needed, added


@njit(cache=True)
def _priority(g, ws, v, cn, depth, settle, hops):
    needed, _ = _process(g, ws, v, False, settle, hops)
    return 2 * (needed - g[1][v] - g[6][v]) + cn[v] + depth[v]


@njit(cache=True)
def _record(at, tail, head, wt, x, start, length, to, w, reverse):
    """Append x's list to the arc arrays from index ``at`` (``reverse``: the list holds in-arcs, x is the head)."""
    for i in range(start[x], start[x] + length[x]):
        if reverse:
            tail[at], head[at] = to[i], x
        else:
            tail[at], head[at] = x, to[i]
        wt[at] = w[i]
        at += 1
    return at


@njit(cache=True)
def _bigger(a, size):
    out = np.empty(size, a.dtype)
    out[:a.size] = a
    return out


@njit(cache=True)
def _contract(n, tail, head, w, settle, hops, core_degree):
    """Contract every vertex (or all but the core): (rank, up arcs, down arcs, core size, shortcuts, searches)."""
    g = _lists(n, tail, head, w)
    ws = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.empty(HEAP_CAP, np.int64),
          np.empty(HEAP_CAP, np.int32), np.empty(HEAP_CAP, np.int32), np.zeros(1, np.int64))
    cn, depth, prio = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    pk = np.empty(4 * n + 16, np.int64)  # the priority queue: keys prio << 32 | v, stale ones skipped
    pv, ph = np.empty(pk.size, np.int32), np.empty(pk.size, np.int32)
    psize = 0
    for v in range(n):
        prio[v] = _priority(g, ws, v, cn, depth, settle, hops)
        psize = _push(pk, pv, ph, psize, prio[v], v, 0)
    cap = 2 * tail.size + 16
    ut, uh, uw = np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int64)
    dt, dh, dw = np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int64)
    nu, nd = 0, 0
    rank = np.full(n, -1, np.int64)
    mark = np.zeros(n, np.int64)
    nbrs = np.empty(n, np.int64)
    done, shortcuts, arcs_left = 0, 0, tail.size
    while psize > 0:
        p, v, _, psize = _pop(pk, pv, ph, psize)
        if rank[v] >= 0 or p != prio[v]:
            continue
        if core_degree > 0 and arcs_left > core_degree * (n - done):
            break
        fresh = _priority(g, ws, v, cn, depth, settle, hops)
        if fresh > p:  # it rose: back into the queue with the fresh value
            prio[v] = fresh
            if psize + 1 > pk.size:
                pk, pv, ph = _bigger(pk, 2 * pk.size), _bigger(pv, 2 * pk.size), _bigger(ph, 2 * pk.size)
            psize = _push(pk, pv, ph, psize, fresh, v, 0)
            continue
        need_out, need_in = _room(g, v)
        g = _grown(g, need_out, need_in)
        ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends = g
        if nu + olen[v] > ut.size:
            size = 2 * ut.size + olen[v]
            ut, uh, uw = _bigger(ut, size), _bigger(uh, size), _bigger(uw, size)
        if nd + ilen[v] > dt.size:
            size = 2 * dt.size + ilen[v]
            dt, dh, dw = _bigger(dt, size), _bigger(dh, size), _bigger(dw, size)
        nu = _record(nu, ut, uh, uw, v, ost, olen, oto, ow, False)
        nd = _record(nd, dt, dh, dw, v, ist, ilen, ito, iw, True)
        _, added = _process(g, ws, v, True, settle, hops)
        shortcuts += added
        arcs_left += added - olen[v] - ilen[v]
        rank[v] = done
        done += 1
        k = _unlink(ost, olen, oto, ist, ilen, ito, iw, v, mark, nbrs, 0)
        k = _unlink(ist, ilen, ito, ost, olen, oto, ow, v, mark, nbrs, k)
        olen[v] = 0
        ilen[v] = 0
        if psize + k > pk.size:
            size = 2 * pk.size + k
            pk, pv, ph = _bigger(pk, size), _bigger(pv, size), _bigger(ph, size)
        for j in range(k):
            x = nbrs[j]
            cn[x] += 1
            grew = max(depth[x], depth[v] + 1) - depth[x]
            depth[x] += grew
            if ilen[x] * olen[x] > RECOMPUTE_PAIRS:  # a hub: its searches would cost more than the order gains
                prio[x] += 1 + grew
            else:
                prio[x] = _priority(g, ws, x, cn, depth, settle, hops)
            psize = _push(pk, pv, ph, psize, prio[x], x, 0)
    ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw, ends = g
    core = n - done
    for v in range(n):  # the core: top ranks, every arc among its vertices upward
        if rank[v] < 0:
            rank[v] = done
            done += 1
            if nu + olen[v] > ut.size:
                size = 2 * ut.size + olen[v]
                ut, uh, uw = _bigger(ut, size), _bigger(uh, size), _bigger(uw, size)
            nu = _record(nu, ut, uh, uw, v, ost, olen, oto, ow, False)
    return rank, ut[:nu], uh[:nu], uw[:nu], dt[:nd], dh[:nd], dw[:nd], core, shortcuts, ws[6][0]


@njit(cache=True)
def _levels(n, rank, dptr, dtail):
    """Sweep level per vertex: 0 without downward in-arcs, else 1 + the highest level among their tails (vertices
    visited by decreasing rank, a topological order of the downward graph)."""
    by_rank = np.empty(n, np.int64)
    for v in range(n):
        by_rank[rank[v]] = v
    level = np.zeros(n, np.int32)
    for r in range(n - 1, -1, -1):
        v = by_rank[r]
        lv = 0
        for a in range(dptr[v], dptr[v + 1]):
            lv = max(lv, level[dtail[a]] + 1)
        level[v] = lv
    return level


def group_arcs(n, key, other, w, key_dtype=np.int32):
    """Arcs grouped by ``key`` (stable, then by ``other``): (ptr int64, other, w)."""
    order = np.lexsort((other, key))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=n), out=ptr[1:])
    return ptr, other[order].astype(key_dtype), w[order]


def simple_arcs(graph):
    """The graph's arcs without self-loops, the lightest of duplicates kept: (tail, head, w) as int64."""
    src, dst, w = (a.astype(np.int64) for a in graph.coo())
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    order = np.lexsort((w, dst, src))
    src, dst, w = src[order], dst[order], w[order]
    first = np.ones(src.size, dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    return src[first], dst[first], w[first]


@dataclass
class Hierarchy:
    """A contraction hierarchy in sweep order (vertex ids ``new``; ``order[new]`` is the original id)."""

    n: int
    order: np.ndarray  # int32 [n]: new id -> original id (by level, then original id)
    position: np.ndarray  # int32 [n]: original id -> new id
    rank: np.ndarray  # int64 [n]: contraction rank per new id (core vertices last)
    up_ptr: np.ndarray  # int64 [n + 1]: upward arcs by tail (new ids), the core's arcs among them
    up_head: np.ndarray  # int32
    up_w: np.ndarray  # int64
    down_ptr: np.ndarray  # int64 [n + 1]: downward arcs by head (new ids)
    down_tail: np.ndarray  # int32
    down_w: np.ndarray  # int64
    level_ptr: np.ndarray  # int64 [levels + 1]: level l holds new ids level_ptr[l] .. level_ptr[l + 1] - 1
    core: int  # vertices left uncontracted
    shortcuts: int  # arcs added by contraction (not counting lowered existing arcs)
    searches: int  # witness searches run
    seconds: float  # wall time of the build

    @property
    def levels(self) -> int:
        return len(self.level_ptr) - 1

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.order, self.position, self.rank, self.up_ptr, self.up_head, self.up_w,
                                      self.down_ptr, self.down_tail, self.down_w, self.level_ptr))


def build(graph, *, settle: int = 64, hops: int = 8, core_degree: int = 0) -> Hierarchy:
    """The contraction hierarchy of ``graph`` (non-negative weights) with bounded witness searches."""
    t0 = time.perf_counter()
    n = graph.n
    tail, head, w = simple_arcs(graph)
    rank, ut, uh, uw, dt, dh, dw, core, shortcuts, searches = _contract(
        n, tail.astype(np.int32), head.astype(np.int32), w, int(settle), int(hops), int(core_degree))
    dptr, dtail, dwt = group_arcs(n, dh.astype(np.int64), dt.astype(np.int64), dw)
    level = _levels(n, rank, dptr, dtail.astype(np.int64))
    order = np.lexsort((np.arange(n), level)).astype(np.int32)
    position = np.empty(n, dtype=np.int32)
    position[order] = np.arange(n, dtype=np.int32)
    up_ptr, up_head, up_w = group_arcs(n, position[ut], position[uh], uw)
    down_ptr, down_tail, down_w = group_arcs(n, position[dh], position[dt], dw)
    counts = np.bincount(level, minlength=int(level.max(initial=0)) + 1)
    level_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=level_ptr[1:])
    return Hierarchy(n, order, position, rank[order], up_ptr, up_head.astype(np.int32), up_w, down_ptr,
                     down_tail.astype(np.int32), down_w, level_ptr, int(core), int(shortcuts), int(searches),
                     time.perf_counter() - t0)


@njit(cache=True, nogil=True)
def upward_spaces(up_ptr, up_head, up_w, sources):
    """Dijkstra from each source (new ids) over the upward graph: (ptr [K + 1], vertex, distance) of the vertices
    each search settles (its search space), in settling order."""
    n = up_ptr.size - 1
    dist = np.zeros(n, np.int64)
    seen = np.full(n, -1, np.int64)
    hk, hv, hh = np.empty(16, np.int64), np.empty(16, np.int32), np.empty(16, np.int32)
    ptr = np.zeros(sources.size + 1, np.int64)
    out_v, out_d = np.empty(64, np.int32), np.empty(64, np.int64)
    k = 0
    for i in range(sources.size):
        s = sources[i]
        seen[s] = 2 * i
        dist[s] = 0
        size = _push(hk, hv, hh, 0, 0, s, 0)
        while size > 0:
            key, x, _, size = _pop(hk, hv, hh, size)
            if seen[x] == 2 * i + 1 or key > dist[x]:
                continue
            seen[x] = 2 * i + 1  # settled
            if k == out_v.size:
                out_v, out_d = _bigger(out_v, 2 * k), _bigger(out_d, 2 * k)
            out_v[k], out_d[k] = x, key
            k += 1
            for a in range(up_ptr[x], up_ptr[x + 1]):
                y = up_head[a]
                nd = key + up_w[a]
                if seen[y] < 2 * i or (seen[y] == 2 * i and nd < dist[y]):
                    seen[y] = 2 * i
                    dist[y] = nd
                    if size == hk.size:
                        hk, hv, hh = _bigger(hk, 2 * size), _bigger(hv, 2 * size), _bigger(hh, 2 * size)
                    size = _push(hk, hv, hh, size, nd, y, 0)
        ptr[i + 1] = k
    return ptr, out_v[:k], out_d[:k]


@njit(cache=True)
def _sweep(down_ptr, down_tail, down_w, level_ptr, dist):
    """The downward sweep on the host: level by level, every vertex pulls over its downward in-arcs."""
    for v in range(level_ptr[1], level_ptr[-1]):
        d = dist[v]
        for a in range(down_ptr[v], down_ptr[v + 1]):
            du = dist[down_tail[a]]
            if du != INF and du + down_w[a] < d:
                d = du + down_w[a]
        dist[v] = d


def cpu_query(h: Hierarchy, source: int) -> np.ndarray:
    """Distances (int64, original ids, ``INF`` unreachable) from ``source`` by an upward search and a downward
    sweep, both on the host: the hierarchy checked without a device."""
    ptr, verts, dists = upward_spaces(h.up_ptr, h.up_head, h.up_w, np.array([h.position[source]], dtype=np.int64))
    dist = np.full(h.n, INF, dtype=np.int64)
    dist[verts] = dists
    _sweep(h.down_ptr, h.down_tail, h.down_w, h.level_ptr, dist)
    return dist[h.position]
