"""Host microseconds per launch of an empty kernel (six int32 array arguments, 132 x 256 threads) through Numba's
dispatcher and through gpusp's Launch (Numba's compiled kernel, its parameter block built once, cuLaunchKernel),
three ways: async launch; launch + synchronize; launch + a 4-byte read-back into pinned memory (Numba's
copy_to_host for the numba path, NativeRead for the native one: as the per-round solvers read their flag). Median (min, max) of 7 repeats of 2,000 launches.
launch_micro.cu is the same in C. Usage on the device: python3 benchmarks/h200/launch_micro.py > OUT.csv
"""

import time

import numpy as np
from numba import cuda

from gpusp.solvers.common.launch import Launch, NativeRead

LAUNCHES, REPEATS = 2000, 7


@cuda.jit
def empty(a, b, c, d, e, f):
    if cuda.threadIdx.x == 1024:  # never true: the arguments stay live
        a[0] = b[0] + c[0] + d[0] + e[0] + f[0]


def per_launch(call, after) -> list[float]:
    out = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(LAUNCHES):
            call()
            after()
        out.append((time.perf_counter() - t0) / LAUNCHES * 1e6)
        cuda.synchronize()
    return out


def main():
    arrays = [cuda.to_device(np.zeros(256, np.int32)) for _ in range(6)]
    pinned = cuda.pinned_array(1, np.int32)
    configured = empty[132, 256]
    flag = cuda.to_device(np.zeros(1, np.int32))
    native = Launch(empty, 132, 256)
    paths = {"numba": (lambda: configured(*arrays), NativeRead(flag, pinned, native=False)),
             "native": (lambda: native(*arrays), NativeRead(flag, pinned))}
    stream = cuda.default_stream()
    for call, _ in paths.values():
        call()
    cuda.synchronize()
    print("path,way,median_us,min_us,max_us")
    for path, (call, read) in paths.items():
        ways = {"launch": lambda: None, "launch+sync": stream.synchronize, "launch+readback": read}
        for way, after in ways.items():
            times = per_launch(call, after)
            print(f"{path},{way},{np.median(times):.3f},{min(times):.3f},{max(times):.3f}", flush=True)


if __name__ == "__main__":
    main()
