"""The SciPy reference (scipy_dijkstra, scipy_apsp) on the awkward cases, negative weights and negative cycles, and
scipy_apsp's rows split over forked workers."""

import multiprocessing
import os
import signal
import threading
import time

import pytest
from cases import assert_apsp_ok, assert_sssp_ok, negative_cycle_graph, sssp_cases

import gpusp
from gpusp.errors import NegativeCycleError, SolverError
from gpusp.solvers.scipy import reference

CASES = sssp_cases(negative=True)
GRAPHS = {c[0]: c[1] for c in CASES}


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_sssp_matches_the_checks(label, graph, source):
    """Distances (Dijkstra, Johnson with negative weights) and parents that pass the five tree checks."""
    assert_sssp_ok(graph, source, gpusp.solve(graph, "scipy_dijkstra", source))


@pytest.mark.parametrize("label,graph,source", CASES, ids=[c[0] for c in CASES])
def test_apsp_matches_the_checks(label, graph, source):
    assert_apsp_ok(graph, gpusp.solve(graph, "scipy_apsp"))


@pytest.mark.parametrize("name", ["scipy_dijkstra", "scipy_apsp"])
def test_negative_cycle_detected(name):
    with pytest.raises(NegativeCycleError):
        gpusp.solve(negative_cycle_graph(), name, 0)


@pytest.mark.parametrize("label,graph,source", CASES[-5:], ids=[c[0] for c in CASES[-5:]])
def test_apsp_workers_split_the_sources(label, graph, source):
    """Three forked workers (more than one row each on n >= 13, fewer rows than workers on n = 4/5)."""
    res = gpusp.solve(graph, "scipy_apsp", workers=3)
    assert_apsp_ok(graph, res)
    assert res.counters["workers"] == min(3, graph.n)


def test_apsp_workers_are_forked_with_the_stop_signals_blocked(tmp_path, monkeypatch):
    """A stop signal that reached a new worker before it took the default handlers back would run the parent's
    handler and keep the worker alive. The workers start with the stop signals blocked, and the parent's mask is given
    back."""
    real = reference._default_signals

    def recording():
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        (tmp_path / str(os.getpid())).write_text(" ".join(str(int(s)) for s in blocked))
        real()

    monkeypatch.setattr(reference, "_default_signals", recording)
    graph = GRAPHS["random-13"]
    assert_apsp_ok(graph, gpusp.solve(graph, "scipy_apsp", workers=2))
    masks = [set(map(int, f.read_text().split())) for f in tmp_path.iterdir()]
    assert len(masks) >= 2 and all({int(s) for s in reference._STOP_SIGNALS} <= mask for mask in masks)
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, []) & set(reference._STOP_SIGNALS)


@pytest.mark.timeout(120)
def test_apsp_workers_negative_cycle():
    """Every worker meets the cycle and the first error is raised; repeated, because multiprocessing.Pool.terminate()
    once hung here now and then (it killed a worker holding the result queue's lock, then waited for that lock)."""
    others = set(multiprocessing.active_children())  # another test's, in this process
    for _ in range(20):
        with pytest.raises(NegativeCycleError):
            gpusp.solve(negative_cycle_graph(), "scipy_apsp", workers=3)
    assert set(multiprocessing.active_children()) <= others  # every worker of this test joined


@pytest.mark.timeout(120)
def test_apsp_worker_killed_is_an_error_not_a_hang(monkeypatch):
    """A worker that dies without a word (the OOM killer, say) makes the call fail, naming it."""
    others = set(multiprocessing.active_children())  # another test's, in this process
    real = reference._scipy_rows

    def dying(bounds):
        if bounds[0] == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(bounds)

    monkeypatch.setattr(reference, "_scipy_rows", dying)
    graph = GRAPHS["random-13"]
    with pytest.raises(SolverError, match=r"worker \d+ died \(exit code -9\)"):
        gpusp.solve(graph, "scipy_apsp", workers=2)
    assert set(multiprocessing.active_children()) <= others  # every worker of this test joined


@pytest.mark.timeout(120)
def test_apsp_workers_are_stopped_when_the_parent_is_interrupted(monkeypatch):
    """An exception in the parent while the workers run (Ctrl-C, a job's stop) ends them and reaches the caller."""
    others = set(multiprocessing.active_children())  # another test's, in this process
    monkeypatch.setattr(reference, "_scipy_rows", lambda bounds: time.sleep(600))

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    # SIGUSR1 from a timer thread, not SIGALRM: pytest-timeout's alarm stays armed over this test
    before = signal.signal(signal.SIGUSR1, interrupt)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGUSR1))
    start = time.monotonic()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            gpusp.solve(GRAPHS["random-13"], "scipy_apsp", workers=3)
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, before)
    assert time.monotonic() - start < 30
    assert set(multiprocessing.active_children()) <= others  # every worker of this test joined


@pytest.mark.timeout(120)
def test_apsp_workers_end_under_a_parent_handler_that_keeps_running(label="random-13"):
    """A parent that forwards stop signals instead of dying (a job's handler) must not keep the forked workers alive:
    they take the default handlers, leave when their chunks are done, and the call returns."""
    graph = GRAPHS[label]
    before = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        for _ in range(5):
            assert_apsp_ok(graph, gpusp.solve(graph, "scipy_apsp", workers=3))
    finally:
        signal.signal(signal.SIGTERM, before)
