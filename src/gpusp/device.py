"""Where kernels run (real GPU, CUDA simulator, or nowhere) and how device work is timed.

``mode()`` is ``"gpu"``, ``"sim"`` (``NUMBA_ENABLE_CUDASIM=1``, set before Numba is imported) or
``"none"``. :class:`DeviceTimer` brackets device work with CUDA events on a GPU and falls back to the
wall clock in the simulator and for CPU solvers, saying which clock it used.
"""

from __future__ import annotations

import functools
import os
import platform
import time
from pathlib import Path


ALLOTTED = ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES")  # set: a GPU was given to this process


def _simulated_env() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


@functools.lru_cache(maxsize=1)
def mode() -> str:
    """'sim' in the CUDA simulator, 'gpu' when a usable CUDA device exists, else 'none'."""
    if _simulated_env():
        return "sim"
    try:
        from numba import cuda

        return "gpu" if cuda.is_available() else "none"
    except Exception:  # no driver, no NVVM, or numba-cuda missing: all mean no GPU
        return "none"


def require_cuda(solver: str) -> None:
    """Raise a clear error when a GPU solver is asked for with neither a GPU nor the simulator."""
    if mode() == "none":
        from .errors import SolverError

        allotted = ", ".join(f"{k}={os.environ[k]}" for k in ALLOTTED if os.environ.get(k))
        why = f"none is usable here, though one was allotted ({allotted})" if allotted else "none is usable here"
        raise SolverError(f"{solver} needs a CUDA GPU; {why}. To run it in the CUDA simulator: in the workflow "
                          "--config simulate=always (a cluster without real GPUs), for gpusp solve "
                          "NUMBA_ENABLE_CUDASIM=1")


def cpu_model(cpuinfo="/proc/cpuinfo") -> str:
    """The host CPU's model as the kernel names it (``model name`` in /proc/cpuinfo, e.g. "Intel(R) Xeon(R)
    Platinum 8480+"; on Arm, which names no model there, the implementer and part numbers), else what
    ``platform`` knows (the architecture at least)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        text = ""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and value.strip():
            fields.setdefault(key.strip().lower(), " ".join(value.split()))
    if "model name" in fields:
        return fields["model name"]
    if "cpu part" in fields:
        return (f"{platform.machine() or 'arm'} (implementer {fields.get('cpu implementer', '?')}, "
                f"part {fields['cpu part']})")
    return platform.processor() or platform.machine() or "unknown"


def cpu_cores() -> dict:
    """Logical cores of the host and those this process may run on (a SLURM job or ``taskset`` gets fewer)."""
    total = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else total
    return {"cpu_cores": total, "cpu_cores_usable": usable}


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def device_info() -> dict:
    """The machine a record was measured on: GPU name, compute capability, driver and CUDA versions (or the
    simulator), the host CPU's model and cores (the CPU baselines' hardware, and every speed-up's
    denominator), and the versions of Python, NumPy, SciPy, Numba and numba-cuda."""
    info = {"mode": mode(), "host": platform.node(), "cpu": platform.machine() or platform.processor(),
            "cpu_model": _cpu_model(), **cpu_cores(), "python": platform.python_version()}
    # versions from the installed distributions, so that recording one never imports SciPy into a GPU solve
    info.update(numba=_version("numba"), numpy=_version("numpy"), scipy=_version("scipy"),
                numba_cuda=_version("numba-cuda"))
    if info["mode"] == "gpu":
        from numba import cuda

        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        info.update(gpu=name, compute_capability=".".join(map(str, dev.compute_capability)),
                    multiprocessors=dev.MULTIPROCESSOR_COUNT)
        try:
            info["cuda_driver_api"] = ".".join(map(str, cuda.driver.driver.get_version()))
        except Exception:
            pass
        info["driver"] = _nvidia_smi_driver()
        try:
            info["cuda_runtime"] = ".".join(map(str, cuda.runtime.get_version()))
        except Exception:
            pass
        try:
            free, total = cuda.current_context().get_memory_info()
            info.update(memory_free=int(free), memory_total=int(total))
        except Exception:
            pass
    elif info["mode"] == "sim":
        info["gpu"] = "CUDA simulator (timings are not GPU timings)"
    return info


@functools.lru_cache(maxsize=1)
def _cpu_model() -> str:
    return cpu_model()


def _nvidia_smi_driver() -> str | None:
    """The NVIDIA driver release (e.g. 580.159.04), from nvidia-smi when it is on PATH."""
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def free_device_memory() -> int | None:
    """Free bytes on the current GPU, None without one (the simulator has no limit worth checking)."""
    if mode() != "gpu":
        return None
    from numba import cuda

    return int(cuda.current_context().get_memory_info()[0])


def multiprocessors() -> int:
    """Streaming multiprocessors of the current GPU (a small stand-in in the simulator)."""
    if mode() != "gpu":
        return 2
    from numba import cuda

    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


class DeviceTimer:
    """Times a callable: CUDA events around device work on a GPU, the wall clock otherwise."""

    def __init__(self, on_device: bool):
        self.events = on_device and mode() == "gpu"
        self.clock = "cuda-event" if self.events else ("wall-simulated" if mode() == "sim" and on_device
                                                       else "wall")

    def time(self, fn, *args, **kwargs):
        """Run ``fn`` and return (milliseconds, its return value)."""
        if self.events:
            from numba import cuda

            start, end = cuda.event(), cuda.event()
            start.record()
            out = fn(*args, **kwargs)
            end.record()
            end.synchronize()
            return float(cuda.event_elapsed_time(start, end)), out
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        return (time.perf_counter() - t0) * 1e3, out
