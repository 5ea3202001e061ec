"""How the solvers put work on the device: what the CUDA target in use can do (:data:`TARGET`), grid sizes,
cooperative grids, CUDA graph capture, launches, small reads and cross-stream events at the driver's cost
(:class:`Launch`, :class:`NativeRead`, :class:`StreamEvent`; graphs built node by node are ``graph.py``'s), cluster
launches, and the ``fill`` and ``put`` kernels. Design: docs/solvers/common.md.
"""

from __future__ import annotations

import ctypes
import functools
import operator
import sys
import threading
import weakref
from dataclasses import dataclass

import numpy as np
from numba import config, cuda
from numba.core import types as numba_types

from ... import device
from ...errors import SolverError
from .gate import DISTANCES, kernel


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


def _one_shared_array_per_line(self, shape, dtype, alignment=None):
    """The simulator's ``cuda.shared.array`` (numba-cuda 0.30.4's FakeCUDAShared.array: one array per block and
    calling line) with its look-up and first allocation under a lock. Unlocked, two threads of a block that reach
    the line first can each make an array and keep their own, so writes to it are lost to the block (the seldom
    wrong entries a simulated kernel showed under load)."""
    if alignment is not None:
        raise RuntimeError("Array alignment is not supported in cudasim")
    if isinstance(dtype, kernelapi.types.Type):
        dtype = kernelapi.numpy_support.as_dtype(dtype)
    if shape == 0:  # dynamic shared memory: one buffer for every such request
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=self._dynshared_size // dtype.itemsize)
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    with _SHARED_LOCK:
        found = self._allocations.get(key)
        if found is None:
            found = self._allocations[key] = np.empty(shape, dtype)
    return found


def _under_one_lock(operation):
    """A simulator atomic (numba-cuda 0.30.4's FakeCUDAAtomic: one lock per kind of operation) under the lock every
    atomic shares. With a lock per kind, two kinds on one word interleave: a poll by ``atomic.add(a, i, 0)`` reads
    the word, an ``atomic.exch`` writes it, and the add writes the old value back, so the exchange is lost (a flag
    set once and polled for, never seen: the polling kernels' rare hangs under load). On a GPU every atomic on a
    word is indivisible, whatever its kind."""

    @functools.wraps(operation)
    def locked(self, *args, **kwargs):
        with _ATOMIC_LOCK:
            return operation(self, *args, **kwargs)

    return locked


