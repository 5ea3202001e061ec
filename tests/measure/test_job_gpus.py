"""Multi-GPU jobs: how many GPUs a solver takes (SolverSpec.gpus_of), the check that the host has them before a
solve starts (gpusp solve), and the record naming every GPU the job ran on, with a multi-GPU solver made here
(bellmanford_naive given a ``gpus`` parameter, naming its ranks' GPUs as a multi-GPU solver does), so that nothing
depends on which multi-GPU solvers exist."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpusp import cli, device, ranks
from gpusp.errors import SolverError
from gpusp.measure.job import SolveJob, require_job_gpus, run_job
from gpusp.measure.records import job_gpus
from gpusp.solvers import registry
from gpusp.solvers.bellmanford.rounds import NaiveSolver
from gpusp.solvers.common.base import counters_of
from gpusp.solvers.common.spec import Param

TINY = Path(__file__).resolve().parents[2] / "src" / "gpusp" / "data" / "tiny.gr"


class RanksNaive(NaiveSolver):
    """bellmanford_naive on the first GPU, given ``gpus`` of them, naming them in its counters."""

    def __init__(self, graph, *, gpus, **params):
        super().__init__(graph, **params)
        self.gpu_ids = ranks.require_gpus(gpus, "RanksNaive")

    def run(self, source):
        return {**counters_of(super().run(source)), "gpu_ids": self.gpu_ids}


def multi_gpu():
    spec = registry.get("bellmanford_naive")
    return dataclasses.replace(spec, impl=f"{__name__}:RanksNaive",
                               params=spec.params + (Param("gpus", 1, "GPUs", minimum=1, maximum=8),))


@pytest.fixture
def registered(monkeypatch):
    """bellmanford_naive with a gpus parameter (RanksNaive), in the registry for this test."""
    spec = multi_gpu()
    monkeypatch.setitem(registry.REGISTRY, spec.name, spec)
    return spec


def test_a_solver_takes_its_gpus_parameter_else_one_gpu_or_none():
    spec = multi_gpu()
    assert spec.gpus_of() == 1 and spec.gpus_of({"gpus": 4}) == 4 and spec.gpus_of({"gpus": "2", "block": 64}) == 2
    assert registry.get("bellmanford_naive").gpus_of({"block": 64}) == 1
    assert registry.get("dijkstra_cpu").gpus_of() == 0 and registry.get("scipy_dijkstra").gpus_of() == 0
    with pytest.raises(SolverError, match="must be >= 1"):
        spec.gpus_of({"gpus": 0})
    assert spec.info()["multi_gpu"] is True and spec.info()["gpus"] == 1
    plain = registry.get("bellmanford_naive").info()
    assert plain["multi_gpu"] is False and plain["gpus"] == 1 and registry.get("dijkstra_cpu").info()["gpus"] == 0


def test_a_solve_on_too_few_gpus_stops_before_it_starts(registered, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(ranks, "gpu_ids", lambda: ["0"])
    record = tmp_path / "r.json"
    with pytest.raises(SolverError, match=r"bellmanford_naive with gpus=2 takes 2 GPUs; this host offers 1 \(0\)"):
        run_job(SolveJob(graph=TINY, solver="bellmanford_naive", params={"gpus": 2}, record=record))
    code = cli.main(["solve", "--graph", str(TINY), "--solver", "bellmanford_naive", "--param", "gpus=3",
                     "--record", str(record)])
    assert code != 0 and "takes 3 GPUs; this host offers 1" in capsys.readouterr().err
    assert not record.exists()
    # the check before the start asks only for more than one GPU (a 1-GPU solver finds its GPU itself)
    monkeypatch.setattr(ranks, "gpu_ids", list)
    for params in ({"gpus": 1}, {}):
        require_job_gpus(SolveJob(graph=TINY, solver="bellmanford_naive", params=params))
    monkeypatch.setattr(ranks, "gpu_ids", lambda: ["0", "1"])
    require_job_gpus(SolveJob(graph=TINY, solver="bellmanford_naive", params={"gpus": 2}))


def test_the_simulator_stands_in_for_every_gpu_and_the_record_names_them(registered, tmp_path):
    record = tmp_path / "r.json"
    out = run_job(SolveJob(graph=TINY, solver="bellmanford_naive", params={"gpus": 2}, num_sources=1, trials=1,
                           warmup=0, record=record))
    assert out.status == "ok"
    machine = json.loads(record.read_text())["machine"]
    assert machine["gpus"] == [{"id": "sim", "name": "simulated"}] * 2
    assert machine["gpu"].startswith("CUDA simulator")  # the single field stays
    run_job(SolveJob(graph=TINY, solver="dijkstra_cpu", num_sources=1, trials=1, warmup=0, record=record))
    assert json.loads(record.read_text())["machine"]["gpus"] == []
    run_job(SolveJob(graph=TINY, solver="vertexbf_push", num_sources=1, trials=1, warmup=0, record=record))
    assert json.loads(record.read_text())["machine"]["gpus"] == [{"id": "sim", "name": "simulated"}]


def test_the_record_names_the_ranks_gpus_a_solver_counts():
    spec = multi_gpu()
    runs = [{"counters": {"gpu_ids": ["0", "1"]}}, {"counters": {"gpu_ids": ["0", "1"]}}]
    assert job_gpus(spec, runs) == [{"id": "0", "name": "simulated"}, {"id": "1", "name": "simulated"}]
    assert job_gpus(spec, [{"counters": {}}]) == [{"id": "sim", "name": "simulated"}]
    assert job_gpus(registry.get("dijkstra_cpu"), runs) == []


def test_gpu_names_follow_the_visible_order(monkeypatch):
    """On a GPU host an id is looked up among the GPUs this process sees (CUDA_VISIBLE_DEVICES order, Numba's
    device index); an id it cannot see has no name."""
    from numba import cuda

    monkeypatch.setattr(device, "mode", lambda: "gpu")
    monkeypatch.setattr(ranks, "gpu_ids", lambda: ["2", "3"])
    monkeypatch.setattr(cuda, "list_devices", lambda: [type("D", (), {"name": b"NVIDIA H200"})(),
                                                       type("D", (), {"name": "NVIDIA H100"})()], raising=False)
    assert ranks.gpu_names(["3", "2", "7"]) == ["NVIDIA H100", "NVIDIA H200", None]
    monkeypatch.setattr(device, "mode", lambda: "none")
    assert ranks.gpu_names(["0"]) == [None]
