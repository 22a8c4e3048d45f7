#include "compiled_kernels.hpp"

namespace tunelock::testing::gpu {
namespace {

__global__ void scale_kernel(const float* x, float* y, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * factor;
}

__global__ void atomic_total_kernel(const float* x, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}

__global__ void serial_total_kernel(const float* x, float* out, int n) {
  float total = 0.0f;
  for (int i = 0; i < n; ++i) total += x[i];
  out[0] = total;
}

}  // namespace

void scale(cudaStream_t stream, const float* x, float* y, int n, float factor) {
  scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n, factor);
}

void scale_with_shared(cudaStream_t stream, const float* x, float* y, int n, float factor,
                       unsigned shared_bytes) {
  scale_kernel<<<(n + 255) / 256, 256, shared_bytes, stream>>>(x, y, n, factor);
}

void atomic_total(cudaStream_t stream, const float* x, float* out, int n) {
  cudaMemsetAsync(out, 0, sizeof(float), stream);
  atomic_total_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, out, n);
}

void serial_total(cudaStream_t stream, const float* x, float* out, int n) {
  serial_total_kernel<<<1, 1, 0, stream>>>(x, out, n);
}

}  // namespace tunelock::testing::gpu
