// Overhead of a cached launch through a kernel family (key -> cache hit ->
// launch) against calling the same host function directly, in one run.
#include <benchmark/benchmark.h>

#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"

using namespace tunelock;

namespace {

// Small enough that the dispatch cost shows; opaque enough not to vanish.
__attribute__((noinline)) void axpy(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] += 0.5f * x[i];
}

void BM_DirectCall(benchmark::State& state) {
  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  for (auto _ : state) {
    axpy(x.data(), y.data(), 16);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_DirectCall);

// A pinned runtime and a two-variant family over axpy on the host backend.
struct PinnedAxpy {
  Notices notices;
  Runtime runtime{0, notices};
  launcher::HostBackend backend;
  launcher::Launcher launcher{backend, runtime};
  launcher::KernelFamily<const float*, float*, int> family{
      launcher,
      {"bench.ops", "axpy"},
      {"N"},
      {{make_config({{"BLOCK", 16}}), axpy}, {make_config({{"BLOCK", 32}}), axpy}}};
  std::vector<float> x = std::vector<float>(16, 1.0f), y = std::vector<float>(16, 0.0f);

  PinnedAxpy() {
    Policy pinned;
    pinned.mode = Mode::pinned;
    runtime.install(pinned);
  }
  void call(std::int64_t n) { family({n}, {"f32"}, x.data(), y.data(), 16); }
};

void BM_CachedFamilyCall(benchmark::State& state) {
  PinnedAxpy bench;
  bench.call(16);  // the one decision
  for (auto _ : state) {
    bench.call(16);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_CachedFamilyCall);

// Every call with another key than the last (four shapes in turn): the
// cache's last-hit shortcut never applies, so this is the hashed lookup.
void BM_CachedFamilyCallKeysInTurn(benchmark::State& state) {
  PinnedAxpy bench;
  for (std::int64_t n = 13; n <= 16; ++n) bench.call(n);
  std::int64_t n = 13;
  for (auto _ : state) {
    bench.call(n);
    n = n == 16 ? 13 : n + 1;
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_CachedFamilyCallKeysInTurn);

// A key's first pinned call: the rules' choice and, with the bits check
// (Arg 1, the default policy), two more runs of the pinned config with its
// declared output saved and compared; Arg 0 is TUNELOCK_CHECK_BITS=off.
// A new key every iteration (4 KiB output).
void BM_FirstPinnedCall(benchmark::State& state) {
  Notices notices;
  Runtime runtime{0, notices};
  launcher::HostBackend backend;
  launcher::Launcher launcher{backend, runtime};
  using Family = launcher::KernelFamily<const float*, float*, int>;
  Family::Hooks hooks;
  hooks.outputs = [](const float*, float* y, int n) {
    return std::vector<launcher::NamedBuffer>{{"y", {y, n * sizeof(float)}}};
  };
  Family family{launcher,
                {"bench.ops", "axpy"},
                {"N"},
                {{make_config({{"BLOCK", 16}}), axpy}, {make_config({{"BLOCK", 32}}), axpy}},
                hooks};
  Policy pinned;
  pinned.mode = Mode::pinned;
  pinned.check_bits = state.range(0) != 0;
  runtime.install(pinned);
  std::vector<float> x(1024, 1.0f), y(1024, 0.0f);
  std::int64_t key = 0;
  for (auto _ : state) {
    family({++key}, {"f32"}, x.data(), y.data(), 1024);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_FirstPinnedCall)->ArgName("check_bits")->Arg(0)->Arg(1)->Iterations(20000);

}  // namespace

BENCHMARK_MAIN();
