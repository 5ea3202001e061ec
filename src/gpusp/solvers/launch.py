"""How the solvers put work on the device: grid sizes, cooperative grids, CUDA graphs, small array kernels, and
what the CUDA target in use can do (:data:`TARGET`).

Numba's CUDA simulator runs the same kernels as Python threads but lacks part of the hardware: warp intrinsics
(activemask, shuffles, clz, popc, nanosleep), compile options (register caps, launch bounds, aligned shared arrays),
CUDA graphs and pre-configured launches, and its grid barrier works for one block only (:func:`cooperative_grid`
then gives one block); every simulated thread is also expensive. The solvers ask :data:`TARGET` instead of testing the simulator themselves, so that each of these
differences is decided in one place. Compile-time properties follow ``NUMBA_ENABLE_CUDASIM`` (read when Numba is
imported; the offline compile gate has no GPU and no simulator and compiles the real kernels), run-time ones ask
:func:`gpusp.device.mode` whether a GPU is in use.
"""

from __future__ import annotations

from dataclasses import dataclass

from numba import config, cuda

from .. import device
from ..errors import SolverError


@dataclass(frozen=True)
class Target:
    """What the CUDA target in use can do."""

    simulator: bool  # kernels run in Numba's CUDA simulator

    @property
    def warp_intrinsics(self) -> bool:
        """activemask, shfl_sync, clz, popc, laneid and nanosleep exist (not in the simulator)."""
        return not self.simulator

    def register_cap(self, registers: int) -> dict:
        """``cuda.jit`` options capping a kernel at ``registers`` per thread (0: no cap; the simulator takes none)."""
        return {"max_registers": int(registers)} if registers and not self.simulator else {}

    def launch_bounds(self, threads: int, blocks_per_sm: int) -> dict:
        """``cuda.jit`` options asking for ``blocks_per_sm`` blocks of ``threads`` per multiprocessor."""
        return {} if self.simulator else {"launch_bounds": (int(threads), int(blocks_per_sm))}

    def alignment(self, nbytes: int) -> int | None:
        """The ``alignment`` of a shared array read in ``nbytes``-wide vectors (the simulator takes none)."""
        return None if self.simulator or nbytes <= 4 else int(nbytes)

    @property
    def gpu(self) -> bool:
        """A real GPU runs the kernels: CUDA graphs, events without timing and configured launches exist."""
        return device.mode() == "gpu"

    def threads(self, gpu: int, simulated: int) -> int:
        """Threads for a launch whose size is free: ``gpu`` on a GPU, ``simulated`` where each thread is a Python
        thread (the simulator, and planning without a device)."""
        return gpu if self.gpu else simulated


TARGET = Target(simulator=bool(config.ENABLE_CUDASIM))


