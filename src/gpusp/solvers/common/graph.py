"""CUDA graphs built node by node through the driver's explicit graph API, as C builds them (:class:`NativeGraph`):
kernel nodes from the parameter blocks of native launches (``launch.Launch``) and device-to-device memcpy nodes,
each after exactly the nodes given. Design: docs/solvers/common.md.
"""

from __future__ import annotations

import ctypes
import functools

from ...errors import SolverError
from .launch import Launch, _driver_call, _libcuda, _stream_handle


class _KernelNodeParams(ctypes.Structure):
    """CUDA_KERNEL_NODE_PARAMS (the v2 layout of CUDA 12's cuda.h)."""

    _fields_ = [("func", ctypes.c_void_p), *((f"{w}Dim{a}", ctypes.c_uint) for w in ("grid", "block") for a in "XYZ"),
                ("sharedMemBytes", ctypes.c_uint), ("kernelParams", ctypes.c_void_p), ("extra", ctypes.c_void_p),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


def _memcpy3d_side(side: str) -> list:
    return [(f"{side}{f}", ctypes.c_size_t) for f in ("XInBytes", "Y", "Z", "LOD")] + [
        (f"{side}MemoryType", ctypes.c_int), (f"{side}Host", ctypes.c_void_p), (f"{side}Device", ctypes.c_uint64),
        (f"{side}Array", ctypes.c_void_p), (f"reserved{int(side == 'dst')}", ctypes.c_void_p),
        (f"{side}Pitch", ctypes.c_size_t), (f"{side}Height", ctypes.c_size_t)]


class _Memcpy3D(ctypes.Structure):
    """CUDA_MEMCPY3D (cuda.h)."""

    _fields_ = [*_memcpy3d_side("src"), *_memcpy3d_side("dst"), ("WidthInBytes", ctypes.c_size_t),
                ("Height", ctypes.c_size_t), ("Depth", ctypes.c_size_t)]


_MEMORYTYPE_DEVICE = 2  # CU_MEMORYTYPE_DEVICE


@functools.cache
def _graph_api():
    """The driver library (launch's) with the explicit graph calls declared (cuda.h's names for CUDA 12:
    cuGraphAddKernelNode is its _v2)."""
    lib = _libcuda()
    p, n, u64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_ulonglong
    pp = ctypes.POINTER(ctypes.c_void_p)
    signatures = {"cuGraphCreate": [pp, ctypes.c_uint], "cuGraphAddKernelNode_v2": [pp, p, p, n, p],
                  "cuGraphAddMemcpyNode": [pp, p, p, n, p, p], "cuGraphInstantiateWithFlags": [pp, p, u64],
                  "cuGraphLaunch": [p, p], "cuGraphExecDestroy": [p], "cuGraphDestroy": [p], "cuCtxGetCurrent": [pp]}
    for name, argtypes in signatures.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise SolverError(f"the driver has no {name}: CUDA graphs are not built natively here "
                              "(launcher='numba' records them through cuda.core)") from None
        function.argtypes, function.restype = argtypes, ctypes.c_int
    return lib


class NativeGraph:
    """A CUDA graph built node by node through the driver's explicit graph API, as C builds one: ``kernel`` adds a
    kernel node from a :class:`Launch` (launched natively once) and its arguments, ``copy`` a device-to-device
    memcpy node, each depending on exactly the nodes given. ``instantiate()`` returns an executable graph
    (:class:`NativeGraphExec`); ``close()`` releases the graph, which an executable graph does not need."""

    def __init__(self):
        self._lib = _graph_api()
        self.handle = ctypes.c_void_p()
        self._call("cuGraphCreate", ctypes.byref(self.handle), 0)
        self.ctx = ctypes.c_void_p()
        self._call("cuCtxGetCurrent", ctypes.byref(self.ctx))
        self._params, self._copy = _KernelNodeParams(), _Memcpy3D()

    def _call(self, name, *args):
        _driver_call(getattr(self._lib, name), args, name)

    def _add(self, name, deps, params, *extra):
        node = ctypes.c_void_p()
        after = (ctypes.c_void_p * max(1, len(deps)))(*deps)
        self._call(name, ctypes.byref(node), self.handle, after, len(deps), ctypes.byref(params), *extra)
        return node.value

    def kernel(self, launch: Launch, args, deps=()) -> int:
        """Add a kernel node running ``launch`` with ``args`` after the nodes ``deps``; returns the node."""
        prm = self._params
        (prm.func, prm.gridDimX, prm.gridDimY, prm.gridDimZ, prm.blockDimX, prm.blockDimY, prm.blockDimZ,
         prm.sharedMemBytes, block) = launch.node_params(*args)
        prm.kernelParams = ctypes.cast(block, ctypes.c_void_p)
        return self._add("cuGraphAddKernelNode_v2", deps, prm)

    def copy(self, dst, src, deps=()) -> int:
        """Add a node copying device array ``src`` over ``dst`` (same size) after the nodes ``deps``."""
        if dst.nbytes != src.nbytes:
            raise SolverError(f"a graph copy of {src.nbytes} bytes into {dst.nbytes}")
        c = self._copy
        c.srcMemoryType = c.dstMemoryType = _MEMORYTYPE_DEVICE
        c.srcDevice, c.dstDevice = src.device_ctypes_pointer.value, dst.device_ctypes_pointer.value
        c.WidthInBytes = c.srcPitch = c.dstPitch = src.nbytes
        c.Height = c.Depth = c.srcHeight = c.dstHeight = 1
        return self._add("cuGraphAddMemcpyNode", deps, c, self.ctx)

    def instantiate(self) -> NativeGraphExec:
        exe = ctypes.c_void_p()
        self._call("cuGraphInstantiateWithFlags", ctypes.byref(exe), self.handle, 0)
        return NativeGraphExec(self._lib, exe)

    def close(self) -> None:
        if self.handle:
            self._call("cuGraphDestroy", self.handle)
            self.handle = ctypes.c_void_p()


class NativeGraphExec:
    """An executable graph of :class:`NativeGraph`: ``launch(stream)`` queues it (0: the legacy default stream, so it
    is ordered after Numba's work there); ``close()`` releases it."""

    def __init__(self, lib, handle):
        self._lib, self.handle = lib, handle

    def launch(self, stream=0) -> None:
        _driver_call(self._lib.cuGraphLaunch, (self.handle, ctypes.c_void_p(_stream_handle(stream))), "cuGraphLaunch")

    def close(self) -> None:
        if self.handle:
            handle, self.handle = self.handle, ctypes.c_void_p()
            _driver_call(self._lib.cuGraphExecDestroy, (handle,), "cuGraphExecDestroy")
