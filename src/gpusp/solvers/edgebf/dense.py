"""``edgebf_dense`` (paper 004 sec. III and IV-A/B): masked Bellman-Ford over the dense n x n matrix, a thread per
entry (or ``edges_per_thread`` entries in Alg. 5's 2-D grid-stride loop) in a coalesced or strided layout, the matrix
uploaded from pageable or pinned memory or streamed in row pieces behind round 1; trees from column scans. Design:
docs/solvers/edgebf.md.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from ..common.gate import DISTANCES, kernel
from ..common.launch import Launch, fill, launch_grid
from ..common.maskedbf import InEdgeTree, MaskedBellmanFord

MAX_GRID_Y = 65535


@cuda.jit(device=True)
def _dense_entry(mat, dist, mask, nxt, flag, r, inf, floor, i, j):
    """Relax the matrix entry i -> j when row i changed in round r - 1: 0 (row i idle or an infinite term), 1 (a
    candidate computed: a relaxation) or 2 (a relaxation that lowered dist[j])."""
    if mask[i] != r - 1:
        return 0
    a = mat[i, j]
    di = dist[i]
    if a == inf or di == inf:
        return 0
    cand = di + a
    if cand < floor:
        flag[1] = r  # shorter than any simple path: a negative cycle (stamped with the round)
    elif cand < dist[j]:
        # atomic: every row of column j may lower dist[j] in the same round
        old = cuda.atomic.min(dist, j, cand)
        if cand < old:
            nxt[j] = r
            flag[0] = r
            return 2
    return 1


@kernel("void({w}[:, ::1], {w}[::1], int32[::1], int32[::1], int32[::1], int64, {w}, {w}, int64, int64, int64[::1])",
        cases=[dict(w=w, strided=s, multi=m, counted=c) for w in ("int32", "int64") for s in (False, True)
               for m in (False, True) for c in (False, True)])
@functools.cache
def dense_kernel(strided: bool, multi: bool, counted: bool = False):
    """The dense round kernel over rows row0 .. row1-1 (all rows: 0, n; one streamed piece: its rows), a
    compile-time specialisation of the layout, of Alg. 5 and of the piece counters.

    ``strided`` False (coalesced): x = column j, y = row i, so a warp reads a contiguous piece of row i and tests
    one mask word; True: x = row i, y = column j, so a warp's reads are a row apart (paper 004's non-coalesced
    version; its lanes also test 32 mask words and meet on one dist[j]). The y index always strides by the grid
    height (a grid is at most 65535 blocks high). ``multi`` (edges_per_thread > 1, Alg. 5): the x index strides by
    the grid width too, so each thread relaxes the entries of a 2-D grid-stride loop; without it the x extent is
    covered by the grid and each thread has one x index. ``counted`` (a streamed piece's round): the block sums its
    threads' relaxations and improvements in shared memory and adds them to ``counts[0]`` and ``counts[1]`` with one
    atomic each; otherwise ``counts`` is not touched."""
    STRIDED = strided
    MULTI = multi
    COUNTED = counted

    def dense_relax(mat, dist, mask, nxt, flag, r, inf, floor, row0, row1, counts):
        """Relax every entry (i, j) with row0 <= i < row1 whose row i changed in round r - 1."""
        x, y = cuda.grid(2)
        sx, sy = cuda.gridsize(2)
        n = dist.size
        relaxed = 0  # this thread's relaxations and improvements (counted kernel only)
        improved = 0
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
                    done = _dense_entry(mat, dist, mask, nxt, flag, r, inf, floor, x, y)
                else:
                    done = _dense_entry(mat, dist, mask, nxt, flag, r, inf, floor, y, x)
                if COUNTED:
                    relaxed += done > 0
                    improved += done > 1
                y += sy
            if not MULTI:
                break
            x += sx
        if COUNTED:  # every thread gets here (no early return above): the barriers are safe
            tally = cuda.shared.array(2, np.int64)
            first = cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0
            if first:
                tally[0] = 0
                tally[1] = 0
            cuda.syncthreads()
            if relaxed:
                cuda.atomic.add(tally, 0, relaxed)
                cuda.atomic.add(tally, 1, improved)
            cuda.syncthreads()
            if first and tally[0]:
                cuda.atomic.add(counts, 0, tally[0])
                cuda.atomic.add(counts, 1, tally[1])

    name = f"dense_relax_{'strided' if strided else 'coalesced'}{'_multi' if multi else ''}{'_counted' * counted}"
    dense_relax.__name__ = dense_relax.__qualname__ = name
    return cuda.jit(cache=True)(dense_relax)


@kernel("void({w}[:, ::1], {w}[::1], int32[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def dense_tight_parents(mat, dist, parent, inf):
    """Thread per vertex j (all weights > 0): parent = first row i != j with dist[i] + mat[i, j] == dist[j]."""
    j = cuda.grid(1)
    n = dist.size
    if j >= n:
        return
    found = -1
    dj = dist[j]
    if dj != inf:
        i = 0
        while i < n:  # column scan: neighbouring threads read neighbouring words of row i
            a = mat[i, j]
            di = dist[i]
            if i != j and a != inf and di != inf and di + a == dj:
                found = i
                break
            i += 1
    parent[j] = found


@kernel("void({w}[:, ::1], {w}[::1], int32[::1], int32[::1], int64, int32[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def dense_tree_level(mat, dist, level, parent, depth, grew, inf):
    """Thread per vertex j not yet in the tree: join under a row i on level depth over a tight entry."""
    j = cuda.grid(1)
    n = dist.size
    if j >= n or level[j] != -1:
        return
    dj = dist[j]
    if dj == inf:
        return
    i = 0
    while i < n:
        # level[i] can only move from -1 to depth + 1 in this launch, never to or from depth: no race
        if level[i] == depth:
            a = mat[i, j]
            if a != inf and dist[i] + a == dj:
                level[j] = depth + 1  # only thread j writes j's entries: no atomic needed
                parent[j] = i
                grew[0] = depth + 1
                return
        i += 1


class DenseSolver(MaskedBellmanFord):
    """edgebf_dense: thread per entry of the dense n x n matrix (or ``edges_per_thread`` entries in a 2-D
    grid-stride loop, Alg. 5), atomic min into the column's vertex; ``layout`` puts the column (coalesced) or the
    row (strided) on x.

    ``transfer`` (paper 004 sec. IV-A): 'pageable' uploads the matrix from ordinary host memory;
    'pinned' from page-locked memory (staged there when the solver is built, so the timed upload is the
    DMA alone); 'streams' moves the upload into every timed run: the matrix, in ``chunks`` row pieces
    from pinned memory, is copied on one stream per piece, and each piece's first-round relaxation is
    queued on its stream right behind its copy, so later pieces travel while earlier ones are relaxed.
    Compare the default's h2d_ms + median with the streamed median (which includes the transfer). A streamed run
    also counts each piece's relaxations and improving ones (``piece_relaxations``, ``piece_improvements``), read
    back after the trial's clock."""

    def __init__(self, graph, *, block, transfer, chunks, layout, edges_per_thread, launcher):
        super().__init__(graph, block=block, transfer=transfer, chunks=chunks, layout=layout,
                         edges_per_thread=edges_per_thread, launcher=launcher)
        self.transfer, self.chunks = transfer, max(1, min(chunks, self.n))  # a piece holds at least one row
        self.layout, self.k = layout, edges_per_thread
        self.mat = graph.to_dense()
        if transfer != "pageable":  # page-locked staging copy, outside every timed step
            self.h_mat = cuda.pinned_array(self.mat.shape, dtype=self.mat.dtype)
            self.h_mat[...] = self.mat
        self.kernel = dense_kernel(layout == "strided", edges_per_thread > 1)
        self.bx = min(32, self.block)
        self.by = self.block // self.bx
        # Alg. 5's k entries per thread: ky rows of the y extent times kx of the x extent (ky >= kx, powers of 2)
        self.ky = 1 << ((edges_per_thread.bit_length()) // 2)
        self.kx = edges_per_thread // self.ky

    def grid_for(self, rows: int) -> tuple[int, int]:
        """The 2-D grid over ``rows`` matrix rows by n columns: x spans columns (coalesced) or rows (strided),
        shrunk by kx (ky) along x (y) for Alg. 5; y at most MAX_GRID_Y blocks (the kernel strides beyond)."""
        ext_x, ext_y = (rows, self.n) if self.layout == "strided" else (self.n, rows)
        return (max(1, -(-ext_x // (self.bx * self.kx))),
                max(1, min(MAX_GRID_Y, -(-ext_y // (self.by * self.ky)))))

    def _upload_graph(self):
        # (relaxations, improvements) of each streamed piece's round; the unstreamed kernel takes it and leaves it
        self.d_counts = cuda.device_array(2 * max(1, self.chunks), dtype=np.int64)
        if self.transfer == "streams":
            self.d_mat = cuda.device_array(self.mat.shape, dtype=self.mat.dtype)  # filled inside each run
            self.clear_counts = Launch(fill, launch_grid(self.d_counts.size, 32), 32, 0, native=self.native)
            counted = dense_kernel(self.layout == "strided", self.k > 1, True)
            bounds = np.linspace(0, self.n, self.chunks + 1).astype(np.int64)
            self.pieces = []
            for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
                if hi > lo:
                    stream = cuda.stream()
                    launch = Launch(counted, self.grid_for(hi - lo), (self.bx, self.by), stream, native=self.native)
                    counts = self.d_counts[2 * len(self.pieces):2 * len(self.pieces) + 2]
                    self.pieces.append((self.d_mat[lo:hi], self.h_mat[lo:hi], stream, launch, lo, hi, counts))
        else:
            self.d_mat = cuda.to_device(self.mat if self.transfer == "pageable" else self.h_mat)

    def _relax_launch(self, stream):
        return Launch(self.kernel, self.grid_for(self.n), (self.bx, self.by), stream, native=self.native)

    def _tree_of(self, stream):
        return InEdgeTree(dense_tight_parents, dense_tree_level, (self.d_mat,), n=self.n, block=self.block,
                          stream=stream, native=self.native, nonpositive=self.nonpositive, inf=self.inf)

    def _relax(self, lane, r, mask, nxt):
        if self.transfer == "streams" and r == 1:
            return self._stream_first_round(lane, mask, nxt)
        lane.relax(self.d_mat, lane.d_dist, mask, nxt, lane.d_flag, r, self.inf, self.floor, 0, self.n,
                   self.d_counts)
        return 1

    def _stream_first_round(self, lane, mask, nxt) -> int:
        """Round 1 piece by piece: copy rows lo..hi-1 on the piece's stream, then relax them on the same stream,
        counting into the piece's two words (cleared first). The streams block on the legacy default stream, so the
        reset and the clearing before and the flag copy after are ordered."""
        self.clear_counts(self.d_counts, np.int64(0))
        for d_rows, h_rows, stream, launch, lo, hi, counts in self.pieces:
            d_rows.copy_to_device(h_rows, stream=stream)
            launch(self.d_mat, lane.d_dist, mask, nxt, lane.d_flag, 1, self.inf, self.floor, lo, hi, counts)
        return len(self.pieces) + 1

    def run(self, source):
        counters = super().run(source)
        if self.transfer != "streams":
            return counters

        def read_back():  # after the trial's clock: the pieces' counts, in upload order
            counts = self.d_counts.copy_to_host()[:2 * len(self.pieces)].reshape(-1, 2)
            return {**counters, "piece_relaxations": counts[:, 0].tolist(), "piece_improvements": counts[:, 1].tolist()}

        return read_back

    def _counters(self, rounds, launches):
        return {"iterations": rounds, "relaxations": rounds * self.n * self.n, "launches": launches,
                "transfer": self.transfer, "chunks": self.chunks if self.transfer == "streams" else 0}