_SHARED_LOCK = threading.Lock()
_ATOMIC_LOCK = threading.RLock()
if TARGET.simulator:
    from numba.cuda.simulator import kernelapi

    kernelapi.FakeCUDAShared.array = _one_shared_array_per_line
    for _name, _operation in list(vars(kernelapi.FakeCUDAAtomic).items()):
        if callable(_operation) and not _name.startswith("_"):
            setattr(kernelapi.FakeCUDAAtomic, _name, _under_one_lock(_operation))


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
    """A kernel with its launch configuration, called with its arguments at the driver's cost.

    The first call goes through Numba's dispatcher (compiling, and catching the exact overload it compiled) and
    builds the parameter block of its arguments; later calls hand a block of pointers to kept parameters to
    ``cuLaunchKernel`` (or ``cuLaunchCooperativeKernel`` for a grid-synchronising kernel), as C does. A block is
    kept per set of array arguments (a ping-pong pair costs two), so arrays must be device arrays and a new array
    object costs one rebuild; scalars are written into the block in place and keep the type of their first call; a
    tuple of arrays and scalars (a kernel's record) is taken apart into its members, as Numba passes them.
    ``native=False``, the simulator (whose ``kernel[...]`` changes the kernel object, so it is configured per call)
    and launches into a CUDA graph builder go through Numba every call: the path the per-round variants are compared
    with. Why: docs/solvers/common.md.
    """

    __slots__ = ("kernel", "config", "native", "bound", "_function", "_launch", "_types", "_pick", "_scalars",
                 "_blocks", "_last", "_members")

    def __init__(self, kernel, griddim, blockdim, stream=0, sharedmem=0, *, native=True):
        self.kernel, self.config = kernel, (griddim, blockdim, stream, sharedmem)
        self.bound = kernel[self.config] if TARGET.gpu else None
        self.native = bool(native) and self.bound is not None and _plain_stream(stream)
        self._function = None

    def __call__(self, *args):
        if self._function is not None:
            self._native(args if self._members is None else self._flat(args))  # no call where nothing to flatten
        elif self.bound is None:
            self.kernel[self.config](*args)
        elif self.native:
            self._first(args)
        else:
            self.bound(*args)

    def _first(self, args) -> None:
        """Launch through Numba once, keeping the overload it used, then prepare the driver's launch."""
        seen = []
        callbacks = self.bound.pre_launch_callbacks
        callbacks.append(lambda compiled, launch_config: seen.append(compiled))
        try:
            self.bound(*args)
        finally:
            callbacks.pop()
        compiled = seen[-1]
        arguments = compiled.argument_types
        members = _members(arguments)
        self._members = None if all(j is None for _, j in members) else members
        types = tuple(self._flat(arguments))
        if not all(_is_array(t) or _scalar_kind(t) for t in types):
            self.native = False  # an argument kind without a fixed parameter layout: Numba's launch every call
            return
        function = _cu_function(compiled)
        lib = _libcuda()
        u = ctypes.c_uint
        head = (ctypes.c_void_p(int(function)), *map(u, _dims(self.config[0])), *map(u, _dims(self.config[1])),
                u(int(self.config[3])), ctypes.c_void_p(_stream_handle(self.config[2])))
        self._launch = (lib.cuLaunchCooperativeKernel, head, ()) if compiled.cooperative else (
            lib.cuLaunchKernel, head, (None,))
        self._types, self._blocks = types, {}
        arrays = [i for i, t in enumerate(types) if _is_array(t)]
        self._pick = (lambda a: ()) if not arrays else (
            (lambda a, i=arrays[0]: (a[i],)) if len(arrays) == 1 else operator.itemgetter(*arrays))
        self._scalars = [(i, _scalar_kind(t)) for i, t in enumerate(types) if not _is_array(t)]
        self._last = ((), None, ())
        self._function = compiled
        try:  # this call's parameter block now, so that a launch made once a run does not build it in a timed run
            self._pointers(self._flat(args))
        except SolverError:  # a host array, which Numba's launch took: the next call refuses it
            pass

    def _flat(self, args):
        """The arguments as the kernel's parameters: each record (tuple) taken apart into its members."""
        if self._members is None:
            return args
        return tuple(args[i] if j is None else args[i][j] for i, j in self._members)

    def _native(self, args) -> None:
        launch, head, tail = self._launch
        err = launch(*head, self._pointers(args), *tail)
        if err:
            raise SolverError(f"launching {self.kernel.__name__} failed: CUresult {err}")

    def node_params(self, *args):
        """(CUfunction, grid x, y, z, block x, y, z, shared bytes, parameter block) of a launch with these arguments,
        for a kernel node of a graph built through the driver (which copies the parameters into the node). The
        Launch must have launched natively once (that compiles the kernel and fixes its parameter layout)."""
        if self._function is None or self._function.cooperative:
            raise SolverError(f"{self.kernel.__name__}: a graph's kernel node needs a Launch that has launched "
                              "natively once, and not a cooperative one")
        return (*self._launch[1][:8], self._pointers(self._flat(args)))

    def _pointers(self, args):
        """The parameter block of this launch's arguments: kept per set of arrays, its scalars written in place."""
        arrays = self._pick(args)
        key = tuple(map(id, arrays))
        last_key, entry, _ = self._last
        if key != last_key:  # the last arrays are held, so their ids are still theirs
            entry = self._blocks.get(key)
            if entry is None or any(ref() is not a for ref, a in zip(entry[0], arrays)):
                entry = self._block(args, arrays, key)
            self._last = (key, entry, arrays)
        holders = entry[1]
        for (i, convert), at in zip(self._scalars, entry[2]):
            holders[at].value = convert(args[i])
        return entry[3]

    def _block(self, args, arrays, key):
        """The parameter block of one set of array arguments (:func:`_parameters`), kept for the next launches."""
        holders, scalar_at, pointers = _parameters(self._function, self._types, args, self.config[2],
                                                   self.kernel.__name__)
        if len(self._blocks) >= _BLOCKS_KEPT:
            self._blocks.clear()
        entry = (tuple(weakref.ref(a) for a in arrays), holders, scalar_at, pointers)
        self._blocks[key] = entry
        return entry


