"""Contraction of a graph in parallel rounds on the host (Numba ``prange``): each round contracts an independent set
of vertices whose priorities are local minima, with bounded witness searches, one thread workspace each.
:func:`contract` is the step :func:`.contraction.build` runs; rounds, priorities and the exactness argument:
docs/solvers/phast.md ("Preprocessing").
"""

from __future__ import annotations

import numpy as np
from numba import get_thread_id, njit, prange

RECOMPUTE_PAIRS = 4096  # a vertex with more in x out pairs keeps its edge difference: its searches cost too much
HEAP_CAP = 1 << 16  # witness-search heap entries a thread; a search that would exceed them stops (bounded, exact)
ROUND_PAIRS = 1 << 24  # shortcut slots (in x out pairs) one round reserves at most: the set is cut to fit
SIMULATION_SHARE = 4  # a priority's witness searches (a simulation) stop after settle / 4 settled vertices
LAZY_SIMULATION_SHARE = 8  # settle / 8 where a core is left and the priorities are updated lazily
BLOCK = 16  # a thread's vertices of a round come in runs of up to 16 consecutive ones (cache reuse), in 16 runs a
# thread at least (balance)
STAMP_LIMIT = (1 << 30) - 1  # a workspace's search stamps restart (its marks cleared) before int32 overflows


# --- a binary min-heap of (key, vertex, hops) entries, ties by vertex; stale entries are skipped when popped --------
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
def _bigger(a, size):
    out = np.empty(size, a.dtype)
    out[:a.size] = a
    return out


# --- adjacency lists that grow: per vertex a (start, length, capacity) slice of a pool -------------------------------
@njit(cache=True)
def _lists(n, tail, head, w):
    """Out- and in-lists of the arcs (tail, head, w), each vertex with room for twice its degree; the pools' used
    ends in ``ends``."""
    odeg = np.zeros(n, np.int64)
    ideg = np.zeros(n, np.int64)
    for e in range(tail.size):
        odeg[tail[e]] += 1
        ideg[head[e]] += 1
    ost, ist = np.zeros(n, np.int64), np.zeros(n, np.int64)
    ocap, icap = 2 * odeg + 2, 2 * ideg + 2
    opos, ipos = 0, 0
    for v in range(n):
        ost[v] = opos
        ist[v] = ipos
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
        ito[ist[v] + ilen[v]] = u
        iw[ist[v] + ilen[v]] = w[e]
        ilen[v] += 1
    return (ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw), np.array([opos, ipos], np.int64)


@njit(cache=True)
def _stamp(sd, target, ctr):
    """A fresh mark for one search (``seen``; ``seen + 1`` marks settled vertices)."""
    ctr[0] += 1
    if ctr[0] >= STAMP_LIMIT:
        sd[:, 0] = 0
        target[:] = 0
        ctr[0] = 1
    return np.int32(2 * ctr[0])


@njit(cache=True)
def _witness(ost, olen, oto, ow, sd, target, hk, hv, hh, seen, src, skip, busy, tag, limit, targets, settle, hops):
    """Bounded Dijkstra from src up to distance ``limit`` that avoids ``skip`` and every vertex with busy == tag (none
    when tag < 0), and stops once the ``targets`` vertices with target == seen are settled: per vertex x, ``sd[x, 0]``
    is its mark and ``sd[x, 1]`` its distance, valid where ``sd[x, 0] >= seen`` (one cache line for both)."""
    done = np.int32(seen + 1)
    sd[src, 0] = seen
    sd[src, 1] = 0
    size = _push(hk, hv, hh, 0, 0, src, 0)
    settled = 0
    while size > 0:
        key, x, h, size = _pop(hk, hv, hh, size)
        if sd[x, 0] == done or key > sd[x, 1]:
            continue
        if key > limit or settled >= settle:
            break
        sd[x, 0] = done
        settled += 1
        if target[x] == seen:
            targets -= 1
            if targets == 0:
                break
        if h >= hops:
            continue
        for i in range(ost[x], ost[x] + olen[x]):
            y = oto[i]
            nd = key + ow[i]
            if y == skip or nd > limit or (tag >= 0 and busy[y] == tag) or (sd[y, 0] >= seen and nd >= sd[y, 1]):
                continue
            if size >= hk.size:
                return
            sd[y, 0] = seen
            sd[y, 1] = nd
            size = _push(hk, hv, hh, size, nd, y, h + 1)


