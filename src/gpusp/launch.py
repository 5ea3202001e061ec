"""The ``gpusp`` console command (and ``python -m gpusp``): where no CUDA GPU is usable and none was allotted, the
CUDA simulator stands in for one, as the workflow's ``simulate: auto`` does. The choice is made before Numba is
imported (Numba reads ``NUMBA_ENABLE_CUDASIM`` once, at import), by asking the CUDA driver itself how many devices
it has; an explicit ``NUMBA_ENABLE_CUDASIM`` is always kept, and a GPU allotted by SLURM or ``CUDA_VISIBLE_DEVICES``
is never replaced by the simulator (a job that was given one and cannot use it fails instead).
"""

from __future__ import annotations

import ctypes
import os
import sys

from .device import ALLOTTED


def cuda_devices() -> int:
    """CUDA devices the driver reports: 0 without a driver (libcuda) or when it fails to start."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def simulate_without_gpu(environ=os.environ) -> bool:
    """Set ``NUMBA_ENABLE_CUDASIM=1`` in ``environ`` where it is unset, no GPU was allotted and the driver reports
    none; whether it did."""
    if "NUMBA_ENABLE_CUDASIM" in environ or any(environ.get(name) for name in ALLOTTED) or cuda_devices():
        return False
    environ["NUMBA_ENABLE_CUDASIM"] = "1"
    return True


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if simulate_without_gpu() and args[:1] == ["solve"]:
        print("gpusp: no CUDA GPU here: GPU solvers run in the CUDA simulator (times are SIMULATED; "
              "NUMBA_ENABLE_CUDASIM=0 refuses them instead)", file=sys.stderr)
    from .cli import main as cli_main  # Numba is imported from here on

    return cli_main(args)