def _parameters(compiled, types, args, stream, name):
    """The parameters of a launch of ``compiled`` as Numba's own launch builds them, in ctypes values of their own
    (sizes, shapes and strides as intptr_t), with a block of pointers to them: what the driver reads. Returns
    (values, where each scalar argument's value is, the pointer block)."""
    params, scalar_at = [], []
    for ty, value in zip(types, args):
        if not _is_array(ty):
            scalar_at.append(len(params))
        elif not cuda.is_cuda_array(value):
            raise SolverError(f"{name}: a native launch takes device arrays only (a host array needs a copy around "
                              "every launch)")
        compiled._prepare_args(ty, value, stream, [], params)
    holders = [type(p)(p.value) if isinstance(p, ctypes._SimpleCData) else ctypes.c_ssize_t(int(p)) for p in params]
    pointers = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.addressof(h) for h in holders])
    return holders, scalar_at, pointers


_BLOCKS_KEPT = 8  # parameter blocks a Launch keeps (sets of array arguments seen); more start over


def _members(types) -> list[tuple[int, int | None]]:
    """Where each parameter's value is among a launch's arguments: (i, None) an argument, (i, j) member j of a tuple
    argument i, in the order Numba flattens them."""
    return [(i, j) for i, ty in enumerate(types)
            for j in (range(len(ty)) if isinstance(ty, numba_types.BaseTuple) else (None,))]


def _is_array(ty) -> bool:
    return isinstance(ty, numba_types.Array)


def _scalar_kind(ty):
    """How a scalar argument of Numba type ``ty`` is written into its kept ctypes value (None: not a plain scalar)."""
    if isinstance(ty, numba_types.Boolean) or isinstance(ty, numba_types.Integer):
        return int
    if ty in (numba_types.float32, numba_types.float64):
        return float
    return None


def _plain_stream(stream) -> bool:
    """The legacy default stream or a Numba stream (not, e.g., a CUDA graph builder capturing launches)."""
    from numba.cuda.cudadrv.driver import Stream

    return not stream or isinstance(stream, Stream)


def _dims(dims) -> tuple[int, int, int]:
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


def _stream_handle(stream) -> int:
    """The CUstream address of a Numba stream (0: the legacy default stream)."""
    if not stream:
        return 0
    protocol = getattr(stream, "__cuda_stream__", None)
    return int(protocol()[1]) if protocol else int(stream.handle)


@functools.cache
def _libcuda():
    """The driver library with argument types declared for the calls made per round: a ctypes call with prepared
    arguments costs less than cuda.bindings' converting wrappers."""
    lib = ctypes.CDLL("libcuda.so.1")
    u, p = ctypes.c_uint, ctypes.c_void_p
    for name, extra in (("cuLaunchKernel", [p]), ("cuLaunchCooperativeKernel", [])):
        getattr(lib, name).argtypes = [p, u, u, u, u, u, u, u, p, p] + extra
    lib.cuMemcpyDtoHAsync_v2.argtypes = [p, ctypes.c_uint64, ctypes.c_size_t, p]
    lib.cuStreamSynchronize.argtypes = [p]
    lib.cuLaunchKernelEx.argtypes = [p, p, p, p]
    lib.cuEventRecord.argtypes = [p, p]
    lib.cuStreamWaitEvent.argtypes = [p, p, u]
    for name in ("cuLaunchKernel", "cuLaunchCooperativeKernel", "cuLaunchKernelEx", "cuMemcpyDtoHAsync_v2",
                 "cuStreamSynchronize", "cuCtxSynchronize", "cuEventRecord", "cuStreamWaitEvent"):
        getattr(lib, name).restype = ctypes.c_int
    return lib