@njit(cache=True)
def _shortcuts(g, ws, v, busy, tag, settle, hops, write, st, sh, sw, at):
    """The shortcuts contracting v needs (a witness avoids v and the vertices with busy == tag): (count, searches);
    ``write``: stored as (tail, head, weight) from index ``at``."""
    ost, olen, _, oto, ow, ist, ilen, _, ito, iw = g
    if olen[v] == 0 or ilen[v] == 0:
        return 0, 0
    t = get_thread_id()
    sd, target, hk, hv, hh = ws[0][t], ws[1][t], ws[2][t], ws[3][t], ws[4][t]
    ctr = ws[5][t]  # a row of its own: threads do not share the counter's cache line
    needed, searches = 0, 0
    for i in range(ist[v], ist[v] + ilen[v]):
        u, wu = ito[i], iw[i]
        seen = _stamp(sd, target, ctr)
        wmax, targets = 0, 0
        for j in range(ost[v], ost[v] + olen[v]):
            if oto[j] != u:
                wmax = max(wmax, ow[j])
                target[oto[j]] = seen
                targets += 1
        if targets == 0:
            continue
        _witness(ost, olen, oto, ow, sd, target, hk, hv, hh, seen, u, v, busy, tag, wu + wmax, targets, settle, hops)
        searches += 1
        for j in range(ost[v], ost[v] + olen[v]):
            x = oto[j]
            c = wu + ow[j]
            if x == u or (sd[x, 0] >= seen and sd[x, 1] <= c):
                continue
            if write:
                st[at + needed], sh[at + needed], sw[at + needed] = u, x, c
            needed += 1
    return needed, searches


@njit(cache=True)
def _priority(g, ws, v, cn, depth, busy, settle, hops, none32, none64):
    """2 x edge difference + contracted neighbours + depth (no vertex busy: witnesses may use every vertex)."""
    needed, searches = _shortcuts(g, ws, v, busy, -2, settle, hops, False, none32, none32, none64, 0)
    return 2 * (needed - g[1][v] - g[6][v]) + cn[v] + depth[v], searches


@njit(cache=True, parallel=True)
def _select(g, alive, prio):
    """The alive vertices whose (priority, id) is smaller than every neighbour's: an independent set."""
    ost, olen, _, oto, _, ist, ilen, _, ito, _ = g
    flag = np.zeros(alive.size, np.bool_)
    for i in prange(alive.size):
        v = alive[i]
        p = prio[v]
        least = True
        for j in range(ost[v], ost[v] + olen[v]):
            x = oto[j]
            if prio[x] < p or (prio[x] == p and x < v):
                least = False
                break
        if least:
            for j in range(ist[v], ist[v] + ilen[v]):
                x = ito[j]
                if prio[x] < p or (prio[x] == p and x < v):
                    least = False
                    break
        flag[i] = least
    return alive[flag]


@njit(cache=True)
def _merge(to, wt, start, length, x, c):
    """Arc to x of weight c into the list at start: lowers an existing entry, else appends; True when appended."""
    for i in range(start, start + length[0]):
        if to[i] == x:
            wt[i] = min(wt[i], c)
            return False
    to[start + length[0]] = x
    wt[start + length[0]] = c
    length[0] += 1
    return True


@njit(cache=True)
def _compact(to, wt, start, length, busy, tag):
    """Drop the entries whose vertex is busy (contracted this round), keeping the others' order."""
    k = start
    for i in range(start, start + length[0]):
        if busy[to[i]] != tag:
            to[k], wt[k] = to[i], wt[i]
            k += 1
    length[0] = k - start


