"""gpusp.solvers.common.launch.Launch: the same results as Numba's launch whatever the arguments do between calls.

On a GPU a Launch bypasses Numba's dispatcher after its first call (the parameter blocks are its own), so the
GPU-only tests check what could go wrong there: scalars rewritten in place, ping-pong arrays, new array objects at
recycled addresses, cooperative kernels, host arrays refused, and that Numba's launch is really not called again. In
the simulator every call is Numba's launch; there the same kernels give the same answers.
"""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
from numba import cuda, types

from gpusp.errors import SolverError
from gpusp.solvers.common.launch import TARGET, Launch, _members

gpu_only = pytest.mark.skipif(not TARGET.gpu, reason="the native launch path exists only on a real GPU")


@cuda.jit
def axpy(out, x, y, scale, shift):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * scale + y[i] + shift


@cuda.jit
def grid_sum(out, x):
    """Each thread adds its element, then (after a grid barrier) thread 0 checks every add landed."""
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])  # many threads add into one word
    cuda.cg.this_grid().sync()  # every add is visible before the read below
    if i == 0:
        out[1] = out[0]


@cuda.jit
def axpy_records(out, xy, coef):
    """axpy with its inputs and its scalars in records (tuples), as the solvers' kernels take them."""
    x, y = xy
    scale, shift = coef
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * scale + y[i] + shift


def _expected(x, y, scale, shift):
    return x * scale + y + shift


@pytest.mark.parametrize("native", [True, False])
def test_scalars_and_arrays_change_between_calls(native):
    """Every call sees its own arguments: scalars rewritten, arrays swapped (ping-pong) and replaced."""
    n = 37  # not a multiple of the block
    rng = np.random.default_rng(3)
    x, y = rng.integers(-50, 50, n).astype(np.int64), rng.integers(-50, 50, n).astype(np.int64)
    dx, dy, out = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.int64)
    launch = Launch(axpy, 2, 32, native=native)
    for scale, shift in ((1, 0), (3, -7), (-2, 11)):
        launch(out, dx, dy, scale, shift)
        np.testing.assert_array_equal(out.copy_to_host(), _expected(x, y, scale, shift))
        launch(out, dy, dx, scale, shift)  # the arrays swapped: another parameter block
        np.testing.assert_array_equal(out.copy_to_host(), _expected(y, x, scale, shift))
    for k in range(12):  # new array objects (more than the blocks kept), freed at once: addresses get reused
        z = rng.integers(-9, 9, n).astype(np.int64)
        dz = cuda.to_device(z)
        launch(out, dz, dy, k, 1)
        np.testing.assert_array_equal(out.copy_to_host(), _expected(z, y, k, 1))
        del dz
        gc.collect()


@gpu_only
def test_native_calls_skip_numbas_launch():
    """After the first call Numba's configured launch is never entered again."""
    n = 64
    out, x, y = (cuda.to_device(np.arange(n, dtype=np.int64)) for _ in range(3))
    launch = Launch(axpy, 2, 32)
    launch(out, x, y, 1, 0)
    entered = []
    launch.bound.pre_launch_callbacks.append(lambda *a: entered.append(a))
    for k in range(5):
        launch(out, x, y, k, k)
    cuda.synchronize()
    assert entered == []
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(n) * 4 + np.arange(n) + 4)


@gpu_only
def test_the_first_call_builds_its_parameter_block():
    """A launch made once a run (a piece of v3.0's stream plan, the check) must not build its block in the first
    timed run after a one-run warm-up: the first call builds it, the next calls with those arrays reuse it."""
    n = 64
    out, x, y = (cuda.to_device(np.arange(n, dtype=np.int64)) for _ in range(3))
    launch = Launch(axpy, 2, 32)
    launch(out, x, y, 1, 0)
    blocks = dict(launch._blocks)
    assert list(blocks) == [(id(out), id(x), id(y))]
    launch(out, x, y, 2, 1)
    assert launch._blocks == blocks
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(n) * 2 + np.arange(n) + 1)


