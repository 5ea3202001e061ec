"""gpusp.ranks: one worker process per rank, answers gathered in rank order, failures raised with the rank named,
NVLink multicast kept off in every worker."""

from __future__ import annotations

import os

import pytest

from gpusp.errors import SolverError
from gpusp.ranks import SAFE_ENV, Ranks, require_gpus


class Probe:
    """A rank's object: reports its rank, environment and a value computed from its arguments."""

    def __init__(self, rank, size, base):
        self.rank, self.size, self.base = rank, size, base

    def where(self):
        return self.rank, self.size, {k: os.environ.get(k) for k in SAFE_ENV}

    def scaled(self, k):
        return self.base * k + self.rank

    def fail_on(self, rank):
        if self.rank == rank:
            raise ValueError(f"planted failure on rank {rank}")
        return self.rank


def test_ranks_answer_in_order_with_multicast_off(monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")  # a contrary setting the workers must not inherit
    with Ranks(3, Probe, 10, first=1) as ranks:
        assert [w[:2] for w in ranks.call("where")] == [(1, 3), (2, 3)]
        assert all(w[2] == SAFE_ENV for w in ranks.call("where"))
        ranks.send("scaled", 4)
        assert ranks.gather() == [41, 42]
        with pytest.raises(SolverError, match=r"(?s)rank 2: .*planted failure on rank 2"):
            ranks.call("fail_on", 2)
        assert ranks.call("fail_on", 0) == [1, 2]  # a failed call leaves the workers serving


def test_a_factory_failure_names_the_rank():
    with pytest.raises(SolverError, match=r"(?s)start failed on 2 of 2 ranks:\nrank 0: .*TypeError"):
        Ranks(2, Probe)  # Probe needs its base


def test_require_gpus_in_the_simulator_stands_in_for_any_count():
    assert require_gpus(4, "a test") == ["sim"] * 4
