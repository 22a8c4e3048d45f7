// Cost of the timing-free decision: a table hit, a miss that falls to the
// cheapest candidate, and building a tuning key. These run on the first
// call per (kernel, shape); cached calls never reach them.
#include <benchmark/benchmark.h>

#include "tunelock/decision/selection.hpp"
#include "tunelock/model/tuning_key.hpp"

using namespace tunelock;

namespace {

std::vector<Config> eight_candidates() {
  std::vector<Config> out;
  for (std::int64_t m : {32, 64, 128, 256}) {
    for (int warps : {4, 8})
      out.push_back(make_config({{"BLOCK_M", m}, {"BLOCK_N", 64}, {"BLOCK_K", 32}}, warps, 3));
  }
  return out;
}

// 64 kernels x 32 keys, filed under bare names as Megatron records them,
// or under qualified names as tunelock's recorder does.
InMemoryTable realistic_table(const std::vector<Config>& candidates, std::string_view prefix = "") {
  InMemoryTable table("sm90");
  for (int k = 0; k < 64; ++k) {
    for (int s = 0; s < 32; ++s) {
      table.set(std::string(prefix) + "_kernel_" + std::to_string(k),
                "M=" + std::to_string(1024 * (s + 1)) + "|torch.bfloat16",
                TableEntry{candidates[static_cast<std::size_t>((k + s) % 8)]});
    }
  }
  return table;
}

const KernelId kKernel{"mamba_ssm.ops.triton.ssd", "_kernel_17"};

// Times kKernel's choice for `key` in a realistic table whose kernel names
// start with `name_prefix`. One call runs before the loop, so a miss's
// once-only warning is not timed.
void time_choice(benchmark::State& state, const std::string& name_prefix, const std::string& key) {
  const auto candidates = eight_candidates();
  const InMemoryTable table = realistic_table(candidates, name_prefix);
  Notices notices;
  const SelectionRules rules{"sm90", &table, {}, OnMiss::min_cost, &notices};
  deterministic_choice(kKernel, key, candidates, rules);
  for (auto _ : state)
    benchmark::DoNotOptimize(deterministic_choice(kKernel, key, candidates, rules));
}

void BM_ChoiceTableHit(benchmark::State& state) { time_choice(state, "", "M=8192|torch.bfloat16"); }
BENCHMARK(BM_ChoiceTableHit);

void BM_ChoiceTableHitQualified(benchmark::State& state) {
  time_choice(state, kKernel.module + ".", "M=8192|torch.bfloat16");
}
BENCHMARK(BM_ChoiceTableHitQualified);

void BM_ChoiceMissToCheapest(benchmark::State& state) {
  time_choice(state, "", "M=3|torch.float32");
}
BENCHMARK(BM_ChoiceMissToCheapest);

void BM_TuningKey(benchmark::State& state) {
  const std::vector<KeyArg> args{
      {"chunk_size", std::int64_t{128}}, {"nheads", std::int64_t{128}}, {"IS_CAUSAL", false}};
  const std::vector<std::string_view> dtypes{"torch.bfloat16", "torch.float32", "torch.float32",
                                             "torch.bfloat16"};
  std::string buffer;
  for (auto _ : state) {
    build_tuning_key(buffer, args, dtypes);
    benchmark::DoNotOptimize(buffer.data());
  }
}
BENCHMARK(BM_TuningKey);

}  // namespace

BENCHMARK_MAIN();