@gpu_only
def test_cooperative_kernel_launches_natively():
    n = 300
    x = cuda.to_device(np.ones(n, np.int64))
    launch = Launch(grid_sum, 2, 256)
    for _ in range(3):
        out = cuda.to_device(np.zeros(2, np.int64))
        launch(out, x)
        assert out.copy_to_host().tolist() == [n, n]


@gpu_only
def test_host_array_refused_after_the_first_call():
    """A host array would need Numba's copies around every launch: a clear error, not a silent copy."""
    n = 8
    out, x, y = (cuda.device_array(n, np.int64) for _ in range(3))
    launch = Launch(axpy, 1, 32)
    launch(out, x, y, 1, 0)
    with pytest.raises(SolverError, match="device arrays only"):
        launch(out, np.zeros(n, np.int64), y, 1, 0)


@gpu_only
def test_int32_scalar_keeps_its_type():
    """A scalar first passed as int32 stays an int32 parameter; later Python ints are written into it."""
    n = 4
    out, x, y = (cuda.to_device(np.zeros(n, np.int32)) for _ in range(3))
    launch = Launch(axpy, 1, 32)
    launch(out, x, y, np.int32(1), np.int32(5))
    launch(out, x, y, 1, -3)
    assert out.copy_to_host().tolist() == [-3] * n


@pytest.mark.skipif(TARGET.gpu, reason="the simulator's atomics (launch.py's one lock, set on the simulator) only")
def test_simulated_atomics_of_different_kinds_on_one_word_are_indivisible():
    """A poll by ``atomic.add(a, i, 0)`` and an ``atomic.exch`` on the same word: the exchange lands before or after
    the add, never inside it (where the add would write the old value back over it). The add is held inside its write
    until the exchange has been tried; with a lock per kind of atomic (the simulator's own) the exchange is lost."""
    import threading

    from numba.cuda.simulator import kernelapi

    inside, tried = threading.Event(), threading.Event()

    class HeldWrite(np.ndarray):
        def __setitem__(self, index, value):
            if threading.current_thread().name == "poll":
                inside.set()
                tried.wait(0.5)  # with the shared lock the exchange waits for this add: go on after half a second
            super().__setitem__(index, value)

    word = np.zeros(1, np.int64).view(HeldWrite)
    atomic = kernelapi.FakeCUDAAtomic()
    poll = threading.Thread(target=atomic.add, args=(word, 0, 0), name="poll")
    poll.start()
    assert inside.wait(10)
    setter = threading.Thread(target=lambda: (atomic.exch(word, 0, 5), tried.set()))
    setter.start()
    poll.join(10)
    setter.join(10)
    assert int(word[0]) == 5


def test_tuple_members_in_numbas_order():
    """A tuple argument's members are parameters in turn, as Numba's launch flattens them."""
    pair = types.Tuple((types.int32[::1], types.int64))
    assert _members((types.int64[::1], pair, types.int64, types.UniTuple(types.int64, 3))) == [
        (0, None), (1, 0), (1, 1), (2, None), (3, 0), (3, 1), (3, 2)]


@pytest.mark.parametrize("native", [True, False])
def test_records_of_arrays_and_scalars_change_between_calls(native):
    """Tuples of arrays and of scalars launch natively on a GPU: members rewritten, swapped and replaced."""
    n = 37
    rng = np.random.default_rng(5)
    x, y = rng.integers(-50, 50, n).astype(np.int64), rng.integers(-50, 50, n).astype(np.int64)
    dx, dy, out = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.int64)
    launch = Launch(axpy_records, 2, 32, native=native)
    for scale, shift in ((1, 0), (3, -7), (-2, 11)):
        launch(out, (dx, dy), (np.int64(scale), np.int64(shift)))
        np.testing.assert_array_equal(out.copy_to_host(), _expected(x, y, scale, shift))
        launch(out, (dy, dx), (np.int64(scale), np.int64(shift)))
        np.testing.assert_array_equal(out.copy_to_host(), _expected(y, x, scale, shift))
    if native and TARGET.gpu:
        assert launch._function is not None and launch._members is not None  # the driver's launch, not Numba's
    for k in range(10):
        dz = cuda.to_device(np.full(n, k, np.int64))
        launch(out, (dz, dy), (np.int64(2), np.int64(1)))
        np.testing.assert_array_equal(out.copy_to_host(), 2 * k + y + 1)
        del dz
        gc.collect()


