"""The ``nsssp`` family's solvers: paper 001's task-parallel APSP, N single-source problems per launch."""

from __future__ import annotations

from ..common.spec import LAUNCHER, M, N, W, Param, SolverSpec, note, par

PARAMS = (Param("sources_per_launch", 32, "N: SSSP problems solved per launch", minimum=1, maximum=1024),
          Param("groups_per_block", 4, "B: groups of N threads per block", minimum=1, maximum=32),
          Param("paths", True, "run the recording kernel (paper 001's path recording); off: cost computation "
                "only, parents derived on the host for validation (positive weights)", choices=(True, False)),
          Param("sample_groups", 0, "source groups solved, a seeded sample of the ceil(n / N) groups (0: all): an "
                "APSP run from sampled sources whose time scales to the whole, as for the ring's |V| rounds per source",
                minimum=0),
          Param("sample_seed", 1, "seed of the sampled groups", minimum=0),
          LAUNCHER)
# paper 001's (3N + 1)|V| + 2|E| words in bytes, the inverted graph for path recording and the parent staging
MEMORY = note(note((8 + 2 * W) * par("sources_per_launch") * N, "masks, costs, updates and parent staging of N sources")
              + note(2 * (4 * (N + 1) + (4 + W) * M), "the graph and its inverse"),
              "the (w + 4) n^2 result on the device if it fits, else on the host")

SPECS = (
    SolverSpec("nsssp_shared", "apsp", "gpu", "001", "N SSSPs per launch, interleaved per-source arrays, "
               "edges staged in shared memory; recording kernel on the inverted graph",
               "gpusp.solvers.nsssp.solver:SharedSolver", params=PARAMS, memory=MEMORY),
    SolverSpec("nsssp_global", "apsp", "gpu", "001", "as nsssp_shared without shared memory",
               "gpusp.solvers.nsssp.solver:GlobalSolver", params=PARAMS, memory=MEMORY),
)
