"""The round kernels of the paper 004 family: the state reset, one relaxation kernel per variant (COO edges, dense
matrix rows, pull over in-edges, push over out-edges), and the device-resident rounds of edgebf_coo and
vertexbf_push (one cooperative kernel for every round, or batches of rounds replayed as CUDA graphs). The round
protocol (mask stamps, flag words, the floor test) is described in :mod:`gpusp.solvers.edgebf`.
"""

from __future__ import annotations

import functools

from numba import cuda


# ---- state reset and relaxation kernels ---------------------------------------------------------------
@cuda.jit(cache=True)
def reset(dist, mask, nxt, flag, source, inf):
    """Thread per vertex: dist INF (0 at the source), stamps -1 (0 at the source = in round 1's mask)."""
    v = cuda.grid(1)
    if v >= dist.size:
        return
    if v == source:
        dist[v] = 0
        mask[v] = 0
    else:
        dist[v] = inf
        mask[v] = -1
    nxt[v] = -1
    if v == 0:
        flag[0] = 0
        flag[1] = 0


@cuda.jit(device=True)
def _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, e, stride):
    """Relax edges e, e + stride, ... whose source changed in round r - 1 (the body of coo_relax)."""
    m = src.size
    prev = r - 1
    while e < m:
        u = src[e]
        if mask[u] == prev:
            du = dist[u]
            if du != inf:
                cand = du + weights[e]
                v = dst[e]
                if cand < floor:
                    flag[1] = r  # shorter than any simple path: a negative cycle (benign race, all write r)
                elif cand < dist[v]:
                    # atomic: concurrent tails may lower v; the old value says whether this one won
                    old = cuda.atomic.min(dist, v, cand)
                    if cand < old:
                        nxt[v] = r  # benign races: every writer stores the same round stamp
                        flag[0] = r
        e += stride


@cuda.jit(cache=True)
def coo_relax(src, dst, weights, dist, mask, nxt, flag, r, inf, floor):
    """Thread t relaxes edges t, t + T, ... (T threads in all) whose source changed in round r - 1."""
    _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, cuda.grid(1), cuda.gridsize(1))


@cuda.jit(device=True)
def _dense_entry(mat, dist, mask, nxt, flag, r, inf, floor, i, j):
    """Relax the matrix entry i -> j when row i changed in round r - 1."""
    if mask[i] != r - 1:
        return
    a = mat[i, j]
    di = dist[i]
    if a != inf and di != inf:
        cand = di + a
        if cand < floor:
            flag[1] = r  # shorter than any simple path: a negative cycle (stamped with the round)
        elif cand < dist[j]:
            # atomic: every row of column j may lower dist[j] in the same round
            old = cuda.atomic.min(dist, j, cand)
            if cand < old:
                nxt[j] = r
                flag[0] = r


@functools.cache
def dense_kernel(strided: bool, multi: bool):
    """The dense round kernel over rows row0 .. row1-1 (all rows: 0, n; one streamed piece: its rows), a
    compile-time specialisation of the layout and of Alg. 5.

    ``strided`` False (coalesced): x = column j, y = row i, so a warp reads a contiguous piece of row i and tests
    one mask word; True: x = row i, y = column j, so a warp's reads are a row apart (paper 004's non-coalesced
    version; its lanes also test 32 mask words and meet on one dist[j]). The y index always strides by the grid
    height (a grid is at most 65535 blocks high). ``multi`` (edges_per_thread > 1, Alg. 5): the x index strides by
    the grid width too, so each thread relaxes the entries of a 2-D grid-stride loop; without it the x extent is
    covered by the grid and each thread has one x index."""
    STRIDED = strided
    MULTI = multi

    def dense_relax(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1):
        """Relax every entry (i, j) with row0 <= i < row1 whose row i changed in round r - 1."""
        x, y = cuda.grid(2)
        sx, sy = cuda.gridsize(2)
        n = dist.size
        if STRIDED:
            x += row0
            xend = row1
            y0 = y
            yend = n
        else:
            xend = n
            y0 = y + row0
            yend = row1
        while x < xend:
            y = y0
            while y < yend:
                if STRIDED:
                    _dense_entry(mat, dist, mask, nxt, flag, r, inf, floor, x, y)
                else:
                    _dense_entry(mat, dist, mask, nxt, flag, r, inf, floor, y, x)
                y += sy
            if not MULTI:
                break
            x += sx

    name = f"dense_relax_{'strided' if strided else 'coalesced'}{'_multi' if multi else ''}"
    dense_relax.__name__ = dense_relax.__qualname__ = name
    return cuda.jit(cache=True)(dense_relax)


@cuda.jit(cache=True)
def pull_relax(rindptr, rindices, rweights, dist, dist_next, mask, nxt, flag, r, inf, floor):
    """Thread per vertex v: dist_next[v] = min(dist[v], dist[u] + w over in-edges from masked u); no atomics."""
    v = cuda.grid(1)
    if v >= dist.size:
        return
    dv = dist[v]
    best = dv
    prev = r - 1
    e = rindptr[v]
    end = rindptr[v + 1]
    while e < end:
        u = rindices[e]
        if mask[u] == prev:
            du = dist[u]
            if du != inf:
                cand = du + rweights[e]
                if cand < floor:
                    flag[1] = r  # shorter than any simple path: a negative cycle (stamped with the round)
                elif cand < best:
                    best = cand
        e += 1
    dist_next[v] = best  # only thread v writes v; dist (read) and dist_next (written) are distinct buffers
    if best < dv:
        nxt[v] = r
        flag[0] = r  # benign race: every writer stores r


