"""Register-blocked Floyd-Warshall APSP (``blockedfw_fast``): large tiles, a block of cells per thread.

Algorithm. The three-phase blocked Floyd-Warshall of Venkataraman, Sahni & Mukhopadhyaya (as in paper 002's
versions, :mod:`gpusp.solvers.blockedfw`): the n x n matrix is padded to ``n_pad = r T`` (padded vertices isolated:
INF off the diagonal, 0 on it; any n works) and cut into r x r tiles of T x T cells. Round t relaxes every d[i][j]
through the T vertices of tile t: phase 1 the pivot tile (t, t), phase 2 the other tiles of pivot row and column t,
phase 3 the (r-1)^2 remaining tiles, which read only tiles finished in phase 2. What is new is how a CUDA block spends
its threads (the register blocking of dense GEMM, applied to the (min, +) semiring):

* a CUDA block of (T/R) x (T/R) threads owns one T x T tile; each thread owns an R x R register block of cells, rows
  ``ty + a T/R`` and columns ``tx + b T/R`` (a, b < R; strided so that a warp's shared-memory reads hit consecutive
  banks and its global accesses are coalesced);
* phase 3 (more than 99 % of the n^3 work for r >= 100; :mod:`.phase3`) stages the pivot-column tile (I, t)
  transposed (row stride T + 1: its staging writes are conflict-free) and the pivot-row tile (t, J) in shared memory,
  KC = 32 (int32 at T = 128) pivots at a time; per pivot k a thread loads R values of column k and R values of row k
  into registers and does R^2 add-mins on its register block, so each shared-memory load feeds R add-mins;
* phases 1 and 2 (O(n^2 T) work; :mod:`.phase12`) keep the thread's cells in registers, read column k and row k of
  the round from global memory (L1-resident) and write an improved cell through to global memory, with one barrier
  per pivot; with paths a cell's last improving pivot k is kept in a byte of shared memory and its predecessor
  p[i][j] = p[k][j] is resolved once after the last pivot (``resolve_paths``: (k, j) cannot improve after pivot k,
  so its end-of-phase p is the one at the improvement; on the pivot rows that p is found by following last pivots
  inside the tile back to a cell the phase left alone), so no dependent global read of p waits inside the 2T serial
  pivot steps of a round.

Kernel variants (registry parameters, compile-time constants; :mod:`.variants`). The kernels above are the reference
(``DEFAULTS``); by default ('auto', unroll 0) the packed-key kinds take ``AUTO_VARIANT``, the fastest measured: with
paths ``shared`` + ``scalar`` + unroll 8, without ``shared`` + ``vec4`` + unroll 8, both ``single``. The general
kernels (gen32 / gen64) and tiles the variant does not fit keep the reference:

* ``p12`` - ``global`` (above) or ``shared``: phases 1-2 copy the tile and, off the diagonal, the pivot tile into
  shared memory (2 T (T+1) words, so T <= 64 at int32), relax there with one barrier per pivot and write the tile back
  once; the pivot's column and row come from shared memory instead of L1. Predecessors are resolved after the phase as
  above. Not with the persistent kernel (it would hold both phases' shared memory).
* ``inner`` - ``scalar`` (32-bit loads), ``vec2`` / ``vec4`` (64- / 128-bit ``LDS.64`` / ``LDS.128``): phase 3 in a
  second layout (``phase3x``) where a thread owns R consecutive rows and R consecutive columns (R must be a multiple
  of the width V). The pivot-column chunk is staged row-major, ``As[i][k]`` (row stride KC + 4: rows R apart start 16
  banks apart, rows stay 16-byte aligned; staging is coalesced and conflict-free), the pivot-row chunk as
  ``Bs[k][j]``; per V pivots a thread loads V consecutive pivots of each of its R rows and, per pivot, R consecutive
  columns: 2R loads of V values per V R^2 relaxations (R = V = 4: 1 load per 8 add-mins, against 1 per 2 scalar).
  Numba has no 128-bit integer, so the vectors come from LLVM's load-store vectorizer: shared arrays declared with
  ``alignment=4 V`` and unsigned (uint32) indices, which drop Numba's negative-index wraparound and let LLVM prove
  the alignment.
* ``unroll`` - pivots per k-loop iteration (U = max(unroll, V)), written out as U / V calls of one group device
  function: LLVM unrolls the R x R and V loops but keeps a loop over groups of 64+ instructions rolled.
* ``stage`` - ``single``: one buffer, load chunk, barrier, compute, barrier; ``double``: two buffers of half the chunk
  (KC <= T/2, so there is always a next chunk), the next chunk's global loads issued into registers before the current
  chunk's compute and stored to the other buffer after it, one barrier per chunk.

Any non-default ``inner`` / ``unroll`` / ``stage`` selects ``phase3x`` (``scalar`` then loads 32-bit values in the
consecutive layout). Its kernel carries launch bounds for K3_REGS = 128 registers per thread at R <= 4 and at most 256
threads (two blocks per SM, as the reference kernel's 96 registers give; left alone ptxas takes 150-190 and one block
fits). benchmarks/fastfw_sass.py counts the k loop's SASS instructions per relaxation.

Paths without extra inner-loop work. With ``paths`` on, phase 3 works on packed keys: a distance x is kept as
``x * T + low`` (a shift by S = log2 T): the pivot-column operand gets ``low = k`` (the pivot's index within the
tile), the pivot-row operand and the cell itself ``low = 0``. A candidate key is then ``(d[i][k] + d[k][j]) T + k``,
the add-min is unchanged, a candidate beats the cell only when its distance is strictly smaller, and at the end the
winning pivot is ``key mod T`` and ``p[i][j] = p[base + k][j]`` (row t of p is final in phase 3). INF is a key of its
own (``2^30 - 1``, or float infinity), never added to anything that could beat a real key. Packing needs
``(2 L + 1) T < 2^30`` where L bounds a simple path (:func:`gpusp.data.graph.path_bound`; every stored finite value
is at most L, so candidates are at most 2L); otherwise the solver uses the general kernels. With ``paths`` off S = 0
and the predecessor matrix is neither read nor written.

Inner add-min (``arith``), phase 3, graphs with non-negative weights:

* ``dpx`` - ``min(int32(a + b), c)``: ptxas fuses it into one Hopper DPX ``VIADDMNMX`` (sm_90);
* ``int32`` - ``s = int32(a + b); if s < c: c = s`` (compare and select, written so as not to be the min-of-sum
  idiom);
* ``float32`` - the matrix in float32 (INF = infinity): ``min(a + b, c)`` as FADD + FMNMX, exact while every key is
  below 2^24: ``(2 L + 1) T' < 2^24`` with T' = T with paths, 1 without; otherwise the solver falls back to the
  integer arith ``AUTO_ARITH`` (counter ``arith``).

General kernels (negative weights, int64 matrices, paths too long to pack): guarded ``if a != INF and b != INF``
relaxations with the last improving pivot in a register and sums clamped at -INF (as :mod:`gpusp.solvers.blockedfw`),
several instructions per relaxation.

Zero-weight cycles and negative weights: the hop tie-break of :func:`gpusp.solvers.common.dense.hop_tiebreak`
(w' = w (n + 1) + 1 when some weight is <= 0), so predecessor chains cannot loop; a graph with zero weights but no
negative ones then still runs the fast kernels (every w' > 0). A negative cycle leaves a negative diagonal entry and
raises NegativeCycleError (:func:`gpusp.solvers.common.dense.check_diagonal`). Float32 is used only without negative
weights.

Launches (``launch``): ``host`` issues three kernels per round of pivots from the host (tens of microseconds of Numba
launch path each, hidden behind the kernels only when a round's phase 3 is long, i.e. large n); ``graph`` issues the
same 3r launches (one when r = 1) once into a CUDA graph (captured on the first run after the kernels have compiled)
and replays it with one launch per run, so small n stop paying the host path; ``persistent`` runs every round in one
cooperative kernel with a grid-wide barrier after each phase (instead of a launch), but it needs the registers of all
three phases (about 200 per thread with paths), so one block fits per SM and it loses to the host loop. ``auto`` is
``graph``, as fast or faster at every n measured. The simulator has no graphs (``graph`` runs the host loop there)
and runs the persistent kernel with one block, the only grid that its grid barrier supports there.

Phase 2 (``phase2``): ``serial`` relaxes the pivot-row and pivot-column tiles pivot by pivot as above (T barriers a
round, the papers' phase 2); ``product`` (the default where the packed-key kernels run with host or graph launches)
uses that phase 1 leaves the pivot tile closed (its shortest paths inside tile t): a row tile becomes
min(D_tJ, D_tt x D_tJ) and a column tile min(D_It, D_It x D_tt) in the (min, +) semiring, computed by phase 3's kernel
(``k2``), no barrier per pivot. The last tile-t vertex on a path splits it into a part inside the tile and what
follows, so the distances are those of the serial phase. A row tile's predecessors come from its own rows of p, so
they are all gathered before any is written (``settle_paths``, one block barrier).

Pivots (``pivots``): ``all`` runs r rounds; ``useful`` renumbers the graph (:meth:`~gpusp.data.graph.Graph.relabel`)
so that the vertices with an arc from and an arc to another vertex come first (``useful_first``: no other vertex can
lie inside a shortest path or on a cycle, so as a pivot it improves nothing) and runs only the ceil(u / T) rounds whose
pivot tiles hold them, every tile still updated each round; the matrices are mapped back to the graph's ids on download
and a negative cycle's vertex is reported in them. ``auto`` prunes when it saves a round (p2p-Gnutella30, with 26,960
vertices without out-arcs: 149 rounds instead of 574).

Tile and register block: compile-time constants (kernels come from a cached factory per
``(T, R, kind, paths, p12, inner, unroll, stage)``); ``tile=0`` / ``regblock=0`` take them from ``TABLE``, chosen per n
and paths (T = 64, R = 4, except T = 32, R = 2 up to n = 1200 with paths; R = 8 spills with paths, T = 128 with R = 4
needs 1024 threads). Threads per block (T/R)^2 <= 1024.

Complexity (every variant): Theta(n_pad^2 rounds T) relaxations (counter ``relaxations``; rounds = r = n_pad / T
unless pivots are pruned), T barriers per round in phase 1, T more in phase 2 when serial, and 2 (single) or 1
(double) per chunk in phases 3 and product 2; Theta(n_pad^2) memory: distance and predecessor matrices plus pristine
copies for the reset, 2 (w + 4) n_pad^2 bytes (2 w n_pad^2 without paths). Global traffic per round: phase 3 reads and
writes every cell and reads the two pivot tiles per tile, about 16 n^2 bytes (int32), so 16 n^3 / T bytes in all, half
of it the cells' read-modify-write (8 n^3 / T).

Measurements behind every default and rule: benchmarks/apsp-fast-h200.md.

Modules: :mod:`.variants` (choices, tables, rules; no Numba), :mod:`.consts` (compile-time constants),
:mod:`.phase12`, :mod:`.phase3` (device functions), :mod:`.kernels` (the kernels, cached per constant set),
:mod:`.solver` (:class:`~gpusp.solvers.blockedfw.fast.solver.FastSolver`, the compile gate's targets).

Sources: blocked FW after Venkataraman et al. (2003) and Katz & Kider (2008); register blocking after Volkov & Demmel's
GEMM and the (min, +) kernels of Lund & Smith (2010) and Djidjev et al.; packed (distance, argmin) keys as in paper
003's packed atomics.
"""
