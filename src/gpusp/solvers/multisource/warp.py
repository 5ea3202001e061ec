"""A warp-wide OR of int32 values for kernels that the CUDA simulator must also run.

On a GPU ``warp_or`` is a butterfly of ``cuda.shfl_xor_sync`` over the full warp. The simulator has no warp
intrinsics (numba-cuda 0.30.4 raises AttributeError), so there the same function is plain Python run by each
simulated thread: the 32 threads of a warp post their values in a per-warp slot list, meet at a barrier and
read them all. Both versions require what the hardware does: all 32 lanes of the warp call it, the same
number of times.
"""

from __future__ import annotations

import threading

import numba
from numba import cuda

from ..common.launch import TARGET

FULL_MASK = 0xFFFFFFFF
WARP = 32

if not TARGET.warp_intrinsics:
    _lock = threading.Lock()
    _warps: dict = {}  # (block, warp) -> [barrier, two slot lists, calls made by each lane]
    BARRIER_TIMEOUT_S = 120.0  # a lane that died (an exception) must not hang its warp forever

    def warp_or(value):
        """The OR of the 32 lanes' values (simulated)."""
        t = threading.current_thread()
        key = (tuple(t.blockIdx), t.thread_id // WARP)
        lane = t.thread_id % WARP
        with _lock:
            state = _warps.get(key)
            if state is None or state[0].broken:  # new, or left broken by a launch that raised
                state = _warps[key] = (threading.Barrier(WARP, timeout=BARRIER_TIMEOUT_S),
                                       ([0] * WARP, [0] * WARP), [0] * WARP)
        barrier, slots, calls = state
        # alternate two slot lists: a lane can post call c + 2 only after every lane has reached call c + 1,
        # i.e. has read call c, so one barrier per call suffices
        posted = slots[calls[lane] % 2]
        calls[lane] += 1
        posted[lane] = int(value)
        barrier.wait()  # every lane has posted
        out = 0
        for x in posted:
            out |= x
        return out

else:

    @cuda.jit(device=True)
    def warp_or(value):
        """The OR of the 32 lanes' int32 values."""
        x = numba.int32(value)
        for d in (16, 8, 4, 2, 1):
            x = numba.int32(x | cuda.shfl_xor_sync(FULL_MASK, x, d))  # exchange with the lane d apart
        return x