def _cu_function(compiled):
    """The driver's CUfunction of a kernel Numba compiled (loaded as a library kernel) in the current context."""
    from cuda.bindings import driver

    err, function = driver.cuKernelGetFunction(compiled._codelibrary.get_cufunc().handle)
    _check(driver, err, "cuKernelGetFunction")
    return function


def _check(driver, err, what: str) -> None:
    if err != driver.CUresult.CUDA_SUCCESS:
        raise SolverError(f"{what} failed: {err}")


class NativeRead:
    """A small device array read into pinned host memory at the driver's cost (``cuMemcpyDtoHAsync`` on ``stream``,
    then ``cuStreamSynchronize`` of that stream only): the per-round flag read of a host-driven variant. On the
    legacy default stream (0) the copy is ordered after every launch before it. ``issue()`` queues the copy and
    ``wait()`` returns the host array once it is there, so that several streams' reads can be in flight; calling does
    both. ``native=False`` (and the simulator) reads with Numba's ``copy_to_host`` instead. ``host`` defaults to a
    pinned array shaped like ``device``."""

    __slots__ = ("device", "host", "stream", "_lib", "_args")

    def __init__(self, device, host=None, *, native=True, stream=0):
        if host is None:
            host = cuda.pinned_array(device.shape, dtype=device.dtype)
        self.device, self.host, self.stream, self._lib = device, host, stream, None
        if native and TARGET.gpu:
            self._lib = _libcuda()
            self._args = (ctypes.c_void_p(host.ctypes.data), ctypes.c_uint64(device.device_ctypes_pointer.value),
                          ctypes.c_size_t(host.nbytes), ctypes.c_void_p(_stream_handle(stream)))

    def issue(self) -> None:
        if self._lib is not None:
            err = self._lib.cuMemcpyDtoHAsync_v2(*self._args)
            if err:
                raise SolverError(f"queueing a {self.host.nbytes}-byte read failed: CUresult {err}")
        elif self.stream:
            self.device.copy_to_host(self.host, stream=self.stream)

    def wait(self):
        if self._lib is not None:
            err = self._lib.cuStreamSynchronize(self._args[3])
            if err:
                raise SolverError(f"reading {self.host.nbytes} bytes back failed: CUresult {err}")
        elif self.stream:
            self.stream.synchronize()
        else:
            self.device.copy_to_host(self.host)
        return self.host

    def __call__(self):
        self.issue()
        return self.wait()