@cuda.jit(device=True)
def _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u):
    """If u changed in round r - 1, atomic-min dist[u] + w into its out-neighbours (push_relax's body)."""
    if mask[u] != r - 1:
        return
    du = dist[u]
    if du == inf:
        return
    e = indptr[u]
    end = indptr[u + 1]
    while e < end:
        v = indices[e]
        cand = du + weights[e]
        if cand < floor:
            flag[1] = r  # shorter than any simple path: a negative cycle
        elif cand < dist[v]:
            # atomic: several tails may push into v in the same round
            old = cuda.atomic.min(dist, v, cand)
            if cand < old:
                nxt[v] = r
                flag[0] = r
        e += 1


@cuda.jit(cache=True)
def push_relax(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor):
    """Thread per vertex u that changed in round r - 1: atomic-min dist[u] + w into every out-neighbour."""
    u = cuda.grid(1)
    if u < dist.size:
        _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u)


# ---- device-resident rounds: one cooperative kernel, or CUDA graphs of batched rounds --------------------
@cuda.jit(device=True)
def _round_over(flag, r, limit):
    """After round r's barrier: stop on a cycle found by round r, on a quiet round, or at the round limit.

    Reads only what round r + 1 cannot change in a way that flips the answer (a thread already in round
    r + 1 writes stamps r + 1, which neither test below counts), so every thread decides alike."""
    cycle = flag[1]
    return (cycle != 0 and cycle <= r) or flag[0] < r or r >= limit


@cuda.jit(device=True)
def _push_round(indptr, indices, weights, dist, mask_a, mask_b, flag, r, inf, floor, start, stride):
    """Round r of push_persistent, grid-stride over the vertices: odd rounds read mask_a and stamp mask_b, even
    rounds the other way round."""
    u = start
    while u < dist.size:
        if r % 2 == 1:
            _push_vertex(indptr, indices, weights, dist, mask_a, mask_b, flag, r, inf, floor, u)
        else:
            _push_vertex(indptr, indices, weights, dist, mask_b, mask_a, flag, r, inf, floor, u)
        u += stride


@cuda.jit(device=True)
def _coo_round(src, dst, weights, dist, mask_a, mask_b, flag, r, inf, floor, start, stride):
    """Round r of coo_persistent: edges start, start + stride, ...; the masks alternate as in _push_round."""
    if r % 2 == 1:
        _coo_edges(src, dst, weights, dist, mask_a, mask_b, flag, r, inf, floor, start, stride)
    else:
        _coo_edges(src, dst, weights, dist, mask_b, mask_a, flag, r, inf, floor, start, stride)


def _persistent(name: str, one_round, doc: str):
    """The cooperative kernel ``name``: every round of ``one_round`` (_push_round or _coo_round, inlined), a
    grid-wide barrier after each, until :func:`_round_over`; ``out[0]`` = rounds run. ``g0, g1, g2`` are the
    graph arrays the round takes (CSR or COO, with the weights)."""

    def persistent(g0, g1, g2, dist, mask_a, mask_b, flag, inf, floor, limit, out):
        grid = cuda.cg.this_grid()
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        r = 1
        while True:
            one_round(g0, g1, g2, dist, mask_a, mask_b, flag, r, inf, floor, start, stride)
            grid.sync()  # barrier: round r's distances, stamps and flags are visible to every thread
            if _round_over(flag, r, limit):
                break
            r += 1
        if start == 0:
            out[0] = r

    persistent.__name__ = persistent.__qualname__ = name
    persistent.__doc__ = doc
    return cuda.jit(cache=True)(persistent)


push_persistent = _persistent("push_persistent", _push_round, "Every round of push_relax in one cooperative "
                              "launch (grid-stride over vertices); out[0] = rounds.")
coo_persistent = _persistent("coo_persistent", _coo_round, "Every round of coo_relax in one cooperative launch; "
                             "out[0] = rounds.")


@cuda.jit(device=True)
def _batch_idle(flag, r, n):
    """In a replayed batch: round r has nothing to do once an earlier round was quiet or found a cycle,
    or past round n (a change in round n already proves a negative cycle)."""
    return flag[1] != 0 or flag[0] < r - 1 or r > n


@cuda.jit(cache=True)
def push_batched(indptr, indices, weights, dist, mask, nxt, flag, base, offset, inf, floor):
    """push_relax for round base[0] + offset, exiting at once after convergence (a CUDA-graph node)."""
    r = base[0] + offset
    u = cuda.grid(1)
    if u < dist.size and not _batch_idle(flag, r, dist.size):
        _push_vertex(indptr, indices, weights, dist, mask, nxt, flag, r, inf, floor, u)


@cuda.jit(cache=True)
def coo_batched(src, dst, weights, dist, mask, nxt, flag, base, offset, inf, floor):
    """coo_relax for round base[0] + offset, exiting at once after convergence (a CUDA-graph node)."""
    r = base[0] + offset
    if not _batch_idle(flag, r, dist.size):
        _coo_edges(src, dst, weights, dist, mask, nxt, flag, r, inf, floor, cuda.grid(1), cuda.gridsize(1))


@cuda.jit(cache=True)
def advance(base, rounds):
    """Last node of a batch: the next replay starts ``rounds`` rounds later."""
    if cuda.grid(1) == 0:
        base[0] += rounds
