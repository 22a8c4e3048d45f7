// Compiled test kernels (nvcc, compiled_kernels.cu) behind plain launch
// functions, so the test program itself is ordinary C++.
#pragma once

#include <cuda_runtime_api.h>

namespace tunelock::testing::gpu {

// y[i] = x[i] * factor, like the loaded tl_scale.
void scale(cudaStream_t stream, const float* x, float* y, int n, float factor);

// Asks for `shared_bytes` of dynamic shared memory: more than a GPU has
// makes the launch fail (cudaErrorInvalidValue), as a bad config does.
void scale_with_shared(cudaStream_t stream, const float* x, float* y, int n, float factor,
                       unsigned shared_bytes);

// out[0] += x[i] for every i, by atomics: a racy variant for the audit.
void atomic_total(cudaStream_t stream, const float* x, float* out, int n);
// out[0] = sum of x in a fixed order (one thread): a deterministic one.
void serial_total(cudaStream_t stream, const float* x, float* out, int n);

}  // namespace tunelock::testing::gpu
