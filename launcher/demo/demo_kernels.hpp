// Host kernels whose configs change the bits of the result, the way GPU
// tilings do: a block-size-dependent reduction tree and a split-K matmul
// whose partial sums are added in a fixed order. Every kernel reduces in a
// fixed order (no threads, no atomics), so one config always gives the
// same bits, and two configs usually do not.
#pragma once

#include <cstdint>
#include <vector>

#include "tunelock/launcher/kernel_family.hpp"

namespace tunelock::demo {

// out[0] = sum of x[0..n), as per-block partial sums added block by block.
using ReduceFamily = launcher::KernelFamily<const float*, float*, int>;
// C += A (MxK) * B (KxN), row-major; K split into SPLIT_K chunks whose
// partial sums are added in chunk order. Accumulates, so tuning runs need
// C reset to zero.
using MatmulFamily = launcher::KernelFamily<const float*, const float*, float*, int, int, int>;
// x[i] /= sqrt(mean(x^2) + eps): one variant only.
using NormFamily = launcher::KernelFamily<float*, int>;
// w[i] -= lr * grad[i]. Its configs give the same bits at different speeds:
// PASSES=N computes the update N times over (as a redundant recomputation
// on a GPU would), so a table pinning a slow one costs time, not bits —
// what `TUNELOCK_MODE=audit` measures and record finds equivalent.
using UpdateFamily = launcher::KernelFamily<float*, const float*, float, int>;

std::vector<ReduceFamily::Variant> reduce_variants();
ReduceFamily::Hooks reduce_hooks();
std::vector<MatmulFamily::Variant> matmul_variants();
std::vector<NormFamily::Variant> norm_variants();
std::vector<UpdateFamily::Variant> update_variants();

MatmulFamily::Hooks matmul_hooks();
UpdateFamily::Hooks update_hooks();

}  // namespace tunelock::demo
