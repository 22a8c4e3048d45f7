// The demo's GPU kernel families: a split-K GEMM (with one deliberately
// racy variant), a block-size-dependent row sum, and a one-variant update.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "tunelock/launcher/kernel_family.hpp"

namespace tunelock::demo::gpu {

// (stream, A, B, C, workspace, M, N, K): C = A * B. The workspace holds
// gemm_workspace_floats(M, N, kMaxSplit) floats.
using GemmFamily =
    launcher::KernelFamily<cudaStream_t, const float*, const float*, float*, float*, int, int, int>;
// (stream, x, out, rows, cols): out[r] = sum of row r.
using RowSumFamily = launcher::KernelFamily<cudaStream_t, const float*, float*, int, int>;
// (stream, w, grad, lr, n): w -= lr * grad. One variant.
using SgdFamily = launcher::KernelFamily<cudaStream_t, float*, const float*, float, int>;

constexpr int kMaxSplit = 8;

// Split-K variants reduce their chunks in a fixed order; the variant with
// ATOMIC=1 adds them with float atomics and is the most expensive by the
// cost rule, so the cheapest fallback never picks it.
std::vector<GemmFamily::Variant> gemm_variants();
GemmFamily::Hooks gemm_hooks();  // C is the output the audit compares
std::vector<RowSumFamily::Variant> row_sum_variants();
RowSumFamily::Hooks row_sum_hooks();
std::vector<SgdFamily::Variant> sgd_variants();

}  // namespace tunelock::demo::gpu
