// The demo's GPU kernels, as plain launch functions (compiled by nvcc in
// gpu_kernels.cu; callers need no CUDA compiler). Like the host kernels,
// configs change the bits of the result the way real tilings do, and every
// kernel but one reduces in a fixed order, so one config always gives the
// same bits. The exception, gemm_atomic, is racy on purpose: the record
// mode's self-determinism audit must flag it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tunelock::demo::gpu {

// C (MxN) = A (MxK) * B (KxN), row-major floats, in `tile` x `tile` thread
// blocks (16 or 32) that add each K-tile's partial sum to their total. K is
// split into `split` chunks: each chunk writes its partial product to
// workspace[chunk] (M x N floats each) and a second kernel adds the chunks
// in chunk order. split == 1 writes C directly.
void gemm_splitk(cudaStream_t stream, int tile, int split, const float* a, const float* b, float* c,
                 float* workspace, int m, int n, int k);

// The same product with every chunk's K-tile partials added into C by
// float atomicAdd: the order of the additions, and so the bits, vary from
// run to run. C is zeroed first on the stream.
void gemm_atomic(cudaStream_t stream, int tile, int split, const float* a, const float* b, float* c,
                 int m, int n, int k);

// Floats of workspace the split-K variants need for up to `max_split` chunks.
std::size_t gemm_workspace_floats(int m, int n, int max_split);

// out[r] = sum of row r of x (rows x cols): `block` threads (64..1024, a
// power of two) each add a strided slice, then a fixed tree adds theirs.
void row_sum(cudaStream_t stream, int block, const float* x, float* out, int rows, int cols);

// w[i] -= lr * grad[i]
void sgd_update(cudaStream_t stream, float* w, const float* grad, float lr, int n);

// A kernel that does nothing: the cost of a launch, for benchmarks.
void empty_kernel(cudaStream_t stream);

}  // namespace tunelock::demo::gpu
