"""The spec machinery every family's spec.py is written with (gpusp.solvers.common.spec): a memory bound computes its
bytes and writes its formula from one expression, and every registered solver's bound agrees with its formula."""

import pytest

from gpusp.solvers import registry
from gpusp.solvers.common.spec import CSR, MATRIX, MAX_INT32_ARCS, M, N, W, Bytes, choose, derived, larger, named, note, par, when


def test_an_expression_gives_its_bytes_and_its_formula():
    bound = 4 * (N + 1) + (4 + W) * M + par("streams") * (2 * W + 16) * N
    assert bound(10, 30, {"streams": 3}, 8) == 4 * 11 + 12 * 30 + 3 * 32 * 10
    assert str(bound) == "4(n + 1) + (4 + w) m + streams (2w + 16) n"
    assert MATRIX(5, 0, {}, 4) == 8 * 25 and str(MATRIX) == "(w + 4) n^2"
    assert (M // par("split"))(0, 100, {"split": 8}, 4) == 12 and str(M // par("split")) == "m/split"


def test_named_parts_conditions_and_derived_quantities_are_explained_once():
    bound = CSR + when("fuse = block", lambda p: p["fuse"] == "block", note(8 * par("queue"), "two queues")) \
        + choose("paths", lambda p: p["paths"], 2 * N, N) + larger(N, M) \
        + 8 * derived("S", lambda n, m, p, w: p["batch"] or 32, "sources per batch")
    csr = 4 * 11 + 8 * 30 + 16 * 10
    on = dict(fuse="block", queue=5, paths=True, batch=0)
    assert bound(10, 30, on, 4) == csr + 40 + 20 + 30 + 8 * 32
    assert bound(10, 30, dict(on, fuse="off", paths=False, batch=4), 4) == csr + 0 + 10 + 30 + 32
    text = bound.formula()
    assert text.startswith("CSR + [8 queue (two queues) if fuse = block] + [2n if paths, else n] + max(n, m) + 8S bytes")
    assert "; CSR = o (n + 1) + (4 + w) m + (2w + 8) n" in text and "; S = sources per batch" in text
    assert text.count("CSR =") == 1 and named("X", N).formula() == "X bytes; X = n"


def test_offsets_past_int32_take_eight_bytes_and_only_solvers_that_take_them_run():
    """Past 2^31 - 1 arcs a graph's offsets are int64: the CSR bound counts 8 bytes per offset, and a solver whose
    kernels take int32 offsets is refused with the reason."""
    assert CSR(10, MAX_INT32_ARCS + 1, {}, 4) - CSR(10, MAX_INT32_ARCS, {}, 4) == 4 * 11 + 8
    wide = [s for s in registry.SPECS if s.offsets64]
    narrow = [s for s in registry.SPECS if not s.offsets64]
    assert wide and narrow
    for spec in narrow:
        assert spec.why_not(1000, MAX_INT32_ARCS) is None or "int32 arc offsets" not in spec.why_not(1000, MAX_INT32_ARCS)
        assert "int32 arc offsets" in spec.why_not(1000, MAX_INT32_ARCS + 1)
    for spec in wide:
        reason = spec.why_not(1000, MAX_INT32_ARCS + 1)
        assert reason is None or "offsets" not in reason


@pytest.mark.parametrize("spec", registry.SPECS, ids=[s.name for s in registry.SPECS])
def test_every_solver_states_its_memory_as_one_bound(spec):
    """The bound the planner compares with the GPU's memory is the one whose formula `gpusp solvers` shows: it is
    computed for a graph at the defaults, grows with the graph, and its formula names bytes."""
    assert isinstance(spec.memory, Bytes)
    params = spec.resolve({})
    small, large = spec.memory(100, 400, params, 4), spec.memory(10_000, 40_000, params, 4)
    assert 0 <= small <= large
    assert spec.memory_formula.endswith("bytes") or " bytes; " in spec.memory_formula
    assert spec.info()["memory"] == spec.memory_formula
