"""The CUDA simulator's shared arrays under gpusp: every thread of a block that reaches a ``cuda.shared.array`` line
gets the block's one array, also when threads reach it at once (numba-cuda 0.30.4's simulator can hand two of them
arrays of their own; :mod:`gpusp.solvers.common.launch` puts its look-up under a lock)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from numba import cuda

from gpusp.solvers.common.launch import TARGET

pytestmark = pytest.mark.skipif(not TARGET.simulator, reason="the simulator's shared arrays (a GPU has its own)")


def test_threads_that_reach_a_shared_array_at_once_share_it(monkeypatch):
    from numba.cuda.simulator import kernelapi

    shared = kernelapi.FakeCUDAShared(0)
    real_empty = np.empty

    def slow_empty(*args, **kwargs):  # a thread switch between the look-up and the store, every time
        time.sleep(0.01)
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(np, "empty", slow_empty)
    start, got = threading.Barrier(8), []

    def reach():
        start.wait()
        got.append(shared.array(16, np.int32))

    threads = [threading.Thread(target=reach) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(a is got[0] for a in got)
    assert shared.array(16, np.int32) is not got[0]  # another line: another array


def test_a_block_sees_every_threads_write_to_its_shared_array():
    @cuda.jit
    def gather(out):
        buf = cuda.shared.array(64, np.int32)
        t = cuda.threadIdx.x
        buf[t] = t + 1
        cuda.syncthreads()  # every thread has written its slot
        out[cuda.blockIdx.x, t] = buf[(t + 1) % 64]

    out = np.zeros((4, 64), np.int32)
    for _ in range(3):
        gather[4, 64](out)
        assert (out == (np.arange(64) + 1) % 64 + 1).all()