class ClusterLaunch:
    """A kernel launched as ``clusters`` thread-block clusters of ``cluster`` blocks (Hopper's cluster launch, which
    Numba's dispatcher cannot make) with ``sharedmem`` bytes of dynamic shared memory per block, through
    ``cuLaunchKernelEx``. ``prepare(*args)`` compiles the kernel for these arguments, raises the kernel's shared-memory
    limit to ``sharedmem`` (and allows clusters over the portable 8 blocks), checks with the driver that such a
    cluster fits the GPU, and builds the parameter block; each call launches with those arguments (device arrays: a
    kernel that must see new values reads them from device or mapped memory). GPU only."""

    def __init__(self, kernel, *, clusters: int, cluster: int, block: int, sharedmem: int, stream=0):
        self.kernel, self.stream = kernel, stream
        self.shape = (int(clusters), int(cluster), int(block), int(sharedmem))
        self._config = self._params = None

    def prepare(self, *args) -> None:
        from cuda.bindings import driver

        clusters, cluster, block, sharedmem = self.shape
        types = tuple(self.kernel.typeof_pyval(a) for a in args)
        compiled = self.kernel.compile(types)
        function = _cu_function(compiled)
        attribute = driver.CUfunction_attribute
        (err,) = driver.cuFuncSetAttribute(function, attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           sharedmem)
        _check(driver, err, f"allowing {sharedmem} bytes of dynamic shared memory")
        if cluster > 8:
            (err,) = driver.cuFuncSetAttribute(
                function, attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
            _check(driver, err, f"allowing clusters of {cluster} blocks")
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = clusters * cluster, 1, 1
        config.blockDimX, config.blockDimY, config.blockDimZ = block, 1, 1
        config.sharedMemBytes = sharedmem
        config.hStream = driver.CUstream(_stream_handle(self.stream))
        attrs = self._attributes(driver)
        config.attrs, config.numAttrs = attrs, len(attrs)
        fits = self._fits(driver, function, config)
        if fits < clusters:
            raise SolverError(f"{self.kernel.__name__}: {clusters} {self.unit} of {cluster} blocks x {block} threads "
                              f"with {sharedmem} bytes of shared memory each do not fit this GPU at once (it holds "
                              f"{fits}); use a smaller {'grid' if self.unit == 'block(s)' else 'cluster'}, block or "
                              "graph")
        self._params = _parameters(compiled, types, args, self.stream, self.kernel.__name__)
        self._config = (config, attrs, ctypes.c_void_p(int(function)))

    unit = "cluster(s)"  # what ``clusters`` counts, in messages

    def _attributes(self, driver) -> list:
        """The launch's attributes: the cluster's shape."""
        dims = driver.CUlaunchAttribute()
        dims.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        dims.value.clusterDim.x, dims.value.clusterDim.y, dims.value.clusterDim.z = self.shape[1], 1, 1
        return [dims]

    def _fits(self, driver, function, config) -> int:
        """How many clusters of this shape the GPU holds at once."""
        err, fits = driver.cuOccupancyMaxActiveClusters(function, config)
        _check(driver, err, "cuOccupancyMaxActiveClusters")
        return fits

    def __call__(self) -> None:
        lib = _libcuda()
        config, _, function = self._config
        err = lib.cuLaunchKernelEx(ctypes.c_void_p(config.getPtr()), function, self._params[2], None)
        if err:
            raise SolverError(f"launching {self.kernel.__name__} as clusters failed: CUresult {err}")


class CoresidentClusterLaunch(ClusterLaunch):
    """Clusters that must all be resident at once (a kernel with a grid barrier of its own across them): ``prepare``
    checks with the driver that the GPU holds every cluster (``cuOccupancyMaxActiveClusters``, as
    :class:`ClusterLaunch`), and the launch asks for a cooperative launch too, which makes the driver refuse rather
    than queue clusters that do not fit. Where the driver refuses the cooperative attribute beside a cluster shape,
    the launch is made without it, once and from then on: the checked count keeps the grid persistent. Why:
    docs/solvers/deltastep.md. GPU only."""

    cooperative = False  # whether the prepared launch carries the cooperative attribute

    def prepare(self, *args) -> None:
        from cuda.bindings import driver

        super().prepare(*args)
        config, attrs, function = self._config
        cooperative = driver.CUlaunchAttribute()
        cooperative.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        cooperative.value.cooperative = 1
        self._plain = list(attrs)
        attrs = [*attrs, cooperative]
        config.attrs, config.numAttrs = attrs, len(attrs)
        self._config = (config, attrs, function)
        self.cooperative = True

    def __call__(self) -> None:
        if not self.cooperative:
            super().__call__()
            return
        config, _, function = self._config
        err = _libcuda().cuLaunchKernelEx(ctypes.c_void_p(config.getPtr()), function, self._params[2], None)
        if err == _COOPERATIVE_TOO_LARGE:
            raise SolverError(f"launching {self.kernel.__name__}: the driver says {self.shape[0]} clusters of "
                              f"{self.shape[1]} blocks do not fit this GPU at once; use fewer clusters")
        if err:  # the cooperative attribute is not taken with clusters: the checked persistent launch
            config.attrs, config.numAttrs = self._plain, len(self._plain)
            self._config = (config, self._plain, function)
            self.cooperative = False
            super().__call__()


_COOPERATIVE_TOO_LARGE = 720  # CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE


def synchronize(native: bool = True) -> None:
    """Wait for all the device's work (cudaDeviceSynchronize): the driver's ``cuCtxSynchronize`` at its own cost, or
    Numba's ``cuda.synchronize`` (``native=False`` and the simulator)."""
    if native and TARGET.gpu:
        err = _libcuda().cuCtxSynchronize()
        if err:
            raise SolverError(f"synchronising the device failed: CUresult {err}")
    else:
        cuda.synchronize()


class CooperativeLaunch(ClusterLaunch):
    """A grid-synchronising kernel launched cooperatively as ``blocks`` blocks with ``sharedmem`` bytes of dynamic
    shared memory each (past the 48 KB that Numba's launch allows), through ``cuLaunchKernelEx``: ``prepare(*args)``
    and calls as :class:`ClusterLaunch`, whose checks it shares (every block must be resident at once). GPU only."""

    unit = "block(s)"

    def __init__(self, kernel, *, blocks: int, block: int, sharedmem: int, stream=0):
        super().__init__(kernel, clusters=blocks, cluster=1, block=block, sharedmem=sharedmem, stream=stream)

    def _attributes(self, driver) -> list:
        """Cooperative: the driver guarantees co-residence, which the kernel's grid barrier needs."""
        cooperative = driver.CUlaunchAttribute()
        cooperative.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        cooperative.value.cooperative = 1
        return [cooperative]

    def _fits(self, driver, function, config) -> int:
        """Blocks resident at once: per multiprocessor at this block and shared memory, times multiprocessors."""
        _, _, block, sharedmem = self.shape
        err, per_sm = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(function, block, sharedmem)
        _check(driver, err, "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return int(per_sm) * device.multiprocessors()


class StreamEvent:
    """A CUDA event that orders streams (without timing on a GPU: cheaper to record). ``recorder(stream)`` and
    ``waiter(stream)`` return calls with their arguments prepared once: at the driver's cost (``cuEventRecord``,
    ``cuStreamWaitEvent`` through ctypes, as C issues them) where ``native`` and on a GPU, else through Numba's
    ``Event.record`` / ``wait`` (the simulator, ``native=False``)."""

    __slots__ = ("event", "_lib", "_handle")

    def __init__(self, *, native=True):
        self.event = cuda.event(timing=False) if TARGET.gpu else cuda.event()
        self._lib = _libcuda() if native and TARGET.gpu else None
        self._handle = ctypes.c_void_p(int(self.event.handle)) if self._lib is not None else None

    def recorder(self, stream=0):
        """A call recording the event on ``stream``: the work queued there so far is what a waiter waits for."""
        if self._lib is None:
            return functools.partial(self.event.record, stream)
        return functools.partial(_driver_call, self._lib.cuEventRecord,
                                 (self._handle, ctypes.c_void_p(_stream_handle(stream))), "recording an event")

    def waiter(self, stream=0):
        """A call making ``stream``'s later work wait for the event's last recording (the host does not wait)."""
        if self._lib is None:
            return functools.partial(self.event.wait, stream)
        return functools.partial(_driver_call, self._lib.cuStreamWaitEvent,
                                 (ctypes.c_void_p(_stream_handle(stream)), self._handle, ctypes.c_uint(0)),
                                 "waiting for an event")


def _driver_call(function, args, what: str) -> None:
    err = function(*args)
    if err:
        raise SolverError(f"{what} failed: CUresult {err}")


@kernel("void({w}[::1], {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def fill(arr, value):
    """Set every element of a 1-D array to ``value``."""
    i = cuda.grid(1)
    if i < arr.size:
        arr[i] = value


@kernel("void({w}[::1], int64, {w})", cases=DISTANCES)
@cuda.jit(cache=True)
def put(arr, index, value):
    """Set one element (e.g. the source's distance) without a host round trip."""
    if cuda.grid(1) == 0:
        arr[index] = value


def fill_array(arr, value) -> None:
    """``arr[:] = value`` on the device: a kernel on a GPU, a host copy in the simulator (where a thread per element
    is a Python thread)."""
    if TARGET.gpu:
        fill[launch_grid(arr.size, 256), 256](arr, value)
    else:
        import numpy as np

        arr.copy_to_device(np.full(arr.shape, value, dtype=arr.dtype))

