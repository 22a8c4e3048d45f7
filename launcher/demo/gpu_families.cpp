#include "gpu_families.hpp"

#include "gpu_kernels.hpp"

namespace tunelock::demo::gpu {

std::vector<GemmFamily::Variant> gemm_variants() {
  auto split_k = [](int tile, int split) {
    return
        [tile, split](cudaStream_t s, const float* a, const float* b, float* c, float* work, int m,
                      int n, int k) { gemm_splitk(s, tile, split, a, b, c, work, m, n, k); };
  };
  auto atomic = [](int tile, int split) {
    return [tile, split](cudaStream_t s, const float* a, const float* b, float* c, float*, int m,
                         int n, int k) { gemm_atomic(s, tile, split, a, b, c, m, n, k); };
  };
  return {
      {make_config({{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"SPLIT_K", 1}}, 8, 1), split_k(16, 1)},
      {make_config({{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"SPLIT_K", 4}}, 8, 2), split_k(16, 4)},
      {make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"SPLIT_K", 1}}, 32, 1), split_k(32, 1)},
      {make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"SPLIT_K", 2}}, 32, 2), split_k(32, 2)},
      {make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"SPLIT_K", kMaxSplit}}, 32, 3),
       split_k(32, kMaxSplit)},
      {make_config({{"ATOMIC", 1}, {"BLOCK_M", 32}, {"BLOCK_N", 32}, {"SPLIT_K", kMaxSplit}}, 32,
                   4),
       atomic(32, kMaxSplit)},
  };
}

GemmFamily::Hooks gemm_hooks() {
  GemmFamily::Hooks hooks;
  hooks.outputs = [](cudaStream_t, const float*, const float*, float* c, float*, int m, int n,
                     int) {
    return std::vector<launcher::NamedBuffer>{
        {"C", {c, static_cast<std::size_t>(m) * n * sizeof(float)}}};
  };
  return hooks;
}

std::vector<RowSumFamily::Variant> row_sum_variants() {
  std::vector<RowSumFamily::Variant> out;
  for (int block : {64, 128, 256, 512, 1024}) {
    out.push_back({make_config({{"BLOCK_SIZE", block}}, block / 32, 1),
                   [block](cudaStream_t s, const float* x, float* sums, int rows, int cols) {
                     row_sum(s, block, x, sums, rows, cols);
                   }});
  }
  return out;
}

RowSumFamily::Hooks row_sum_hooks() {
  RowSumFamily::Hooks hooks;
  hooks.outputs = [](cudaStream_t, const float*, float* sums, int rows, int) {
    return std::vector<launcher::NamedBuffer>{
        {"out", {sums, static_cast<std::size_t>(rows) * sizeof(float)}}};
  };
  return hooks;
}

std::vector<SgdFamily::Variant> sgd_variants() {
  return {{make_config({{"BLOCK_SIZE", 256}}, 8, 1), sgd_update}};
}

}  // namespace tunelock::demo::gpu
