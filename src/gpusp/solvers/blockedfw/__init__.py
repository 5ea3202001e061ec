"""Blocked Floyd-Warshall APSP on the GPU, the eight versions of paper 002 (Zuccato & Lena).

The algorithm (Venkataraman, Sahni & Mukhopadhyaya's blocked FW, as the paper uses it): pad the n x n distance
matrix to ``n_pad = r * B`` (``r = ceil(n / B)``; padded vertices are isolated, so any n works and the answer is
cropped at download) and cut it into r x r blocks of B x B cells. Round t (t = 0 .. r-1) relaxes every d[i][j]
through the B vertices k of block t, in three phases:

1. the pivot block (t, t): plain Floyd-Warshall inside the block (B steps, each depending on the last);
2. the other blocks of pivot row t (read the pivot block and themselves) and of pivot column t;
3. every remaining block (I, J), I != t != J: it reads only (I, t) and (t, J), both final after phase 2,
   so the B steps need no ordering between threads and the cell can stay in a register.

One CUDA block of B x B threads computes one matrix block, one cell per thread (``threadIdx.x`` is the column, so a
warp reads consecutive addresses), with a barrier between the B steps of phases 1 and 2. B and the distance dtype
are compile-time constants (kernel factories cached per B, dtype and layout); B = 24 gives 576-thread blocks. Every
version does n_pad^3 relaxations (counter ``relaxations``) in r rounds (``iterations``); they differ in how many
launches and threads they spend and in where the blocks live:

* **v10** (paper 1.0) - one launch for the pivot block, one per block of the pivot row / column and one per
  remaining block: r^2 single-block launches a round.
* **v11** (1.1) - one kernel per phase over the full r x r grid; blocks outside the phase return at once.
* **v12** (1.2) - rationalised grids of 1, 2(r-1) (row blocks, then column blocks, skipping t) and (r-1)^2 blocks
  (index b maps to b + (b >= t)).
* **v20** (2.0) - v12 with the blocks each phase reads staged in shared memory (own cell of phase 3 in a register).
* **v21** (2.1) - v20 with bank-conflict prevention where the paper's lcm rule predicts a conflict
  (:func:`~gpusp.solvers.blockedfw.layout.column_conflict`): arrays read only by column are stored transposed, the
  phase-1 pivot (read both ways) gets row stride B + 1; with 32 banks B = 4 needs neither, 8 .. 32 both.
* **v30** (3.0) - v21 with phase 2 split into four pieces (column blocks above / below the pivot, row blocks left /
  right of it) and phase 3 into the four quadrants around the pivot cross, on four streams; events make each
  quadrant wait for its two phase-2 pieces and the next round's phase 1 wait for every piece of this round.
* **v40** (4.0) - the v30 sequence for all rounds (matrix reset, every piece, the negative-cycle check) captured
  into a CUDA graph with exactly v30's dependencies (a cuda.core ``GraphBuilder`` as the launch stream: ``split``
  forks a branch per dependent piece, ``join`` merges a piece's inputs) and launched with one call. The first run
  launches the pieces plainly, compiling every kernel. ``capture='once'`` (default) then captures and instantiates the
  graph in that run and every later run replays it; ``capture='per-run'`` captures, instantiates, launches and
  releases a new graph inside every later run, as the thesis does (its measured cost includes graph construction;
  the capture issues each piece through Numba's launch path, tens of microseconds of host time per piece where C
  pays a few).
* **v41** (4.1) - the graph with the paper's relaxed inter-round dependencies: round t+1's phase 1 waits only for
  round t's lower-right quadrant, its upper and left phase-2 pieces also for round t's upper-right and lower-left
  quadrants, its upper-left quadrant also for round t's; pieces of consecutive rounds may overlap.

Without a GPU, v40 and v41 launch their DAG's pieces one by one in an adversarial topological order (latest round
first) in both ``capture`` modes, which checks the kernels and that the DAG's dependencies suffice, not graph capture
itself (counters ``graph`` and ``captured``: whether the run launched a graph and captured one).

Launches (``launcher``, v10 ... v30): the host loops launch through :class:`~gpusp.solvers.common.launch.Launch` objects
configured once per solver, and the negative-cycle flag is read through :class:`~gpusp.solvers.common.launch.NativeRead`.
``'native'`` (default) pays the driver's cost per launch, as the paper's C code does; ``'numba'`` goes through
Numba's dispatcher every launch (tens of microseconds of host time each), for comparison. The answers are the same.

Paths (``paths``, default on): the paper computes costs only and leaves a next-hop matrix as future work. With paths
every version keeps a predecessor matrix (``p[i][j] = p[k][j]`` whenever going through k improves d[i][j]), the same
O(1) extra work per improvement. Column pieces of phase 2 and phase 3 remember only the last improving k and read
``p[k][j]`` once at the end, since the block it comes from does not change during those phases. ``paths=False``
builds every kernel without predecessors (a compile-time constant: no branch at run time, the shared predecessor
arrays shrink to one unused cell) and allocates, copies and resets no predecessor matrix (the kernels get a 1 x 1
placeholder); ``download`` then derives parents from tight arcs on the host, untimed, for validation
(:func:`~gpusp.solvers.common.dense.apsp_tight_parents`, as ``blockedfw_fast`` and ``nsssp_*`` without paths). Phases 2 and 3
relax through d[i][k] already relaxed through later vertices of the same block, so with a zero-weight cycle
predecessor chains could loop: graphs with a weight <= 0 run under the hop tie-break of :mod:`gpusp.solvers.common.dense`
(counters ``hop_tiebreak``, ``matrix_dtype``), with paths or without (the host-derived parents need it too).
Negative weights: INF operands are never added, sums are clamped at -INF, and a negative diagonal entry after the
last round raises NegativeCycleError.

Complexity: Theta(n_pad^3) work, Theta(n_pad^2) memory (distance and, with paths, predecessor matrices, plus
pristine copies to reset from), r sequential rounds; launches per run: v10 r^3, v11 / v12 / v20 / v21 3r, v30 up to
9r on four streams, v40 / v41 one graph launch (one check kernel more in every version).

The paper's findings on the blocking factor (K80, n = 80 .. 1200, B in {8, 16, 24, 32}): with shared memory (2.x)
B = 8 was never the best, larger B (16 to 32) won, the best depending on n (n = 640: B = 32; n = 1200: B = 16 beat
24, 32 does not divide 1200), and the choice moved times only moderately; with global memory (1.2) the trend
reversed, smaller B being faster. 2.0 fell behind 2.1 / 3.0 at B = 32 (bank conflicts), 3.0 was slowest at B = 8,
1.1 was the slowest version, and the graph versions 4.0 and 4.1 were slow and alike (graph construction overhead).

Modules: :mod:`.layout` (no Numba: block sizes, memory, the conflict rule, pieces and DAGs), :mod:`.cells` (device
functions of one cell), :mod:`.globalmem` (1.x kernels), :mod:`.sharedmem` (2.x - 4.x kernels), :mod:`.versions`
(the solver classes and the compile gate's list).
"""
