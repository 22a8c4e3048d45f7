#include "demo_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include <cmath>

namespace tunelock::demo {
namespace {

template <int kBlock>
void reduce_sum(const float* x, float* out, int n) {
  float total = 0.0f;
  for (int start = 0; start < n; start += kBlock) {
    float partial = 0.0f;
    const int end = std::min(n, start + kBlock);
    for (int i = start; i < end; ++i) partial += x[i];
    total += partial;
  }
  out[0] = total;
}

template <int kBlockM, int kBlockN, int kSplitK>
void matmul_splitk(const float* a, const float* b, float* c, int m, int n, int k) {
  const int chunk = (k + kSplitK - 1) / kSplitK;
  std::vector<float> partial(static_cast<std::size_t>(kBlockM) * kBlockN);
  for (int i0 = 0; i0 < m; i0 += kBlockM) {
    for (int j0 = 0; j0 < n; j0 += kBlockN) {
      const int i1 = std::min(m, i0 + kBlockM), j1 = std::min(n, j0 + kBlockN);
      for (int s = 0; s < kSplitK; ++s) {  // chunks in a fixed order
        const int k0 = s * chunk, k1 = std::min(k, k0 + chunk);
        std::fill(partial.begin(), partial.end(), 0.0f);
        for (int i = i0; i < i1; ++i)
          for (int kk = k0; kk < k1; ++kk) {
            const float av = a[static_cast<std::size_t>(i) * k + kk];
            float* row = &partial[static_cast<std::size_t>(i - i0) * kBlockN];
            const float* brow = &b[static_cast<std::size_t>(kk) * n];
            for (int j = j0; j < j1; ++j) row[j - j0] += av * brow[j];
          }
        for (int i = i0; i < i1; ++i)
          for (int j = j0; j < j1; ++j)
            c[static_cast<std::size_t>(i) * n + j] +=
                partial[static_cast<std::size_t>(i - i0) * kBlockN + (j - j0)];
      }
    }
  }
}

void rms_normalize(float* x, int n) {
  double squares = 0;
  for (int i = 0; i < n; ++i) squares += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(squares / n + 1e-6));
  for (int i = 0; i < n; ++i) x[i] *= scale;
}

// Each pass computes the whole update from the same w into a scratch
// buffer; the last is copied back: N passes, one result, N times the work.
template <int Passes>
void sgd_update(float* w, const float* grad, float lr, int n) {
  thread_local std::vector<float> next;
  next.resize(static_cast<std::size_t>(n));
  for (int pass = 0; pass < Passes; ++pass)
    for (int i = 0; i < n; ++i) next[static_cast<std::size_t>(i)] = w[i] - lr * grad[i];
  std::copy(next.begin(), next.end(), w);
}

}  // namespace

std::vector<UpdateFamily::Variant> update_variants() {
  return {{make_config({{"PASSES", 1}}, 4, 1), sgd_update<1>},
          {make_config({{"PASSES", 4}}, 4, 1), sgd_update<4>}};
}

UpdateFamily::Hooks update_hooks() {
  UpdateFamily::Hooks hooks;
  // In place: timing and the bits audit put w back after each run.
  hooks.restore = [](float* w, const float*, float, int n) {
    return std::vector<launcher::NamedBuffer>{
        {"w", {w, static_cast<std::size_t>(n) * sizeof(float)}}};
  };
  // Element i of w depends on w[i] and grad[i] only: every element is a row.
  hooks.batch_dim = "N";
  hooks.batch_rows = [](float*, const float*, float, int n) { return std::int64_t{n}; };
  hooks.first_rows = [](std::int64_t rows, float* w, const float* grad, float lr, int) {
    return std::tuple<float*, const float*, float, int>(w, grad, lr, static_cast<int>(rows));
  };
  hooks.row_outputs = [](std::int64_t rows, float* w, const float*, float, int) {
    return std::vector<launcher::NamedBuffer>{
        {"w", {w, static_cast<std::size_t>(rows) * sizeof(float)}}};
  };
  return hooks;
}

std::vector<ReduceFamily::Variant> reduce_variants() {
  return {{make_config({{"BLOCK_SIZE", 64}}, 2, 1), reduce_sum<64>},
          {make_config({{"BLOCK_SIZE", 256}}, 4, 1), reduce_sum<256>},
          {make_config({{"BLOCK_SIZE", 1024}}, 8, 1), reduce_sum<1024>},
          {make_config({{"BLOCK_SIZE", 4096}}, 8, 2), reduce_sum<4096>}};
}

std::vector<MatmulFamily::Variant> matmul_variants() {
  return {{make_config({{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"SPLIT_K", 1}}, 4, 2),
           matmul_splitk<16, 16, 1>},
          {make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"SPLIT_K", 2}}, 4, 3),
           matmul_splitk<32, 32, 2>},
          {make_config({{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"SPLIT_K", 4}}, 8, 3),
           matmul_splitk<64, 64, 4>},
          {make_config({{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"SPLIT_K", 8}}, 4, 4),
           matmul_splitk<16, 64, 8>}};
}

std::vector<NormFamily::Variant> norm_variants() {
  return {{make_config({{"BLOCK_SIZE", 1024}}, 4, 1), rms_normalize}};
}

ReduceFamily::Hooks reduce_hooks() {
  ReduceFamily::Hooks hooks;
  // The sum it writes: what the bits checks compare (record mode's audit,
  // the first pinned call per key).
  hooks.outputs = [](const float*, float* out, int) {
    return std::vector<launcher::NamedBuffer>{{"out", {out, sizeof(float)}}};
  };
  return hooks;
}

MatmulFamily::Hooks matmul_hooks() {
  MatmulFamily::Hooks hooks;
  hooks.reset_to_zero = [](const float*, const float*, float* c, int m, int n, int) {
    return std::vector<launcher::NamedBuffer>{
        {"C", {c, static_cast<std::size_t>(m) * n * sizeof(float)}}};
  };
  // Row i of C depends on row i of A only; A and C are row-major, so the
  // first rows of a call are the same buffers with a smaller M.
  hooks.batch_dim = "M";
  hooks.batch_rows = [](const float*, const float*, float*, int m, int, int) {
    return std::int64_t{m};
  };
  hooks.first_rows = [](std::int64_t rows, const float* a, const float* b, float* c, int, int n,
                        int k) {
    return std::tuple<const float*, const float*, float*, int, int, int>(
        a, b, c, static_cast<int>(rows), n, k);
  };
  hooks.row_outputs = [](std::int64_t rows, const float*, const float*, float* c, int, int n, int) {
    return std::vector<launcher::NamedBuffer>{
        {"C", {c, static_cast<std::size_t>(rows) * n * sizeof(float)}}};
  };
  return hooks;
}

}  // namespace tunelock::demo
