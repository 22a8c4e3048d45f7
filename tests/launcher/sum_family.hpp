// A host kernel family whose configs differ in bits and speed, for tests
// of the numerics features: variants 0 and 1 add in order (0 slow, 1 the
// fastest), 2 adds backwards (slow, other bits), 3 adds in order and counts
// negatives twice (slow; other bits only on the second input). Run is one
// rank's runtime, launcher and family under a policy.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/tables/table_json.hpp"

namespace tunelock::testing {

using namespace tunelock::launcher;

using SumFamily = KernelFamily<std::vector<float>*, float*>;

struct Launches {
  std::array<std::atomic<int>, 4> of{};
};

inline float in_order(const std::vector<float>& x) {
  float total = 0;
  for (float v : x) total += v;
  return total;
}

inline float backwards(const std::vector<float>& x) {
  float total = 0;
  for (auto v = x.rbegin(); v != x.rend(); ++v) total += *v;
  return total;
}

// 0 and 1 add in order (1 the fastest, 0 slow); 2 adds backwards; 3 adds in
// order and then one more ulp-sized term that is 0 for the call's inputs
// (all positive) but not for the second input, which only the second input
// tells apart from 0 and 1.
inline std::vector<SumFamily::Variant> sums(const std::shared_ptr<Launches>& launches) {
  auto counted = [launches](int i, auto f, int sleep_ms) {
    return [launches, i, f, sleep_ms](std::vector<float>* x, float* out) {
      ++launches->of[static_cast<std::size_t>(i)];
      if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      *out = f(*x);
    };
  };
  auto sneaky = [](const std::vector<float>& x) {
    float total = in_order(x);
    for (float v : x)
      if (v < 0) total += v;  // counts negatives twice
    return total;
  };
  return {{make_config({{"BLOCK", 1}}, 1, 1), counted(0, in_order, 3)},
          {make_config({{"BLOCK", 8}}, 4, 2), counted(1, in_order, 0)},
          {make_config({{"BLOCK", 16}}, 4, 2), counted(2, backwards, 3)},
          {make_config({{"BLOCK", 32}}, 4, 2), counted(3, sneaky, 3)}};
}

inline SumFamily::Hooks hooks(bool with_second_input) {
  SumFamily::Hooks h;
  h.outputs = [](std::vector<float>*, float* out) {
    return std::vector<NamedBuffer>{{"out", {out, sizeof *out}}};
  };
  if (with_second_input) {
    h.inputs = [](std::vector<float>* x, float*) {
      return std::vector<NamedBuffer>{{"x", {x->data(), x->size() * sizeof(float)}}};
    };
    h.second_input = [](std::vector<float>* x, float*) {
      std::uint64_t seed = 7;
      for (float& v : *x) {  // signs and exponents spread wide
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v = std::ldexp((seed >> 63) ? -1.0f : 1.0f, static_cast<int>((seed >> 32) % 40) - 20);
      }
    };
  }
  return h;
}

// Positive values whose in-order sum (each 1 lost next to 1e8) and
// backwards sum (the 1s first: 1e8 + 8) differ.
inline std::vector<float> inputs() {
  return {1e8f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
}

struct Run {
  Notices notices;
  Runtime runtime{0, notices};
  HostBackend backend;
  Launcher launcher{backend, runtime, TuningOptions{1, 3}};
  std::shared_ptr<Launches> launches = std::make_shared<Launches>();
  SumFamily sum;

  Run(const Policy& policy, bool second_input = true)
      : sum((runtime.install(policy), launcher), {"t.ops", "sum"}, {"N"}, sums(launches),
            hooks(second_input)) {}
  float call(std::int64_t n = 9) {
    std::vector<float> x = inputs();
    float out = -1;
    sum({n}, {"f32"}, &x, &out);
    return out;
  }
};

inline std::filesystem::path record_and_merge(const TempDir& dir, bool second_input) {
  Policy record;
  record.mode = Mode::record;
  record.record_path = (dir.path() / "rec").string();
  {
    Run run(record, second_input);
    run.call();
    run.runtime.flush();
  }
  const MergeResult merged =
      merge_records(load_record_files({dir.path() / "rec.rank0.json"}), "", "");
  std::filesystem::create_directories(dir.path() / "tables");
  write_file_atomically(dir.path() / "tables" / "host.json", table_to_json(*merged.table));
  return dir.path() / "tables";
}

inline Policy pinned(const std::filesystem::path& tables, Equivalent equivalent) {
  Policy p;
  p.mode = Mode::pinned;
  p.table_path = {tables.string()};
  p.on_miss = OnMiss::error;
  p.equivalent = equivalent;
  return p;
}

}  // namespace tunelock::testing
