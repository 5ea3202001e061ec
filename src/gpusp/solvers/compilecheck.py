"""Offline compile gate: compile every GPU kernel to PTX for sm_90 without a GPU.

The CUDA simulator does no typing, so a kernel can pass every simulator test and still fail to
compile for a real GPU (a typing error, a NumPy that breaks Numba's overloads). This module compiles
each kernel every GPU solver module lists in ``compile_targets()`` with ``cuda.compile_ptx(...,
cc=(9, 0))``; it needs numba-cuda's ``[cu13]`` extra (NVVM) but no driver. Run it as
``python -m gpusp.solvers.compilecheck [--jobs N] [MODULE ...]`` (the test suite does, in a process without the
simulator); the kernels are spread over N processes, one per core by default.
"""

from __future__ import annotations

import importlib
import os
import sys
import time


def patch_current_device(cc=(9, 0)):
    """Kernels calling device functions ask for the current device; answer with an sm_90 stand-in."""
    from numba.cuda import dispatcher

    class _Device:
        compute_capability = cc

    dispatcher.get_current_device = lambda: _Device()


def modules() -> list[str]:
    """Modules of every registered GPU solver, plus the shared device helpers and paper 003's flow kernels."""
    from .registry import SPECS

    # the shared floors' kernels, paper 003's product and reduction, then every GPU solver's module
    names = ["gpusp.solvers.launch", "gpusp.solvers.csr", "gpusp.solvers.dense", "gpusp.solvers.matprod"]
    for spec in SPECS:
        if spec.device == "gpu":
            mod = spec.impl.split(":")[0]
            if mod not in names:
                names.append(mod)
    return names


def compile_share(share: int, shares: int, only=()) -> tuple[int, list[str], list[str]]:
    """Compile every ``shares``-th target from the ``share``-th on (all modules' targets in one sequence, so that a
    module of many kernels is spread over the workers); returns (kernels compiled, failures, lines to print)."""
    from numba import cuda

    patch_current_device()
    count, failures, lines, index = 0, [], [], -1
    for name in modules():
        if only and name not in only:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            failures += [f"{name}: import failed: {exc}"] if share == 0 else []
            continue
        targets = getattr(module, "compile_targets", None)
        if targets is None:
            failures += [f"{name}: has no compile_targets()"] if share == 0 else []
            continue
        for label, kernel, sig in targets():
            index += 1
            if index % shares != share:
                continue
            t0 = time.perf_counter()
            try:
                ptx, _ = cuda.compile_ptx(getattr(kernel, "py_func", kernel), sig, cc=(9, 0))
                count += 1
                lines.append(f"ok   {name}:{label} ({len(ptx)} chars PTX, {time.perf_counter() - t0:.2f} s)")
            except Exception as exc:  # report every failure, not just the first
                failures.append(f"{name}:{label}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    return count, failures, lines


def main(argv=None) -> int:
    """``python -m gpusp.solvers.compilecheck [--jobs N] [MODULE ...]``: compile every kernel (of the modules named),
    in N processes (default: one per core; NVVM compiles on one core)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        print("compilecheck: unset NUMBA_ENABLE_CUDASIM (the simulator cannot compile PTX)", file=sys.stderr)
        return 2
    args = list(sys.argv[1:] if argv is None else argv)
    jobs = os.cpu_count() or 1
    if "--jobs" in args:
        at = args.index("--jobs")
        jobs = int(args[at + 1])
        del args[at:at + 2]
    only = tuple(args)
    if jobs <= 1:
        results = [compile_share(0, 1, only)]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(compile_share, range(jobs), [jobs] * jobs, [only] * jobs))
    count = sum(r[0] for r in results)
    failures = [f for r in results for f in r[1]]
    for line in (line for r in results for line in r[2]):
        print(line)
    for f in failures:
        print(f"FAIL {f}")
    print(f"compiled {count} kernels for sm_90, {len(failures)} failures")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
