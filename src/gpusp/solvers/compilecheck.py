"""Offline compile gate: compile every GPU kernel to PTX for sm_90 without a GPU.

The CUDA simulator does no typing, so a kernel can pass every simulator test and still fail to
compile for a real GPU (a typing error, a NumPy that breaks Numba's overloads). This module compiles every kernel
recorded with ``@kernel`` (:mod:`gpusp.solvers.common.gate`) in any module of ``gpusp.solvers`` with
``cuda.compile_ptx(..., cc=(9, 0))``; it needs numba-cuda's ``[cu13]`` extra (NVVM) but no driver. Run it as
``python -m gpusp.solvers.compilecheck [--jobs N] [MODULE ...]``: the kernels are spread over N processes, one per
core by default. :func:`resources` also assembles a kernel's PTX, under its launch bounds and register cap, to sm_90
machine code and links it (cuda.core's Linker, no driver): what would not load on the GPU fails there, and the registers,
spills and shared memory are read off. The test suite (tests/solvers/test_compile_gate.py) has one test per kernel
instead, so that pytest-xdist spreads the compiles with the other tests; it assembles every kernel and holds one
with a register budget (``@kernel(..., registers=...)``) to it; each pytest process compiles through one helper
process without the simulator, ``python -m gpusp.solvers.compilecheck --serve``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback


def patch_current_device(cc=(9, 0)):
    """Kernels calling device functions ask for the current device; answer with an sm_90 stand-in."""
    from numba.cuda import dispatcher

    class _Device:
        compute_capability = cc

    dispatcher.get_current_device = lambda: _Device()


def modules() -> list[str]:
    """Every module under gpusp.solvers, in name order (the gate imports each and compiles what it records)."""
    import pkgutil

    from . import __path__ as root

    return sorted(info.name for info in pkgutil.walk_packages(root, prefix=f"{__package__}.") if not info.ispkg)


def module_targets(name: str) -> list[tuple[str, object, str]]:
    """Module ``name``'s (label, kernel, signature) list, made from its ``@kernel`` records
    (:mod:`gpusp.solvers.common.gate`); ImportError where it does not import."""
    from .common import gate

    importlib.import_module(name)
    return gate.targets(name)


def listing(only=()) -> tuple[list[tuple[str, str]], list[str]]:
    """(module, label) of every kernel the gate compiles, in order, and one line per module that cannot list its
    kernels (it does not import, or its records repeat a label)."""
    pairs, problems = [], []
    for name in modules():
        if only and name not in only:
            continue
        try:
            labels = [label for label, _, _ in module_targets(name)]
        except Exception as exc:  # an import or a list that fails is reported, not raised: every module is tried
            problems.append(f"{name}: import failed: {type(exc).__name__}: {exc}")
            continue
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            problems.append(f"{name}: its @kernel records repeat the labels {repeated}")
        pairs += [(name, label) for label in labels]
    return pairs, problems


def compile_one(kernel, sig, bounds: bool = False) -> str:
    """sm_90 PTX of ``kernel`` (a ``cuda.jit`` dispatcher or its Python function) for signature ``sig``; with
    ``bounds``, under the dispatcher's launch bounds (which decide the registers ptxas may give a thread)."""
    from numba import cuda

    ptx, _ = cuda.compile_ptx(getattr(kernel, "py_func", kernel), sig, cc=(9, 0),
                              launch_bounds=launch_options(kernel)[0] if bounds else None)
    return ptx


def launch_options(kernel) -> tuple[tuple | None, int]:
    """(launch bounds, register cap) a ``cuda.jit`` dispatcher was made with (None, 0 where it has none)."""
    options = getattr(kernel, "targetoptions", {})
    return options.get("launch_bounds"), int(options.get("max_registers") or 0)


def link(ptx: str, max_registers: int = 0) -> tuple[bytes, str]:
    """sm_90 machine code (a cubin) of ``ptx`` (at most ``max_registers`` a thread where > 0) and the linker's log,
    by cuda.core's Linker over nvJitLink (numba-cuda's ``[cu13]`` extra), no driver; with the device runtime where
    the kernel synchronises a cooperative grid. Raises where the kernel would not load (too much shared memory, too
    many registers for its launch bounds)."""
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from cuda.pathfinder import find_static_lib

    objects = [ObjectCode.from_ptx(ptx.encode())]
    if "cudaCG" in ptx:
        objects.append(ObjectCode.from_library(find_static_lib("cudadevrt")))
    linker = Linker(*objects, options=LinkerOptions(arch="sm_90", verbose=True,
                                                     max_register_count=max_registers or None))
    cubin = linker.link("cubin")
    return cubin.code, linker.get_info_log()


