"""Paper 003's first half: a tiled matrix product (T x T tiles in shared memory) and a block min-reduction over
(value << 32 | index) keys for its two smallest cells. The second half, the SSSP over the product's grid, is
``packed_atomic``; the whole flow is :mod:`gpusp.measure.paper003`. Design: docs/solvers/packed.md.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ...errors import SolverError
from ..common.gate import kernel
from ..common.launch import TARGET

KEY_NONE = np.iinfo(np.int64).max  # a key larger than any cell's: the neutral element of the minimum


def reduce_block() -> int:
    """Threads per reduction block: 1024 as in the paper on a GPU, 64 in the simulator."""
    return TARGET.threads(1024, 64)


@kernel("void(int32[:, ::1], int32[:, ::1], int32[:, ::1], int64)", cases=[{"T": 8}, {"T": 16}, {"T": 32}])
@functools.cache
def matmul_kernel(T: int):
    """The tiled product kernel for T x T tiles (T a compile-time constant)."""

    @cuda.jit
    def matmul(a, b, c, n):
        """c = a b for n x n int32 matrices, one cell per thread, T x T tiles of a and b in shared memory."""
        sa = cuda.shared.array((T, T), numba.int32)
        sb = cuda.shared.array((T, T), numba.int32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        acc = numba.int32(0)
        for step in range((n + T - 1) // T):  # no early return: every thread reaches every barrier
            k = step * T + tx
            sa[ty, tx] = a[row, k] if row < n and k < n else 0
            k = step * T + ty
            sb[ty, tx] = b[k, col] if k < n and col < n else 0
            cuda.syncthreads()  # barrier: both tiles are staged before any thread reads them
            for kk in range(T):
                acc = numba.int32(acc + sa[ty, kk] * sb[kk, tx])
            cuda.syncthreads()  # barrier: the tiles are read before the next step overwrites them
        if row < n and col < n:
            c[row, col] = acc

    return matmul


@kernel("void(int32[:, ::1], int64[::1], int64)")
@cuda.jit
def make_keys(c, keys, n):
    """keys[i] = c[i] << 32 | i for the n x n matrix c read row-major (c >= 0)."""
    i = cuda.grid(1)
    if i >= n * n:
        return
    keys[i] = (numba.int64(c[i // n, i % n]) << 32) | i


@kernel("void(int64[::1], int64[::1], int64)", cases=[{"B": 64}, {"B": 1024}])
@functools.cache
def min_kernel(B: int):
    """The reduction kernel for blocks of B threads (B a power of two, a compile-time constant)."""

    @cuda.jit
    def block_min(keys, out, count):
        """out[block] = the smallest of keys[...] over this block's grid-strided share; B threads a block."""
        s = cuda.shared.array(B, numba.int64)
        t = cuda.threadIdx.x
        best = numba.int64(KEY_NONE)
        i = cuda.blockIdx.x * B + t
        while i < count:  # a thread first folds its grid-strided share
            if keys[i] < best:
                best = keys[i]
            i += B * cuda.gridDim.x
        s[t] = best
        cuda.syncthreads()  # barrier: every thread's value is in shared memory
        stride = B // 2
        while stride > 0:
            if t < stride and s[t + stride] < s[t]:
                s[t] = s[t + stride]
            cuda.syncthreads()  # barrier: this halving step is complete before the next reads it
            stride //= 2
        if t == 0:
            out[cuda.blockIdx.x] = s[0]

    return block_min


@kernel("void(int64[::1], int64, int64)")
@cuda.jit
def set_key(keys, i, value):
    """keys[i] = value (one thread): hides the first minimum while the second is found, then restores."""
    if cuda.grid(1) == 0:
        keys[i] = value


def check_matrices(a: np.ndarray, b: np.ndarray) -> None:
    """Raise SolverError unless a and b are square int32 matrices of one size with c = a b >= 0 in int32."""
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape != b.shape:
        raise SolverError(f"matrix product: a {a.shape} and b {b.shape} must be square and of one size")
    if min(int(a.min()), int(b.min())) < 0:
        raise SolverError("matrix product: entries must be non-negative (they become SSSP arc weights)")
    bound = a.shape[0] * int(a.max()) * int(b.max())
    if bound >= 2**31:
        raise SolverError(f"matrix product: entries up to {bound} would overflow int32; use smaller values")


def product(d_a, d_b, n: int, T: int):
    """c = a b on the device (device arrays in and out)."""
    c = cuda.device_array((n, n), dtype=np.int32)
    blocks = (n + T - 1) // T
    matmul_kernel(T)[(blocks, blocks), (T, T)](d_a, d_b, c, n)
    return c


def _min_key(keys, count: int, B: int) -> int:
    """The smallest key: per-block minima, then one block over them."""
    grid = max(1, min((count + B - 1) // B, B))
    partial = cuda.device_array(grid, dtype=np.int64)
    out = cuda.device_array(1, dtype=np.int64)
    min_kernel(B)[grid, B](keys, partial, count)
    min_kernel(B)[1, B](partial, out, grid)
    return int(out.copy_to_host()[0])


def two_smallest(d_c, n: int, B: int | None = None) -> list[tuple[int, int]]:
    """[(value, index), (value, index)] of the two smallest cells of c (row-major index), the paper's way:
    reduce, hide the first, reduce again, restore. One cell only: the second is (None, None)."""
    B = B or reduce_block()
    count = n * n
    keys = cuda.device_array(count, dtype=np.int64)
    make_keys[(count + 255) // 256, 256](d_c, keys, n)
    first = _min_key(keys, count, B)
    set_key[1, 1](keys, first & 0xFFFFFFFF, KEY_NONE)
    second = _min_key(keys, count, B)
    set_key[1, 1](keys, first & 0xFFFFFFFF, first)
    return [(k >> 32, k & 0xFFFFFFFF) if k != KEY_NONE else (None, None) for k in (first, second)]
