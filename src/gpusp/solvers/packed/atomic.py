"""``packed_atomic`` (paper 003, Sudhanan): frontier SSSP rounds with one 64-bit atomic per relaxation on a word
that packs (distance << 32 | parent), so a distance and its parent are updated together ('min': an atomic minimum,
'cas': the paper's compare-and-swap loop); a strict distance guard keeps the parents a tree without a post-pass.
Design: docs/solvers/packed.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from ..common.base import Solver
from ..common.csr import DeviceGraph
from ..common.gate import kernel
from ..common.launch import Launch, NativeRead, launch_grid

_SHIFT = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)
_NO_PARENT = 0xFFFFFFFF  # low half of a word with no parent: -1 as int32


def pack(dist: int, parent: int) -> np.uint64:
    """Host-side packing of one word: (dist << 32) | (parent as uint32)."""
    return np.uint64((int(dist) << 32) | (int(parent) & 0xFFFFFFFF))


def unpack(words: np.ndarray):
    """Host-side unpacking: (int32 distances, int32 parents with -1 for none)."""
    words = np.asarray(words, dtype=np.uint64)
    dist = (words >> _SHIFT).astype(np.int32)
    parent = (words & _LOW).astype(np.uint32).view(np.int32)
    return dist, parent


@kernel("void(uint64[::1], int32[::1], uint8[::1], int32[::1], int64, uint64, uint64, int32)")
@cuda.jit(cache=True)
def init_packed(word, cost, mask, changed, source, inf_word, src_word, inf):
    """Thread per vertex: word INF/no parent, cost INF, mask clear; the source gets 0/-1 and its mask."""
    i = cuda.grid(1)
    if i >= word.size:
        return
    if i == 0:
        changed[0] = 0
    if i == source:
        word[i] = src_word
        cost[i] = 0
        mask[i] = 1
    else:
        word[i] = inf_word
        cost[i] = inf
        mask[i] = 0


@kernel("void(int32[::1], int32[::1], int32[::1], int32[::1], uint8[::1], uint64[::1])",
        cases=[{"method": "min"}, {"method": "cas"}])
@functools.cache
def relax_kernel(method: str):
    """The relax kernel of ``method``: thread per masked vertex u offers (cost[u] + w, u) to word[v] for every
    out-edge u -> v, by a 64-bit atomic min ('min') or a compare-and-swap loop ('cas'). ``method`` is a
    compile-time constant: each kernel holds only its own branch."""
    cas = method == "cas"

    def relax(indptr, indices, weights, cost, mask, word):
        """Thread per masked vertex u: lower word[v] to (cost[u] + w, u) for every out-edge u -> v."""
        u = cuda.grid(1)
        if u >= cost.size or mask[u] == 0:
            return
        du = cost[u]
        me = numba.uint64(u)
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = numba.uint64(du + weights[e])
            if cas:
                new = (nd << _SHIFT) | me
                old = word[v]
                while nd < (old >> _SHIFT):  # retry only while the new distance is strictly smaller
                    seen = cuda.atomic.cas(word, v, old, new)  # atomic: swap in only if word[v] is still old
                    if seen == old:
                        break
                    old = seen
            # strict distance guard: an equal distance with a smaller parent id must not replace the word
            elif nd < (word[v] >> _SHIFT):
                cuda.atomic.min(word, v, (nd << _SHIFT) | me)  # atomic: (dist, parent) updated together

    relax.__name__ = relax.__qualname__ = f"relax_{method}"
    return cuda.jit(cache=True)(relax)


RELAX = {method: relax_kernel(method) for method in ("min", "cas")}  # by the method parameter
relax_min, relax_cas = RELAX["min"], RELAX["cas"]


@kernel("void(uint64[::1], int32[::1], uint8[::1], int32[::1], int64)")
@cuda.jit(cache=True)
def commit_packed(word, cost, mask, changed, stamp):
    """Thread per vertex: cost <- packed distance if it dropped, mask = whether it did, stamp changed."""
    i = cuda.grid(1)
    if i >= cost.size:
        return
    d = numba.int32(word[i] >> _SHIFT)
    if d < cost[i]:
        cost[i] = d
        mask[i] = 1
        changed[0] = stamp  # benign race: every writer stores the same stamp
    else:
        mask[i] = 0


class PackedSolver(Solver):
    """packed_atomic: frontier rounds with one 64-bit atomic per relaxation on (dist << 32 | parent)."""

    device = "gpu"

    def __init__(self, graph, *, block, method, launcher):
        super().__init__(graph, block=block, method=method, launcher=launcher)
        if graph.dtype != np.int32:
            raise SolverError(f"packed_atomic packs a 32-bit distance into a 64-bit word and needs int32 "
                              f"distances; graph {graph.name!r} needs {graph.dtype} (paths up to n * max|w| "
                              f"do not fit below 2**29)")
        if graph.m and int(graph.weights.min()) < 0:
            raise SolverError("packed_atomic needs non-negative weights: the packed word orders distances as "
                              "unsigned 32-bit integers")
        if graph.n >= 2**31:
            raise SolverError("packed_atomic stores the parent in 32 bits: n must be below 2**31")
        self.block = block
        self.relax = RELAX[method]
        self.inf = np.int32(graph.inf)
        self.inf_word = pack(graph.inf, _NO_PARENT)
        self.src_word = pack(0, _NO_PARENT)

    def upload(self):
        g = self.graph
        self.dg = DeviceGraph(g).upload()
        self.d_word = cuda.device_array(g.n, dtype=np.uint64)
        self.d_cost = cuda.device_array(g.n, dtype=np.int32)
        self.d_mask = cuda.device_array(g.n, dtype=np.uint8)
        self.d_changed = cuda.device_array(1, dtype=np.int32)
        grid = launch_grid(g.n, self.block)
        self.l_init, self.l_relax, self.l_commit = (Launch(k, grid, self.block, native=self.native)
                                                    for k in (init_packed, self.relax, commit_packed))
        self.read_changed = NativeRead(self.d_changed, native=self.native)

    def run(self, source):
        n, dg = self.graph.n, self.dg
        relax, commit = self.l_relax, self.l_commit
        relax_args = (dg.indptr, dg.indices, dg.weights, self.d_cost, self.d_mask, self.d_word)
        commit_args = (self.d_word, self.d_cost, self.d_mask, self.d_changed)
        self.l_init(*commit_args, source, self.inf_word, self.src_word, self.inf)
        launches, r = 1, 0
        while True:
            r += 1
            relax(*relax_args)
            commit(*commit_args, r)
            launches += 2
            if int(self.read_changed()[0]) != r:  # the once-per-round flag check (a sync)
                break
            if r > n:  # cannot happen without negative weights (refused above): an internal error
                raise SolverError(f"packed_atomic did not converge in {n} rounds")
        return {"iterations": r, "launches": launches}

    def download(self):
        return unpack(self.d_word.copy_to_host())
