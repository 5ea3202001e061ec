"""The round kernels of the paper 004 family: the state reset, one relaxation kernel per variant (COO edges, dense
matrix rows, pull over in-edges, push over out-edges), and the device-resident rounds of edgebf_coo and
vertexbf_push (one cooperative kernel for every round, or batches of rounds replayed as CUDA graphs). The round
protocol (mask stamps, flag words, the floor test) is described in :mod:`gpusp.solvers.edgebf`.
"""

from __future__ import annotations

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
def _dense_rows(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1):
    """Rows row0 .. row1-1 of the matrix, thread per entry (i, j) (x = column j): relax i -> j when row
    i changed in round r - 1."""
    j, i = cuda.grid(2)
    n = dist.size
    if j >= n:
        return
    rows = cuda.gridsize(2)[1]
    prev = r - 1
    i += row0
    while i < row1:
        if mask[i] == prev:
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
        i += rows


@cuda.jit(cache=True)
def dense_relax(mat, dist, mask, nxt, flag, r, inf, floor):
    """Thread per matrix entry: relax i -> j when row i changed in round r - 1."""
    _dense_rows(mat, dist, mask, nxt, flag, r, inf, floor, 0, dist.size)


@cuda.jit(cache=True)
def dense_relax_rows(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1):
    """dense_relax over rows row0 .. row1-1 only (one streamed piece of the matrix)."""
    _dense_rows(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1)


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
