// Per-launch cost of the watch: N launches of an empty kernel, timed on the
// host. tests/bench/watch_overhead.sh runs it with and without `tunelock
// watch` on a GPU machine. Prints nanoseconds per launch; exits 77 without
// a GPU.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty_kernel() {}

// Only the host's time to issue each launch is counted: launches go in bursts
// short enough that the device never makes the host wait, with a
// synchronise between bursts outside the timed part.
int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 200000;
  constexpr int kBurst = 256;
  if (cudaFree(nullptr) != cudaSuccess) {
    std::printf("no GPU: skipped\n");
    return 77;
  }
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 32>>>();  // warm
  cudaDeviceSynchronize();
  double ns = 0;
  int issued = 0;
  while (issued < launches) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBurst; ++i) empty_kernel<<<1, 32>>>();
    ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    issued += kBurst;
    cudaDeviceSynchronize();
  }
  std::printf("%.1f ns per launch (host issue time) over %d launches\n", ns / issued, issued);
  return 0;
}
