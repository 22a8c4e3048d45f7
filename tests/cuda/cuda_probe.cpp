// Exits 0 naming the GPU when one is usable, else 1 with the CUDA error:
// lets GPU test scripts skip with a message on machines without one.
#include <cstdio>

#include "tunelock/cuda/cuda_backend.hpp"

int main() {
  if (const auto reason = tunelock::cuda::unavailable_reason()) {
    std::fprintf(stderr, "no usable GPU here (%s)\n", reason->c_str());
    return 1;
  }
  const tunelock::cuda::CudaBackend backend;
  std::printf("%d GPU(s), the first: %s (%s)\n", backend.device_count(),
              backend.device().device_name.c_str(), backend.current_arch().c_str());
  return 0;
}
