// Per-launch cost of the watch: N launches of an empty kernel, timed on the
// host. tests/bench/watch_overhead.sh runs it with and without `tunelock
// watch` on a GPU machine. Prints nanoseconds per launch; exits 77 without
// a GPU.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 200000;
  if (cudaFree(nullptr) != cudaSuccess) {
    std::printf("no GPU: skipped\n");
    return 77;
  }
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 32>>>();  // warm
  cudaDeviceSynchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 32>>>();
  cudaDeviceSynchronize();
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.1f ns per launch over %d launches\n", ns / launches, launches);
  return 0;
}