class _Driver:
    """libcuda's two event calls, recorded as the values ctypes would pass; ``fail`` makes them return that CUresult."""

    def __init__(self, fail=0):
        self.calls, self.fail = [], fail

    def _call(self, name):
        def call(*args):
            self.calls.append((name, tuple(a.value for a in args)))
            return self.fail
        return call

    def __getattr__(self, name):
        return self._call(name)


class _Stream:
    def __cuda_stream__(self):
        return (0, 0xBEEF)


def _native_event(monkeypatch, lib):
    """A StreamEvent as a GPU makes it (an event of handle 0x1234), with ``lib`` as the driver."""
    from types import SimpleNamespace

    from gpusp.solvers.common import launch

    made = SimpleNamespace(handle=0x1234, record=None, wait=None)
    monkeypatch.setattr(launch, "TARGET", SimpleNamespace(gpu=True))
    monkeypatch.setattr(launch, "cuda", SimpleNamespace(event=lambda timing=True: made))
    monkeypatch.setattr(launch, "_libcuda", lambda: lib)
    return launch.StreamEvent(native=True)


def test_a_native_stream_event_is_the_drivers_record_and_wait_on_the_given_stream(monkeypatch):
    lib = _Driver()
    ev = _native_event(monkeypatch, lib)
    record, wait, wait_default = ev.recorder(_Stream()), ev.waiter(_Stream()), ev.waiter(0)
    assert lib.calls == []  # preparing issues nothing
    record(), wait(), wait_default(), record()
    assert lib.calls == [("cuEventRecord", (0x1234, 0xBEEF)), ("cuStreamWaitEvent", (0xBEEF, 0x1234, 0)),
                         ("cuStreamWaitEvent", (None, 0x1234, 0)), ("cuEventRecord", (0x1234, 0xBEEF))]


def test_a_failed_native_event_call_names_what_failed(monkeypatch):
    ev = _native_event(monkeypatch, _Driver(fail=700))
    with pytest.raises(SolverError, match="recording an event failed: CUresult 700"):
        ev.recorder(_Stream())()
    with pytest.raises(SolverError, match="waiting for an event failed: CUresult 700"):
        ev.waiter(_Stream())()


def test_a_stream_event_off_the_driver_is_numbas_event():
    """native=False (and the simulator): the calls are Numba's Event.record / wait on the stream given."""
    from gpusp.solvers.common.launch import StreamEvent

    ev = StreamEvent(native=False)
    stream = cuda.stream()
    record, wait = ev.recorder(stream), ev.waiter(stream)
    assert (record.func, record.args) == (ev.event.record, (stream,))
    assert (wait.func, wait.args) == (ev.event.wait, (stream,))
    record(), wait()
    stream.synchronize()


class _GraphDriver:
    """The driver's graph calls, recorded with the structures as they were when passed; handles count up from 100."""

    def __init__(self, fail_on=None):
        self.calls, self.fail_on, self.next = [], fail_on, 100

    def __getattr__(self, name):
        def call(*args):
            seen = []
            for a in args:
                obj = getattr(a, "_obj", a)  # byref(x) -> x
                if isinstance(obj, ctypes.Structure):
                    seen.append({f: getattr(obj, f) for f, _ in obj._fields_})
                elif isinstance(obj, ctypes.Array):
                    seen.append([x for x in obj])
                else:
                    seen.append(getattr(obj, "value", obj))
            self.calls.append((name, seen))
            if name == self.fail_on:
                return 1
            for a in args[:1]:
                if hasattr(a, "_obj") and isinstance(a._obj, ctypes.c_void_p):  # an out-parameter handle
                    self.next += 1
                    a._obj.value = self.next
            return 0
        return call


