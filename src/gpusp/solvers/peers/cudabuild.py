"""A peer's CUDA driver compiled by nvcc against a header-only archive (Gunrock's, for ``gunrock_sssp``): finding nvcc,
probing it for the architecture, the driver source shipped beside this module (``gunrock_sssp.cu``), its flags, and
the compile that keeps the driver's PTX and refuses a device-pass-fixed build without atomic minima. Design:
docs/peers.md.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path

from ...errors import BuildError, GpuspError
from .logged import failure, run_logged

NVCC_ENV = "NVCC"
ARCH_ENV = "GPUSP_CUDA_ARCH"
DEFAULT_ARCH = 90
NO_FIX_DEFINE = "GPUSP_GUNROCK_NO_DEVICE_FIX"
ATOMIC_MIN = re.compile(r"\batom\.global\.min\.[su](?:32|64)\b")
PROBE = ("__global__ void lower(int* x) { atomicMin(x, 1); }\n"
         "int main() { auto f = [] __device__ (int v) { return v; }; (void)f; return 0; }\n")
COMPILE_TIMEOUT_S = 1800


def nvcc_command(nvcc: str | None = None) -> str:
    """The nvcc command: ``nvcc``, else ``$NVCC``, else nvcc on PATH, under ``$CUDA_HOME`` or ``/usr/local/cuda``."""
    if nvcc or os.environ.get(NVCC_ENV):
        return nvcc or os.environ[NVCC_ENV]
    if shutil.which("nvcc"):
        return "nvcc"
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "nvcc").is_file():
            return str(Path(home) / "bin" / "nvcc")
    return "nvcc"


def arch_of(arch=None) -> int:
    """The compute capability x 10 to build for: ``arch``, else ``$GPUSP_CUDA_ARCH``, else 90."""
    value = arch if arch is not None else os.environ.get(ARCH_ENV) or DEFAULT_ARCH
    try:
        number = int(str(value).removeprefix("sm_"))
    except ValueError:
        raise GpuspError(f"CUDA architecture {value!r}: expected a compute capability x 10 such as 90") from None
    if not 30 <= number < 1000:
        raise GpuspError(f"CUDA architecture {value!r}: expected a compute capability x 10 such as 90")
    return number


def probe(nvcc: str, arch: int) -> str | None:
    """None when ``nvcc`` compiles a C++17 kernel with an extended lambda for sm_<arch>, else the reason."""
    argv = shlex.split(nvcc)
    if not argv or shutil.which(argv[0]) is None:
        return (f"no CUDA compiler: {nvcc!r} not found (set NVCC, or put nvcc on PATH; looked in $CUDA_HOME/bin "
                "and /usr/local/cuda/bin too)")
    with tempfile.TemporaryDirectory(prefix="gpusp-nvcc-probe-") as workdir:
        src = Path(workdir) / "probe.cu"
        src.write_text(PROBE)
        cmd = [*argv, f"-arch=sm_{arch}", "-std=c++17", "--extended-lambda", "-c", str(src), "-o",
               str(src.with_suffix(".o"))]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"CUDA compiler {nvcc!r} could not be run: {exc}"
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}").splitlines()[-1]
        return f"CUDA compiler {nvcc!r} cannot compile C++17 for sm_{arch}: {tail}"
    return None


def nvcc_version(nvcc: str) -> str:
    """nvcc's release line (``Cuda compilation tools, release 13.0, V13.0.88``), empty if it says nothing."""
    try:
        out = subprocess.run([*shlex.split(nvcc), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = out.strip().splitlines()
    return next((line for line in lines if "release" in line), lines[-1] if lines else "")


def driver_text(filename: str) -> bytes:
    """The driver source shipped in the package, beside this module (``gpusp/solvers/peers/<filename>``)."""
    source = resources.files(__package__).joinpath(filename)
    if not source.is_file():
        raise GpuspError(f"gpusp/solvers/peers/{filename}: the peer's driver source is missing from the package")
    return source.read_bytes()


@functools.cache
def driver_sha256(filename: str) -> str:
    """sha256 of the driver source: a build records it, and a build of another driver is not reused."""
    return hashlib.sha256(driver_text(filename)).hexdigest()


def flags(arch: int, device_fix: bool = True) -> list[str]:
    """nvcc's flags for the driver (the include folders apart: they depend on where the archive is)."""
    out = [f"-arch=sm_{arch}", "-O3", "-std=c++17", "--extended-lambda", "--expt-relaxed-constexpr",
           f"-DSM_TARGET={arch}", '-DESSENTIALS_BACKEND="NVIDIA"', "-D__HIP_PLATFORM_NVIDIA__", "-DHIP_BACKEND=1"]
    return out if device_fix else [*out, f"-D{NO_FIX_DEFINE}"]


def compile_driver(tree: Path, staging: Path, entry: dict, *, nvcc: str, arch: int, device_fix: bool = True) -> dict:
    """Compile ``entry``'s driver against the extracted archive ``tree`` into ``staging`` (the binary named by its one
    target, the driver source beside it, its PTX, ``build.log``); return what BUILD.json records of it.

    Raises BuildError naming the log when nvcc fails, or when a fixed build's PTX has no atomic minimum.
    """
    (target,) = entry["targets"]
    source = staging / entry["driver"]
    source.write_bytes(driver_text(entry["driver"]))
    keep = staging / ".nvcc-keep"
    keep.mkdir()
    options = flags(arch, device_fix)
    include = tree / "include"
    cmd = [*shlex.split(nvcc), *options, "-I", str(include), "-I", str(include / "gunrock" / "compat"),
           "-keep", "-keep-dir", str(keep), "-o", str(staging / target), str(source)]
    log_path = staging / "build.log"
    with open(log_path, "w") as fh:
        fh.write("$ " + shlex.join(cmd) + "\n")
        fh.flush()
        t0 = time.perf_counter()
        try:
            code = run_logged(cmd, fh, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BuildError(f"nvcc did not finish the {target} driver in {COMPILE_TIMEOUT_S} s "
                             f"(log {log_path})") from None
        compile_s = time.perf_counter() - t0
    if code != 0:
        raise BuildError(f"`{shlex.join(cmd)}` exited {code} (log {log_path}): {failure(log_path, 8)}")
    ptx = staging / f"{target}.ptx"
    kept = keep / f"{source.stem}.ptx"
    if not kept.is_file():
        raise BuildError(f"nvcc left no PTX of {source.name} in {keep} (log {log_path})")
    os.replace(kept, ptx)
    shutil.rmtree(keep)
    atomics = len(ATOMIC_MIN.findall(ptx.read_text(errors="replace")))
    if device_fix and atomics == 0:
        raise BuildError(f"{ptx}: no atom.global.min in the driver's PTX: the device-pass fix did not take, and "
                         "Gunrock's relaxations would only read the distances")
    return {"nvcc": nvcc, "nvcc_version": nvcc_version(nvcc), "nvcc_flags": shlex.join(options), "arch": arch,
            "device_fix": device_fix, "compile_s": round(compile_s, 2), "ptx": ptx.name, "ptx_atomic_min": atomics,
            "driver": entry["driver"], "driver_sha256": driver_sha256(entry["driver"]),
            "binaries": {target: target}, "sources": entry["prefix"]}
