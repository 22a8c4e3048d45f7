// What the demo's host and GPU loops share: options, deterministic inputs,
// the verification group, and the lines a reproducibility check compares.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunelock/runtime/runtime.hpp"
#include "tunelock/verify/collective.hpp"

namespace tunelock::demo {

struct Options {
  std::string backend = "host";
  int steps = 4;
  int m = 0, n = 0, k = 0;  // 0: the backend's default shape
  std::string manifest;
  // Each rank's clock favours another matmul config, as noisy ranks' clocks
  // do (host backend): rank 0 config 1, the others config 2.
  bool skew_timings = false;
  // Every step starts from the same weights, so a step's bits depend only
  // on the configs it launched; each step prints its weights' checksum.
  bool hold_weights = false;
};

// Deterministic inputs on every platform: a fixed LCG, no library distributions.
std::vector<float> pseudo_random(std::size_t n, std::uint64_t seed);

// The world group over UCX when verification is on, else a group of one
// (a rank run alone with verification off never waits for peers).
std::unique_ptr<Collective> make_group(bool verifying);

void print_start(const Runtime& runtime);
void print_step(Runtime& runtime, Collective& group, int step, double loss);
// "choices: N, digest D" and "checksum C" over `bytes` (the trained weights).
void print_end(const Runtime& runtime, const void* bytes, std::size_t size);

int run_host(const Options& options);
int run_cuda(const Options& options);

}  // namespace tunelock::demo
