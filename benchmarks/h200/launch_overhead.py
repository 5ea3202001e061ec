"""Host cost of one kernel launch: Numba's `kernel[grid, block](...)` against gpusp's FastLaunch.

Times 2000 back-to-back launches of a relax-like kernel with 6 device arrays and 2 scalars (what a
Bellman-Ford round launches), then checks both paths compute the same thing. Run on the GPU box.
"""

import time

import numpy as np
from numba import cuda

from gpusp.solvers.common import FastLaunch


@cuda.jit(cache=True)
def relax_like(a, b, c, d, e, f, s, t):
    """Touch every argument so nothing is optimised away."""
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i] + c[i] + d[i] + e[i] + f[i] + s + t


def main():
    n = 1 << 16
    arrs = [cuda.to_device(np.arange(n, dtype=np.int32)) for _ in range(6)]
    grid, block = (n + 255) // 256, 256
    plain = relax_like[grid, block]
    fast = FastLaunch(relax_like, grid, block)
    for fn in (plain, fast):
        fn(*arrs, np.int32(1), 2)
    cuda.synchronize()
    for name, fn in (("numba kernel[grid, block](...)", plain), ("gpusp FastLaunch", fast)):
        t0 = time.perf_counter()
        for r in range(2000):
            fn(*arrs, np.int32(1), r)
        cuda.synchronize()
        print(f"{name:<32} {(time.perf_counter() - t0) / 2000 * 1e6:7.1f} us per launch")
    fast(*arrs, np.int32(3), 4)
    want = sum(np.arange(n, dtype=np.int64) for _ in range(5)) + 7
    got = arrs[0].copy_to_host()
    print("fast path result correct:", bool(np.array_equal(got, want.astype(np.int32))))


if __name__ == "__main__":
    main()
