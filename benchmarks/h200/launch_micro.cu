// The C reference of benchmarks/h200/launch_micro.py: host microseconds per launch of an empty kernel with six
// pointer arguments on 132 x 256 threads, three ways (async launch; launch + stream synchronize; launch + a 4-byte
// read-back into pinned memory + synchronize). Build: nvcc -O2 -arch=sm_90 launch_micro.cu -o launch_micro
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty(int *a, int *b, int *c, int *d, int *e, int *f) {
  if (threadIdx.x == 1024) a[0] = b[0] + c[0] + d[0] + e[0] + f[0];  // never true: the pointers stay live
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  const int launches = 2000, repeats = 7;
  int *p[6];
  for (auto &q : p) cudaMalloc(&q, 1024);
  int *pinned;
  cudaMallocHost(&pinned, sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  empty<<<132, 256, 0, s>>>(p[0], p[1], p[2], p[3], p[4], p[5]);
  cudaStreamSynchronize(s);
  const char *names[3] = {"launch", "launch+sync", "launch+readback"};
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<double> per;
    for (int r = 0; r < repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < launches; ++i) {
        empty<<<132, 256, 0, s>>>(p[0], p[1], p[2], p[3], p[4], p[5]);
        if (mode == 1) cudaStreamSynchronize(s);
        if (mode == 2) {
          cudaMemcpyAsync(pinned, p[0], sizeof(int), cudaMemcpyDeviceToHost, s);
          cudaStreamSynchronize(s);
        }
      }
      auto t1 = std::chrono::steady_clock::now();
      cudaStreamSynchronize(s);
      per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / launches);
    }
    std::printf("c,%s,%.3f,%.3f,%.3f\n", names[mode], median(per), *std::min_element(per.begin(), per.end()),
                *std::max_element(per.begin(), per.end()));
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
