"""Every GPU kernel compiles to sm_90 PTX offline (what the simulator, which does no typing, hides)."""

import os
import subprocess
import sys

import pytest

from gpusp.solvers.compilecheck import modules


def test_every_gpu_solver_module_lists_its_kernels():
    from gpusp.solvers.registry import SPECS

    gpu_modules = {s.impl.split(":")[0] for s in SPECS if s.device == "gpu"}
    assert gpu_modules <= set(modules())


@pytest.mark.compile
def test_compile_all_kernels_for_sm90():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-m", "gpusp.solvers.compilecheck"], env=env, capture_output=True, text=True,
                          timeout=1200)
    tail = "\n".join(proc.stdout.splitlines()[-40:]) + proc.stderr[-3000:]
    assert proc.returncode == 0, tail
    assert "0 failures" in proc.stdout
