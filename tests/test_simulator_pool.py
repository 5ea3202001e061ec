"""The suite's simulated threads (tests/conftest.py): a failed launch leaves no thread polling behind."""

import time

import numpy as np
import pytest
from numba import config, cuda

pytestmark = pytest.mark.skipif(not config.ENABLE_CUDASIM, reason="the pool serves the CUDA simulator only")


@cuda.jit(device=True)
def _pause():
    time.sleep(1e-4)  # as the polling kernels' pause() in the simulator


@cuda.jit
def _raise_while_others_poll(flag, polls):
    i = cuda.threadIdx.x
    if i == 0:
        raise ValueError("thread 0 fails")
    while flag[0] == 0:  # nobody sets it: only the failure can end this loop
        polls[i] += 1
        _pause()


@cuda.jit
def _fill(out):
    out[cuda.threadIdx.x] = cuda.threadIdx.x


def test_a_failed_launch_ends_its_polling_threads_and_the_pool_serves_the_next():
    flag, polls = cuda.to_device(np.zeros(1, np.int32)), cuda.to_device(np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="thread 0 fails"):
        _raise_while_others_poll[1, 4](flag, polls)
    time.sleep(0.5)
    before = polls.copy_to_host()
    time.sleep(0.5)
    assert (polls.copy_to_host() == before).all(), "a polling thread of the failed launch still runs"
    out = np.zeros(4, np.int32)
    _fill[1, 4](out)
    assert out.tolist() == [0, 1, 2, 3]