def launch_grid(n_threads: int, block: int) -> int:
    """Blocks needed for one thread per item (at least one block)."""
    return max(1, (int(n_threads) + block - 1) // block)


def grid2(n: int, side: int) -> tuple[int, int]:
    """A square 2-D grid of ``side x side`` blocks covering an n x n matrix."""
    b = launch_grid(n, side)
    return (b, b)


def blocks_per_sm(k: int) -> int:
    """``k`` blocks for each multiprocessor of the GPU in use (a small stand-in count in the simulator)."""
    return int(k) * device.multiprocessors()


def cooperative_grid(kernel, args, block: int, want: int) -> int:
    """Blocks for a cooperative launch of ``kernel(*args)``: ``want`` capped at the co-resident maximum."""
    if TARGET.simulator:
        limit = kernel.overloads[None].max_cooperative_grid_blocks(block)
    else:
        argtypes = tuple(kernel.typeof_pyval(a) for a in args)
        limit = kernel.compile(argtypes).max_cooperative_grid_blocks(block)
    if int(limit) < 1:
        raise SolverError(f"{kernel.__name__}: not even one block of {block} threads fits on a multiprocessor "
                          "(too many registers per thread); use a smaller block")
    return max(1, min(int(want), int(limit)))


def capture_graph(issue):
    """Record the launches ``issue(stream)`` makes into a CUDA graph; returns (graph, replay stream).

    cuda.core's GraphBuilder is passed to Numba's launches as their stream; the graph is replayed with
    ``graph.launch(stream)`` on the legacy default stream, which Numba's other launches and copies use, so a replay
    is ordered after them. Kernels must be compiled before (a launch outside capture)."""
    from cuda.core import Device, Stream

    dev = Device(cuda.get_current_device().id)
    dev.set_current()
    gb = dev.create_graph_builder()
    gb.begin_building()
    try:
        issue(gb)
        gb.end_building()
        return gb.complete(), Stream.from_handle(0)
    finally:
        gb.close()


class Launch:
    """A kernel with its launch configuration, configured once on a GPU (configuring costs more host time than the
    launch itself) and per call in the simulator, whose ``kernel[...]`` changes the kernel object."""

    __slots__ = ("kernel", "config", "bound")

    def __init__(self, kernel, *config):
        self.kernel, self.config = kernel, config
        self.bound = kernel[config] if TARGET.gpu else None

    def __call__(self, *args):
        if self.bound is not None:
            self.bound(*args)
        else:
            self.kernel[self.config](*args)


class NativeLaunch:
    """One kernel launched at the driver's cost: Numba's own compiled function and a parameter block built once.

    ``kernel[grid, block](*args)`` spends 50-150 us of host time per launch in Numba's dispatcher (typing the
    arguments, flattening every array into its parameters: meminfo, parent, size, itemsize, data, shape, strides)
    before ``cuda.core.launch``. A per-round variant that launches thousands of times then times the dispatcher,
    not its kernels. Here the first call goes through Numba (compiling, and catching the exact overload and stream
    it uses); later calls pass a block of pointers to the kept parameters to ``cuLaunchKernel`` (or
    ``cuLaunchCooperativeKernel`` for a grid-synchronising kernel), as C does. :meth:`set` rewrites one argument's
    parameters in place (a source, a round stamp). Arrays must be device arrays: a host array would need Numba's
    copies around every launch. ``native=False`` (and the simulator) makes every call Numba's own launch: the
    path the per-round variants are compared with.
    """

    __slots__ = ("kernel", "config", "args", "native", "_compiled", "_stream", "_types", "_starts", "_holders",
                 "_pointers", "_launch")

    def __init__(self, kernel, griddim, blockdim, *args, native=True, stream=0, sharedmem=0):
        self.kernel, self.config, self.args = kernel, (griddim, blockdim, stream, sharedmem), list(args)
        self.native = native and TARGET.gpu
        self._launch = None

    def set(self, index: int, value) -> None:
        """Replace argument ``index`` (negative: from the end) for the next calls."""
        index %= len(self.args)
        self.args[index] = value
        if self._launch is not None:
            start = self._starts[index]
            for k, param in enumerate(self._pack(self._compiled, self._types[index], value, self._stream)):
                self._holders[start + k].value = param.value if hasattr(param, "value") else param

    def __call__(self) -> None:
        if self._launch is not None:
            self._launch()
        elif self.native:
            self._first_launch()
        else:
            self.kernel[self.config](*self.args)

    def _first_launch(self) -> None:
        """Launch through Numba once, keeping the overload and stream it used, then build the parameter block."""
        import ctypes

        from cuda.bindings import driver

        seen = []
        configured = self.kernel[self.config]
        configured.pre_launch_callbacks.append(lambda compiled, launch_config: seen.append((compiled,
                                                                                            launch_config)))
        configured(*self.args)
        compiled, launch_config = seen[-1]
        self._compiled, self._stream, self._types = compiled, launch_config.stream, tuple(compiled.argument_types)
        params, starts = [], [0]
        for ty, value in zip(self._types, self.args):
            params += self._pack(compiled, ty, value, self._stream)
            starts.append(len(params))
        # each parameter in a ctypes value of its own (Numba passes sizes, shapes and strides as intptr_t), and a
        # block of pointers to them: what cuLaunchKernel reads; set() writes into the same values
        self._holders = [type(p)(p.value) if isinstance(p, ctypes._SimpleCData) else ctypes.c_ssize_t(int(p))
                         for p in params]
        self._pointers = (ctypes.c_void_p * max(1, len(params)))(*[ctypes.addressof(h) for h in self._holders])
        self._starts = starts
        err, function = driver.cuKernelGetFunction(compiled._codelibrary.get_cufunc().handle)
        _check(driver, err, "cuKernelGetFunction")
        grid, block = _dims(self.config[0]), _dims(self.config[1])
        call = (function, *grid, *block, int(self.config[3]), driver.CUstream(_stream_handle(self._stream)),
                ctypes.addressof(self._pointers))
        if compiled.cooperative:
            launch, call = driver.cuLaunchCooperativeKernel, call
        else:
            launch, call = driver.cuLaunchKernel, call + (0,)

        def issue():
            _check(driver, launch(*call)[0], "cuLaunchKernel")

        self._launch = issue

    @staticmethod
    def _pack(compiled, ty, value, stream) -> list:
        """The kernel parameters of one argument, as Numba's own launch builds them."""
        out, copies = [], []
        compiled._prepare_args(ty, value, stream, copies, out)
        if copies:
            raise SolverError("a native launch takes device arrays only (a host array needs a copy around every "
                              "launch)")
        return out


def _dims(dims) -> tuple[int, int, int]:
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


def _stream_handle(stream) -> int:
    """The CUstream address of a Numba stream (0: the legacy default stream)."""
    if not stream:
        return 0
    protocol = getattr(stream, "__cuda_stream__", None)
    return int(protocol()[1]) if protocol else int(stream.handle)


def _check(driver, err, what: str) -> None:
    if err != driver.CUresult.CUDA_SUCCESS:
        raise SolverError(f"{what} failed: {err}")


class NativeRead:
    """A small device array read into pinned host memory at the driver's cost (``cuMemcpyDtoHAsync`` on the legacy
    default stream, which orders it after the launches before it, then ``cuStreamSynchronize``): the per-round
    flag read of a host-driven variant. Numba's ``copy_to_host`` spends tens of microseconds of host time more.
    ``native=False`` (and the simulator) reads with ``copy_to_host``. Calling returns the host array."""

    __slots__ = ("device", "host", "_driver", "_args")

    def __init__(self, device, host, *, native=True):
        self.device, self.host, self._driver = device, host, None
        if native and TARGET.gpu:
            from cuda.bindings import driver

            self._driver = driver
            self._args = (host.ctypes.data, driver.CUdeviceptr(device.device_ctypes_pointer.value), host.nbytes,
                          driver.CUstream(0))

    def __call__(self):
        if self._driver is None:
            return self.device.copy_to_host(self.host)
        driver = self._driver
        (copied,) = driver.cuMemcpyDtoHAsync(*self._args)
        (synced,) = driver.cuStreamSynchronize(self._args[3])
        if copied != driver.CUresult.CUDA_SUCCESS or synced != driver.CUresult.CUDA_SUCCESS:
            raise SolverError(f"reading {self.host.nbytes} bytes back failed: {copied}, {synced}")
        return self.host


def event():
    """A CUDA event for ordering streams (without timing on a GPU: cheaper to record)."""
    return cuda.event(timing=False) if TARGET.gpu else cuda.event()


@cuda.jit(cache=True)
def fill(arr, value):
    """Set every element of a 1-D array to ``value``."""
    i = cuda.grid(1)
    if i < arr.size:
        arr[i] = value


@cuda.jit(cache=True)
def put(arr, index, value):
    """Set one element (e.g. the source's distance) without a host round trip."""
    if cuda.grid(1) == 0:
        arr[index] = value


def fill_array(arr, value) -> None:
    """``arr[:] = value`` on the device: a kernel on a GPU, a host copy in the simulator (a thread per element
    there would take minutes for a large array)."""
    if TARGET.gpu:
        fill[launch_grid(arr.size, 256), 256](arr, value)
    else:
        import numpy as np

        arr.copy_to_device(np.full(arr.shape, value, dtype=arr.dtype))


def compile_targets():
    """(label, kernel, signature) for the offline sm_90 compile gate."""
    out = []
    for w in ("int32", "int64"):
        out += [(f"fill[{w}]", fill, f"void({w}[::1], {w})"), (f"put[{w}]", put, f"void({w}[::1], int64, {w})")]
    return out
