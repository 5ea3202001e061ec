"""Paper 004 (An): Bellman-Ford with an active-vertex mask, edge-parallel and vertex-parallel.

All four solvers run the same outer loop on the host. Round ``r`` relaxes only edges whose tail
changed its distance in round ``r - 1`` (the *mask*); every head it lowers goes into the *next mask*
and raises the round's *flag*; the host reads the flag once per round (one 8-byte copy into pinned
memory) and stops after the first round that changed nothing (early termination). The source starts
alone in the mask.

Mask bookkeeping. The paper keeps two 0/1 arrays and runs a swap kernel after every round that copies
``mask1`` into ``mask`` and clears ``mask1``. Here the two arrays hold *round stamps* instead: a vertex is
in round ``r``'s mask when ``mask[u] == r - 1``, and joins the next mask by ``next[v] = r``. The swap is
then a host-side exchange of the two references, and nothing ever needs clearing (the array being
written last served as a mask two rounds ago, so its stale stamps are at most ``r - 2`` and never
match). Likewise the flag is "``flag[0] == r``", so it needs no reset launch either: one launch and one
flag copy per round.

Negative weights and cycles. Every stored distance is the length of a real walk from the source, so
after round ``k`` each vertex is at least as good as its best path of at most ``k`` edges (also with the
mask: a tail skipped in round ``k`` already pushed its current value in the round after its last change).
Without a reachable negative cycle nothing can change in round ``|V|``; a change there raises
:class:`~gpusp.errors.NegativeCycleError`. As an earlier and overflow-proof test, a candidate below
``-(n - 1) max|w|`` (shorter than any simple path can be) is never stored; it sets ``flag[1]``, which also
raises NegativeCycleError at the end of that round. Tails at INF are never relaxed, and with a dense
matrix INF entries are skipped, so ``INF + negative`` never looks finite.

Variants
* ``edgebf_coo`` (CooSolver) - paper 004 sec. IV-B/C: COO arrays (src, dst, w); ``grid = ceil(m / (k *
  block))`` blocks, so each of the ``T = grid * block`` threads handles about ``k = edges_per_thread``
  edges ``t, t + T, t + 2T, ...`` (coalesced: a warp reads consecutive edges at every step). A masked edge
  is relaxed in place with ``cuda.atomic.min``; the atomic's old value tells whether it lowered the head.
  Per round O(m) work; at most |V| rounds. ``relaxations`` counts edges examined (rounds * m).
  ``dst`` and ``w`` are the CSR ``indices`` / ``weights`` (CSR order is COO sorted by source), shared with
  the CSR upload that :func:`~gpusp.solvers.common.csr.build_parents` uses.
* ``edgebf_dense`` (DenseSolver) - sec. III: the dense n x n matrix (``graph.to_dense()``: lightest of
  parallel edges, diagonal ``min(0, self-loop)``), a 2-D launch with one thread per entry ``(i, j)``;
  rows stride by the grid height beyond 65535 blocks. ``layout`` 'coalesced' puts the column on x, so a
  warp reads a contiguous piece of row ``i`` and tests one mask word; 'strided' puts the row on x (sec.
  IV-B's non-coalesced version: a warp's reads are a row apart, its lanes test 32 mask words and meet on
  one ``dist[j]``). ``edges_per_thread`` k > 1 is sec. IV-B's Alg. 5: the grid shrinks k-fold (ky >= kx
  powers of two, ky * kx = k, along y and x) and each thread relaxes its entries in a 2-D grid-stride loop.
  Layout and Alg. 5's loop are compile-time specialisations (:func:`.kernels.dense_kernel`). Per round
  O(n^2) work; ``relaxations`` = rounds * n^2. Memory w n^2: no CSR is uploaded, so the shortest-path
  tree is built from the matrix by in-edge (column) scans.
* ``vertexbf_pull`` (PullSolver) - sec. IV-D, "incoming": thread per vertex ``v`` scans its in-edges
  (reverse CSR, ``graph.reverse()``) from masked tails and writes ``min(dist[v], ...)`` to a second
  distance buffer (Jacobi double buffering: no atomics, no write races). Per round O(n + m) work (every
  in-edge's tail stamp is read); ``relaxations`` = rounds * m. The tree is built on the reverse CSR too
  (thread ``v`` picks a tight in-edge; no forward CSR is uploaded, in the spirit of paper 001's recording
  kernel on the inverted graph).
* ``vertexbf_push`` (PushSolver) - sec. IV-D, "outgoing": thread per vertex ``u``; only a ``u`` that
  changed last round pushes ``dist[u] + w`` along its out-edges with ``cuda.atomic.min``, as the paper's
  outgoing kernel does (it tests ``mask[idx]`` first). Decision: a mask rather than a plain push from every
  finite vertex, because the unmasked pushes cannot lower anything (their tails already pushed their
  current value) and only cost atomics. Per round O(n + sum of out-degrees of masked vertices); no
  ``relaxations`` counter (it would need device-side counting).

Launch modes (``launch``, edgebf_coo and vertexbf_push only). 'host' launches every round's kernel and
reads the flag back, as the paper. 'graph' replays a CUDA graph of 32 rounds of kernels that read their round
from a device counter and exit at once after convergence (one flag read per replay). 'persistent' runs every
round in one cooperative kernel, a grid-wide barrier between rounds (``rules.PERSISTENT_BLOCKS_PER_SM`` blocks
per multiprocessor, capped at the co-resident maximum). vertexbf_pull and edgebf_dense have no ``launch``
parameter: their rounds are always launched from the host.

Launcher (``launcher``, every solver here). A host-driven round is a launch of a few microseconds of kernel
and an 8-byte read, so the host's launch path is what it measures. 'native' (default) builds every kernel's
:class:`~gpusp.solvers.common.launch.Launch` once per source state (the reset, the round kernel, each streamed piece's
kernel, the tree's kernels) and reads the flag through :class:`~gpusp.solvers.common.launch.NativeRead`: the driver's
cost, as the paper's C code pays it; 'numba' goes through Numba's dispatcher and ``copy_to_host`` every time
(tens of microseconds each), for comparison. 'graph' and 'persistent' rounds are launched as before.

Source states (:class:`.solvers.Lane`). A solver's per-source arrays (distances, masks, flags, parents, the
tree's buffers) and their launches form a lane on one stream; a solver runs one on the legacy default stream.
``lanes(k)`` gives k more on CUDA streams of their own, sharing the uploaded graph (read only):
bellmanford_allsources with ``streams`` > 1 keeps that many sources in flight (paper 004 sec. V-B's streams
version), each round queued on its stream with its flag read on that stream (``cuMemcpyDtoHAsync`` and a
synchronisation of that stream alone), so that one source's round runs while the host waits for another's.
edgebf_dense has no lanes beside its own (bellmanford_allsources does not take it).

Streams and pinned memory (sec. IV-A) for the matrix transfer of ``edgebf_dense``: parameter ``transfer``
('pageable', 'pinned', 'streams' with ``chunks`` row pieces, each relaxed by the chosen layout's kernel on its
stream behind its copy), see :class:`~.solvers.DenseSolver`. The per-round flag copy of every variant goes
through pinned memory.

Counters: ``iterations`` (rounds, including the final quiet one), ``relaxations`` where known without
extra device work, ``launches`` (kernel launches in ``run`` including the tree).

Modules: :mod:`.kernels` (reset, the relaxation kernels, the device-resident rounds), :mod:`.tree` (trees from
in-edges for pull and dense, from out-edges for coo and push, per lane; the per-stream flag read), :mod:`.solvers`
(lanes, the host round loop and the four solver classes).
"""
