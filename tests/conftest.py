"""Test setup: GPU kernels run in Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM is set otherwise.

The variable must be set before Numba is imported. On a GPU machine, run the suite with
``NUMBA_ENABLE_CUDASIM=0`` to test the real kernels.
"""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numba  # noqa: E402  (after the environment variable on purpose)


def _patch_simulator_polling():
    """The simulator's block manager busy-polls its threads holding the GIL; a short sleep per poll
    makes kernels with barriers 2-5x faster (private API, numba-cuda 0.30.x; results unchanged)."""
    from numba.cuda.simulator import kernel

    def run(self, grid_point, *args):
        threads, livethreads, blockedthreads = set(), set(), set()
        for block_point in __import__("numpy").ndindex(*self._block_dim):
            t = kernel.BlockThread(lambda: self._f(*args), self, grid_point, block_point, self._debug)
            t.start()
            threads.add(t)
            livethreads.add(t)
        while livethreads:
            time.sleep(0.0005)
            for t in livethreads:
                if t.syncthreads_blocked:
                    blockedthreads.add(t)
                elif t.exception:
                    for other in threads:
                        other.abort = True
                        other.syncthreads_blocked = False
                        other.syncthreads_event.set()
                    raise t.exception[0].with_traceback(t.exception[1])
            if livethreads == blockedthreads:
                for t in blockedthreads:
                    t.syncthreads_blocked = False
                    t.syncthreads_event.set()
                blockedthreads = set()
            livethreads = {t for t in livethreads if t.is_alive()}
        for t in threads:
            if t.exception:
                raise t.exception[0].with_traceback(t.exception[1])

    kernel.BlockManager.run = run


if numba.config.ENABLE_CUDASIM:
    _patch_simulator_polling()

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("GPUSP_MIRROR", REPO.parent / "shared" / "data"))