class _DeviceArray:
    def __init__(self, address, nbytes):
        self.device_ctypes_pointer, self.nbytes = ctypes.c_void_p(address), nbytes


class _NodeLaunch:
    """What NativeGraph reads of a Launch: node_params(*args)."""

    def __init__(self):
        self.block = (ctypes.c_void_p * 2)(0xAA, 0xBB)

    def node_params(self, *args):
        return (0xF00D, 3, 2, 1, 8, 8, 1, 64, self.block)


def test_a_native_graph_adds_each_node_after_exactly_the_nodes_given(monkeypatch):
    from gpusp.solvers.common import graph as native

    lib = _GraphDriver()
    monkeypatch.setattr(native, "_graph_api", lambda: lib)
    g = native.NativeGraph()
    assert (g.handle.value, g.ctx.value) == (101, 102)
    reset = g.copy(_DeviceArray(0x2000, 4096), _DeviceArray(0x1000, 4096))
    piece = _NodeLaunch()
    first = g.kernel(piece, ("d", "p", 0), [reset])
    second = g.kernel(piece, ("d", "p", 1), [reset, first])
    exe = g.instantiate()
    g.close()
    exe.launch(0)
    exe.close()
    names = [name for name, _ in lib.calls]
    assert names == ["cuGraphCreate", "cuCtxGetCurrent", "cuGraphAddMemcpyNode", "cuGraphAddKernelNode_v2",
                     "cuGraphAddKernelNode_v2", "cuGraphInstantiateWithFlags", "cuGraphDestroy", "cuGraphLaunch",
                     "cuGraphExecDestroy"]
    graph, ctx = 101, 102  # the handles the driver wrote out, in order
    _, (_, in_graph, deps, count, copy, copy_ctx) = lib.calls[2]
    assert (in_graph, count, copy_ctx) == (graph, 0, ctx)
    assert {k: copy[k] for k in ("srcMemoryType", "dstMemoryType", "srcDevice", "dstDevice", "WidthInBytes",
                                 "Height", "Depth")} == {"srcMemoryType": 2, "dstMemoryType": 2, "srcDevice": 0x1000,
                                                         "dstDevice": 0x2000, "WidthInBytes": 4096, "Height": 1,
                                                         "Depth": 1}
    for (_, (_, in_graph, deps, count, node)), after in zip(lib.calls[3:5], ([reset], [reset, first])):
        assert in_graph == graph and count == len(after) and deps[:count] == after
        assert (node["func"], node["gridDimX"], node["gridDimY"], node["blockDimX"], node["sharedMemBytes"]) == (
            0xF00D, 3, 2, 8, 64)
        assert node["kernelParams"] == ctypes.addressof(piece.block) and node["extra"] is None
    assert (reset, first, second) == (103, 104, 105)
    assert lib.calls[6][1] == [graph] and not g.handle  # the graph released, its executable kept
    assert lib.calls[7][1] == [106, None] and lib.calls[8][1] == [106] and not exe.handle


def test_a_failed_native_graph_call_names_the_call(monkeypatch):
    from gpusp.solvers.common import graph as native

    monkeypatch.setattr(native, "_graph_api", lambda: _GraphDriver(fail_on="cuGraphAddKernelNode_v2"))
    g = native.NativeGraph()
    with pytest.raises(SolverError, match="cuGraphAddKernelNode_v2 failed: CUresult 1"):
        g.kernel(_NodeLaunch(), ())
    with pytest.raises(SolverError, match="a graph copy of 8 bytes into 4"):
        g.copy(_DeviceArray(1, 4), _DeviceArray(2, 8))


def test_a_kernel_node_needs_a_launch_that_has_launched_natively():
    launch = Launch(axpy, 2, 32)
    with pytest.raises(SolverError, match="axpy: a graph's kernel node needs a Launch that has launched natively"):
        launch.node_params()
