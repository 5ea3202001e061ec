"""The ``gunrock`` family's solver: Gunrock's frontier SSSP on the GPU, built from its pinned archive with gpusp's
driver."""

from __future__ import annotations

from ...common.spec import M, N, W, Param, SolverSpec, larger, note

SPECS = (
    SolverSpec("gunrock_sssp", "sssp", "gpu", "-", "external GPU peer: Gunrock's frontier SSSP (advance relaxing "
               "with atomic min, then filter), built from its pinned archive with gpusp's driver, run on the same "
               "graph and sources; the whole sssp::run call timed with CUDA events, Gunrock's own enact time beside "
               "it; distances checked against SciPy (no predecessors)",
               "gpusp.solvers.peers.gunrock.solver:GunrockSolver",
               params=(Param("load_balance", "block_mapped", "how the advance spreads a frontier's arcs over threads "
                             "(Gunrock's load_balance_t): 'block_mapped' a block per chunk of frontier vertices, their "
                             "arcs shared by the block (Gunrock's default); 'thread_mapped' a thread per frontier "
                             "vertex; 'merge_path' and 'merge_path_v2' Merrill and Garland's merge-path split of "
                             "vertices and arcs (merge_path_v2 in the pinned commit also sorts and prints every "
                             "frontier: debug code its time includes)",
                             choices=("block_mapped", "thread_mapped", "merge_path", "merge_path_v2")),
                       Param("uniquify", False, "run Gunrock's uniquify operator after the filter (best effort, "
                             "hash-based): fewer duplicate vertices in the next frontier", choices=(False, True))),
               memory=note(4 * (N + 1) + (4 + W) * M, "CSR") + note((W + 8) * N, "distances, visited stamps, work scan")
               + note(8 * larger(N, M), "two frontiers of max(n, m) vertices; one that outgrows them is resized"),
               peer=True),
)
