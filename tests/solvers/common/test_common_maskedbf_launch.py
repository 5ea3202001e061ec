"""The device-resident launch modes of paper 004's masked rounds (gpusp.solvers.common.maskedbf) that vertexbf_push
and edgebf_coo share: rounds replayed from CUDA graphs (``launch='graph'``) or run in one persistent kernel
(``'persistent'``), in the simulator.

The simulator runs a cooperative grid of one block (its grid sync is a block barrier), so these tests check the
logic; the H200 runs check the timing.
"""

import pytest
from cases import _g, assert_sssp_ok, negative_cycle_graph, pairwise, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError

NEGATIVE = sssp_cases(negative=True)
NAMES = ["vertexbf_push", "edgebf_coo"]


def _solve(graph, name, source=0, **kw):
    kw.setdefault("warmup", 0)
    kw.setdefault("block", 32)
    return gpusp.solve(graph, name, source, **kw)


def _chain(n):
    return _g(n, [(i, i + 1, 1 + i % 3) for i in range(n - 1)], f"chain-{n}")


# every awkward graph (negative weights included) with each solver and each device-resident mode, pairwise
LAUNCH_CELLS = pairwise(case=NEGATIVE, name=NAMES, launch=["graph", "persistent"])


@pytest.mark.parametrize("cell", LAUNCH_CELLS, ids=[f"{c['case'][0]}-{c['name']}-{c['launch']}" for c in LAUNCH_CELLS])
def test_launch_modes_match_reference(cell):
    (label, graph, source), name, launch = cell["case"], cell["name"], cell["launch"]
    res = _solve(graph, name, source, launch=launch)
    assert_sssp_ok(graph, source, res)
    if launch == "graph":  # the same kernels in the same order as host launches: the same rounds
        assert res.counters["iterations"] == _solve(graph, name, source).counters["iterations"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("launch", ["host", "graph", "persistent"])
def test_launch_modes_detect_negative_cycles(name, launch):
    with pytest.raises(NegativeCycleError, match="change in round 4"):
        _solve(negative_cycle_graph(), name, launch=launch)
    with pytest.raises(NegativeCycleError, match="found in round 1"):
        _solve(_g(1, [(0, 0, -2)], "neg-loop"), name, launch=launch)


@pytest.mark.parametrize("name", NAMES)
def test_graph_mode_spans_several_batches(name):
    """A chain longer than a batch of rounds: replays continue until a batch holds the quiet round."""
    graph = _chain(70)
    res = _solve(graph, name, launch="graph")
    assert_sssp_ok(graph, 0, res)
    assert res.counters["iterations"] == 70
    assert _solve(graph, name, launch="persistent").counters["iterations"] <= 70