@njit(cache=True)
def _run(n, threads):
    """The run length of a round's loop over n vertices on ``threads`` threads: thread t takes runs t, t + threads,
    ...; at most BLOCK, and short enough for BLOCK runs a thread."""
    return max(1, min(BLOCK, n // (BLOCK * threads)))


@njit(cache=True)
def _list_room(a, start, length, to, busy, tag, sidx, soff, scnt, ends):
    """Entries a's list (``to[start[a]:start[a] + length[a]]``) may hold after the round: its own, and one per
    shortcut of a neighbour contracted this round whose end (``ends``) is a."""
    k = length[a]
    for i in range(start[a], start[a] + length[a]):
        h = to[i]
        if busy[h] == tag:
            s0 = soff[sidx[h]]
            for s in range(s0, s0 + scnt[sidx[h]]):
                k += ends[s] == a
    return k


@njit(cache=True, parallel=True)
def _room(g, aff, busy, tag, sidx, soff, scnt, st, sh, threads):
    """Per affected vertex the entries its out- and in-list may hold after the round (before the removals)."""
    ost, olen, _, oto, _, ist, ilen, _, ito, _ = g
    need = np.empty((aff.size, 2), np.int64)
    run = _run(aff.size, threads)
    for t in prange(threads):
        for lo in range(t * run, aff.size, threads * run):
            for j in range(lo, min(lo + run, aff.size)):
                a = aff[j]
                need[j, 0] = _list_room(a, ost, olen, oto, busy, tag, sidx, soff, scnt, st)
                need[j, 1] = _list_room(a, ist, ilen, ito, busy, tag, sidx, soff, scnt, sh)
    return need


@njit(cache=True)
def _relocate(start, cap, to, wt, end, aff, need):
    """Lists too small for ``need`` get a new slice at the pool's end (grown when full): their old starts, -1 where
    a list stays; returns (old starts, pool heads, pool weights, new end)."""
    old = np.full(aff.size, -1, np.int64)
    total = 0
    for j in range(aff.size):
        if need[j] > cap[aff[j]]:
            total += 2 * need[j] + 2
    if end + total > to.size:
        size = max(2 * to.size, end + total)
        to, wt = _bigger(to, size), _bigger(wt, size)
    for j in range(aff.size):
        a = aff[j]
        if need[j] > cap[a]:
            old[j] = start[a]
            start[a] = end
            cap[a] = 2 * need[j] + 2
            end += cap[a]
    return old, to, wt, end


@njit(cache=True)
def _apply_one(g, a, j, old_out, old_in, busy, tag, sidx, soff, scnt, st, sh, sw, cn, depth, prio, stale):
    """:func:`_apply` for the affected vertex a (index j): the arcs added to its out-list."""
    ost, olen, _, oto, ow, ist, ilen, _, ito, iw = g
    if old_out[j] >= 0:
        for i in range(olen[a]):
            oto[ost[a] + i], ow[ost[a] + i] = oto[old_out[j] + i], ow[old_out[j] + i]
    if old_in[j] >= 0:
        for i in range(ilen[a]):
            ito[ist[a] + i], iw[ist[a] + i] = ito[old_in[j] + i], iw[old_in[j] + i]
    added, contracted, deepest = 0, 0, depth[a]
    olen_a, ilen_a = olen[a:a + 1], ilen[a:a + 1]
    for i in range(ost[a], ost[a] + olen[a]):
        h = oto[i]
        if busy[h] == tag:
            contracted += 1
            deepest = max(deepest, depth[h] + 1)
            s0 = soff[sidx[h]]
            for s in range(s0, s0 + scnt[sidx[h]]):
                if st[s] == a:
                    added += _merge(oto, ow, ost[a], olen_a, sh[s], sw[s])
    for i in range(ist[a], ist[a] + ilen[a]):
        h = ito[i]
        if busy[h] == tag:
            both = False  # h -> a and a -> h: h is counted once
            for k in range(ist[h], ist[h] + ilen[h]):
                both = both or ito[k] == a
            if not both:
                contracted += 1
            deepest = max(deepest, depth[h] + 1)
            s0 = soff[sidx[h]]
            for s in range(s0, s0 + scnt[sidx[h]]):
                if sh[s] == a:
                    _merge(ito, iw, ist[a], ilen_a, st[s], sw[s])
    _compact(oto, ow, ost[a], olen_a, busy, tag)
    _compact(ito, iw, ist[a], ilen_a, busy, tag)
    cn[a] += contracted
    prio[a] += contracted + deepest - depth[a]
    stale[a] = olen[a] * ilen[a] <= RECOMPUTE_PAIRS
    depth[a] = deepest
    return added


@njit(cache=True, parallel=True)
def _apply(g, aff, old_out, old_in, busy, tag, sidx, soff, scnt, st, sh, sw, cn, depth, prio, stale, threads):
    """Remove the round's vertices from the affected lists, insert their shortcuts (the lightest of equal arcs),
    update contracted-neighbour counts and depths, and add their gains to the priority, whose edge difference goes
    stale (a hub's, over RECOMPUTE_PAIRS in x out pairs, is never recomputed): the arcs added per affected vertex."""
    out = np.zeros(aff.size, np.int64)
    run = _run(aff.size, threads)
    for t in prange(threads):  # runs dealt in turn: a hub's lists cost more, and neighbours' ids cluster
        for lo in range(t * run, aff.size, threads * run):
            for j in range(lo, min(lo + run, aff.size)):
                out[j] = _apply_one(g, aff[j], j, old_out, old_in, busy, tag, sidx, soff, scnt, st, sh, sw, cn, depth,
                                    prio, stale)
    return out


@njit(cache=True, parallel=True)
def _reprioritize(g, ws, verts, prio, cn, depth, busy, simulate, hops, stale, threads):
    """New priorities of ``verts`` (contractions simulated with searches that settle ``simulate`` vertices), no longer
    stale: the searches run."""
    none32, none64 = np.empty(0, np.int32), np.empty(0, np.int64)
    searches = np.zeros(threads, np.int64)
    run = _run(verts.size, threads)
    for t in prange(threads):
        count = 0
        for lo in range(t * run, verts.size, threads * run):
            for j in range(lo, min(lo + run, verts.size)):
                v = verts[j]
                p, s = _priority(g, ws, v, cn, depth, busy, simulate, hops, none32, none64)
                prio[v] = p
                stale[v] = False
                count += s
        searches[t] = count
    return searches.sum()


@njit(cache=True)
def _independent_set(g, ws, alive, prio, cn, depth, busy, simulate, hops, stale, threads):
    """The local minima of the priorities (:func:`_select`), the stale priorities among them recomputed and the
    minima picked again until none is stale (lazy updates: a vertex's simulation runs only when it could be
    contracted): (set, searches)."""
    searches = 0
    while True:
        sel = _select(g, alive, prio)
        redo = sel[stale[sel]]
        if redo.size == 0:
            return sel, searches
        searches += _reprioritize(g, ws, redo, prio, cn, depth, busy, simulate, hops, stale, threads)


@njit(cache=True, parallel=True)
def _contract_set(g, ws, sel, soff, busy, tag, settle, hops, st, sh, sw, threads):
    """The shortcuts of every vertex of the round into its reserved slots: (count per vertex, searches)."""
    scnt = np.zeros(sel.size, np.int64)
    searches = np.zeros(threads, np.int64)
    run = _run(sel.size, threads)
    for t in prange(threads):
        count = 0
        for lo in range(t * run, sel.size, threads * run):
            for i in range(lo, min(lo + run, sel.size)):
                c, s = _shortcuts(g, ws, sel[i], busy, tag, settle, hops, True, st, sh, sw, soff[i])
                scnt[i] = c
                count += s
        searches[t] = count
    return scnt, searches.sum()


@njit(cache=True, parallel=True)
def _record(sel, start, length, to, w, at, tails, heads, wts, reverse):
    """The lists of the round's vertices appended to arc arrays from the offsets ``at`` (``reverse``: in-lists)."""
    for i in prange(sel.size):
        v = sel[i]
        k = at[i]
        for e in range(start[v], start[v] + length[v]):
            if reverse:
                tails[k], heads[k] = to[e], v
            else:
                tails[k], heads[k] = v, to[e]
            wts[k] = w[e]
            k += 1


@njit(cache=True)
def _grown(a, b, c, size):
    if size <= a.size:
        return a, b, c
    size = max(size, 2 * a.size)
    return _bigger(a, size), _bigger(b, size), _bigger(c, size)


@njit(cache=True)
def contract(n, tail, head, w, settle, hops, core_degree, threads):
    """Contract every vertex (or all but the core) in rounds, ``threads`` workspaces for Numba's threads: (rank, up
    arcs, down arcs, core size, shortcuts, searches, rounds)."""
    g, ends = _lists(n, tail, head, w)
    ws = (np.zeros((threads, n, 2), np.int64), np.zeros((threads, n), np.int32),
          np.empty((threads, HEAP_CAP), np.int64), np.empty((threads, HEAP_CAP), np.int32),
          np.empty((threads, HEAP_CAP), np.int32), np.zeros((threads, 16), np.int64))
    cn, depth, prio = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    busy = np.full(n, -1, np.int64)  # the round a vertex is contracted in
    rank = np.full(n, -1, np.int64)
    sidx = np.zeros(n, np.int64)  # a round's vertex -> its index in the round's set
    mark = np.full(n, -1, np.int64)
    alive = np.arange(n)
    stale = np.zeros(n, np.bool_)  # a priority whose edge difference predates a neighbour's contraction
    lazy = core_degree > 0  # lazy updates only where a core is left: contracting to the end, they cost levels
    simulate = max(1, settle // (LAZY_SIMULATION_SHARE if lazy else SIMULATION_SHARE))
    searches = _reprioritize(g, ws, alive, prio, cn, depth, busy, simulate, hops, stale, threads)
    cap = 2 * tail.size + 16
    ut, uh, uw = np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int64)
    dt, dh, dw = np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int64)
    st, sh, sw = np.empty(1024, np.int32), np.empty(1024, np.int32), np.empty(1024, np.int64)
    nu, nd, done, shortcuts, arcs_left, rounds = 0, 0, 0, 0, tail.size, 0
    while alive.size > 0:
        if core_degree > 0 and arcs_left > core_degree * (n - done):
            break
        ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw = g
        sel, s = _independent_set(g, ws, alive, prio, cn, depth, busy, simulate, hops, stale, threads)
        searches += s
        soff = np.zeros(sel.size + 1, np.int64)
        for i in range(sel.size):  # the set's prefix whose pairs fit the round's slots (at least one vertex)
            if i > 0 and soff[i] + ilen[sel[i]] * olen[sel[i]] > ROUND_PAIRS:
                sel = sel[:i]
                soff = soff[:i + 1]
                break
            soff[i + 1] = soff[i] + ilen[sel[i]] * olen[sel[i]]
        rounds += 1
        tag = rounds
        for i in range(sel.size):
            busy[sel[i]] = tag
            sidx[sel[i]] = i
        st, sh, sw = _grown(st, sh, sw, soff[-1])
        scnt, s = _contract_set(g, ws, sel, soff, busy, tag, settle, hops, st, sh, sw, threads)
        searches += s
        uat, dat = np.empty(sel.size, np.int64), np.empty(sel.size, np.int64)
        aff = np.empty(0, np.int64)
        k = 0
        for i in range(sel.size):  # arc offsets, and the affected vertices (the set's neighbours) once each
            v = sel[i]
            uat[i], dat[i] = nu, nd
            nu += olen[v]
            nd += ilen[v]
            arcs_left -= olen[v] + ilen[v]
            if k + olen[v] + ilen[v] > aff.size:
                aff = _bigger(aff, 2 * aff.size + olen[v] + ilen[v] + 16)
            for e in range(ost[v], ost[v] + olen[v]):
                if mark[oto[e]] != tag:
                    mark[oto[e]] = tag
                    aff[k] = oto[e]
                    k += 1
            for e in range(ist[v], ist[v] + ilen[v]):
                if mark[ito[e]] != tag:
                    mark[ito[e]] = tag
                    aff[k] = ito[e]
                    k += 1
        aff = aff[:k]
        ut, uh, uw = _grown(ut, uh, uw, nu)
        dt, dh, dw = _grown(dt, dh, dw, nd)
        _record(sel, ost, olen, oto, ow, uat, ut, uh, uw, False)
        _record(sel, ist, ilen, ito, iw, dat, dt, dh, dw, True)
        need = _room(g, aff, busy, tag, sidx, soff, scnt, st, sh, threads)
        old_out, oto, ow, ends[0] = _relocate(ost, ocap, oto, ow, ends[0], aff, need[:, 0])
        old_in, ito, iw, ends[1] = _relocate(ist, icap, ito, iw, ends[1], aff, need[:, 1])
        g = (ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw)
        added = _apply(g, aff, old_out, old_in, busy, tag, sidx, soff, scnt, st, sh, sw, cn, depth, prio, stale,
                       threads).sum()
        shortcuts += added
        arcs_left += added
        for i in range(sel.size):
            rank[sel[i]] = done + i
            olen[sel[i]] = 0
            ilen[sel[i]] = 0
        done += sel.size
        if not lazy:  # the neighbours' priorities now, not when they could be contracted
            searches += _reprioritize(g, ws, aff[stale[aff]], prio, cn, depth, busy, simulate, hops, stale, threads)
        alive = alive[rank[alive] < 0]
    ost, olen, ocap, oto, ow, ist, ilen, icap, ito, iw = g
    core = n - done
    for v in range(n):  # the core: top ranks, every arc among its vertices upward
        if rank[v] < 0:
            rank[v] = done
            done += 1
            ut, uh, uw = _grown(ut, uh, uw, nu + olen[v])
            for e in range(ost[v], ost[v] + olen[v]):
                ut[nu], uh[nu], uw[nu] = v, oto[e], ow[e]
                nu += 1
    return rank, ut[:nu], uh[:nu], uw[:nu], dt[:nd], dh[:nd], dw[:nd], core, shortcuts, searches, rounds
