"""gpusp.solvers.common.launch.Launch: the same results as Numba's launch whatever the arguments do between calls.

On a GPU a Launch bypasses Numba's dispatcher after its first call (the parameter blocks are its own), so the
GPU-only tests check what could go wrong there: scalars rewritten in place, ping-pong arrays, new array objects at
recycled addresses, cooperative kernels, host arrays refused, and that Numba's launch is really not called again. In
the simulator every call is Numba's launch; there the same kernels give the same answers.
"""

from __future__ import annotations

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