def resources(ptx: str, max_registers: int = 0) -> dict:
    """What the kernel of ``ptx`` takes on sm_90 once linked (:func:`link`): registers a thread, spill store and load
    bytes, stack bytes, shared memory bytes (its static arrays and what the runtime reserves)."""
    import re

    text = link(ptx, max_registers)[1]
    entry = re.search(r"\.entry\s+(\S+?)\s*\(", ptx)
    linked = re.search(re.escape(f"Function properties for '{entry.group(1)}':") + r"\s*info\s*:\s*used (\d+) "
                       r"registers, used \d+ barriers, (\d+) stack, (\d+) bytes smem", text) if entry else None
    if not linked:
        raise RuntimeError(f"the linker reported nothing of the kernel's resources: {text[-2000:]}")
    # ptxas's line for every function it compiled (the kernel and any device function it calls): spills anywhere
    spills = [tuple(map(int, f)) for f in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)]
    registers, stack, shared = map(int, linked.groups())
    return {"registers": registers, "spill_stores": sum(f[0] for f in spills),
            "spill_loads": sum(f[1] for f in spills), "stack": stack, "shared": shared}


def compile_and_measure(kernel, sig, assemble: bool = False) -> tuple[str, dict | None]:
    """(sm_90 PTX, :func:`resources` of it or None): with ``assemble`` the PTX is made under the kernel's launch
    bounds and linked under its register cap, as the driver would load it."""
    ptx = compile_one(kernel, sig, bounds=assemble)
    return ptx, resources(ptx, launch_options(kernel)[1]) if assemble else None


def compile_share(share: int, shares: int, only=(), assemble=False) -> tuple[int, list[str], list[str]]:
    """Compile every ``shares``-th target from the ``share``-th on (all modules' targets in one sequence, so that a
    module of many kernels is spread over the workers); with ``assemble`` each line also gives :func:`resources`.
    Returns (kernels compiled, failures, lines to print)."""
    patch_current_device()
    count, failures, lines, index = 0, [], [], -1
    for name in modules():
        if only and name not in only:
            continue
        try:
            targets = module_targets(name)
        except ImportError as exc:
            failures += [f"{name}: import failed: {exc}"] if share == 0 else []
            continue
        for label, kernel, sig in targets:
            index += 1
            if index % shares != share:
                continue
            t0 = time.perf_counter()
            try:
                ptx, r = compile_and_measure(kernel, sig, assemble)
                count += 1
                machine = ""
                if r:
                    machine = f", {r['registers']} registers, {r['spill_stores']} bytes spilled, {r['stack']} stack"
                lines.append(f"ok   {name}:{label} ({len(ptx)} chars PTX{machine}, {time.perf_counter() - t0:.2f} s)")
            except Exception as exc:  # report every failure, not just the first
                failures.append(f"{name}:{label}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    return count, failures, lines


def serve(requests=None) -> int:
    """``python -m gpusp.solvers.compilecheck --serve``: the test suite's compile helper. One JSON request a line on
    standard input, one JSON reply a line on standard output:

    * ``{"list": true}``: ``{"targets": [[module, label], ...], "problems": [...]}`` (:func:`listing`);
    * ``{"compile": [module, label]}``: ``{"ok": true, "chars": <PTX length>, "seconds": s}`` or ``{"ok": false,
      "error": "..."}``; with ``"resources": true`` the reply adds :func:`resources`' figures.

    A module is imported and its targets made once, at its first request; the process ends at the end of its input.
    """
    # the replies own standard output: whatever Numba, NVVM or a module prints goes to standard error instead
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    patch_current_device()
    made: dict[str, dict[str, tuple[object, str]]] = {}
    for line in requests if requests is not None else sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("list"):
            pairs, problems = listing()
            reply = {"targets": pairs, "problems": problems}
        else:
            name, label = request["compile"]
            t0 = time.perf_counter()
            try:
                if name not in made:
                    made[name] = {lab: (kernel, sig) for lab, kernel, sig in module_targets(name)}
                kernel, sig = made[name][label]
                ptx, r = compile_and_measure(kernel, sig, bool(request.get("resources")))
                reply = {"ok": True, "chars": len(ptx), "seconds": time.perf_counter() - t0, **(r or {})}
            except Exception as exc:  # the test shows the whole error: Numba's typing errors name the line
                text = "".join(traceback.format_exception_only(type(exc), exc))
                reply = {"ok": False, "error": text[-8000:]}
        replies.write(json.dumps(reply) + "\n")
    return 0


def main(argv=None) -> int:
    """``python -m gpusp.solvers.compilecheck [--jobs N] [--resources] [MODULE ...]``: compile every kernel (of the
    modules named), in N processes (default: one per core; NVVM compiles on one core); ``--resources``: each kernel's
    sm_90 registers, spills and stack too, under its launch bounds and register cap. ``--serve``: :func:`serve`."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        print("compilecheck: unset NUMBA_ENABLE_CUDASIM (the simulator cannot compile PTX)", file=sys.stderr)
        return 2
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--serve"]:
        return serve()
    jobs = os.cpu_count() or 1
    if "--jobs" in args:
        at = args.index("--jobs")
        jobs = int(args[at + 1])
        del args[at:at + 2]
    assemble = "--resources" in args
    only = tuple(a for a in args if a != "--resources")
    if jobs <= 1:
        results = [compile_share(0, 1, only, assemble)]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(compile_share, range(jobs), [jobs] * jobs, [only] * jobs, [assemble] * jobs))
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
