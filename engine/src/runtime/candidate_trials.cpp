#include "runtime/candidate_trials.hpp"

#include <chrono>
#include <exception>

#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"

namespace tunelock::detail {
namespace {

// Puts the call's buffers back when the trials end, also when they throw.
class PutBackAtExit {
 public:
  explicit PutBackAtExit(CallRunner& runner) : runner_(runner) {}
  ~PutBackAtExit() {
    try {
      runner_.put_back();
    } catch (const std::exception& e) {
      logger().error("could not put a call's buffers back after its trials: {}", e.what());
    }
  }
  PutBackAtExit(const PutBackAtExit&) = delete;
  PutBackAtExit& operator=(const PutBackAtExit&) = delete;

 private:
  CallRunner& runner_;
};

// Two runs from identical inputs: the first run's outputs, or nullopt when
// any bit differs.
std::optional<std::string> repeated_outputs(CallRunner& runner, std::size_t i) {
  std::string first = runner.run_outputs(i);
  if (runner.run_outputs(i) != first) return std::nullopt;
  return first;
}

// Numbers positions by their outputs: the same number, the same bits on
// every input compared. Positions without outputs are not classed.
using Outputs = std::vector<std::string>;  // one run's outputs per input compared

std::vector<std::optional<int>> number_classes(const std::vector<std::optional<Outputs>>& bits) {
  std::vector<std::optional<int>> out(bits.size());
  int next = 0;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (!bits[i]) continue;
    for (std::size_t j = 0; j < i && !out[i]; ++j)
      if (out[j] && *bits[j] == *bits[i]) out[i] = out[j];
    if (!out[i]) out[i] = next++;
  }
  return out;
}

std::optional<std::size_t> fastest(const Trials& trials, bool audit) {
  std::optional<std::size_t> best;
  for (int pass = audit ? 0 : 1; pass < 2 && !best; ++pass) {
    for (std::size_t j = 0; j < trials.median_ms.size(); ++j) {
      if (!trials.median_ms[j] || (pass == 0 && trials.nondeterministic[j])) continue;
      if (!best || *trials.median_ms[j] < *trials.median_ms[*best]) best = j;
    }
  }
  return best;
}

}  // namespace

std::optional<bool> repeats_its_bits(CallRunner& runner, std::size_t i) {
  if (!runner.has_outputs()) return std::nullopt;
  const PutBackAtExit put_back(runner);
  return repeated_outputs(runner, i).has_value();
}

Trials run_trials(CallRunner& runner, std::span<const Config> candidates,
                  std::span<const std::size_t> which, const TrialNames& names, Notices& notices,
                  bool audit, TrialTiming timing) {
  using Clock = std::chrono::steady_clock;
  const PutBackAtExit put_back(runner);
  const bool compares = audit && runner.has_outputs();
  if (audit && !compares && notices.first("unaudited|" + names.qualified)) {
    if (runner.runs_candidates()) {
      logger().warn(
          "{} declares no output buffers (reset_to_zero, restore or outputs hooks): the "
          "record-mode audit cannot compare its candidates' bits",
          names.qualified);
    } else {
      logger().info(
          "{} is chosen while the program compiles, from its autotuner's own timings: its "
          "candidates' bits are not audited (the output bits of the whole run are the check)",
          names.qualified);
    }
  }
  Trials trials;
  trials.median_ms.assign(which.size(), std::nullopt);
  trials.nondeterministic.assign(which.size(), false);
  std::vector<std::optional<Outputs>> bits(which.size());  // each repeating candidate's
  std::string last_error;
  const auto start = Clock::now();
  auto last_progress = start;
  for (std::size_t j = 0; j < which.size(); ++j) {
    const std::size_t i = which[j];
    const std::string config = signature(candidates[i]);
    try {
      trials.median_ms[j] = timing == TrialTiming::brief ? runner.time_briefly(i) : runner.time(i);
      std::optional<std::string> repeated;
      if (compares) repeated = repeated_outputs(runner, i);
      if (repeated) bits[j] = Outputs{std::move(*repeated)};
      if (compares && !repeated) {
        trials.nondeterministic[j] = true;
        if (notices.first("nondeterministic|" + names.qualified + "|" + config)) {
          logger().warn(
              "config {} of {} gave different bits in two runs on identical inputs: flagged as "
              "nondeterministic, never pinned",
              config, names.what);
        }
      }
    } catch (const std::exception& e) {
      trials.median_ms[j] = std::nullopt;
      bits[j].reset();
      last_error = e.what();
      if (notices.first("failed|" + names.qualified + "|" + config))
        logger().warn("candidate {} ({}) of {} failed: {}; timed as infinite", i, config,
                      names.what, e.what());
    }
    const auto now = Clock::now();
    if (now - last_progress > std::chrono::seconds(2)) {  // long tuning: show it is alive
      logger().info("tuning {}: {}/{} candidates, {:.1f} s", names.what, j + 1, which.size(),
                    std::chrono::duration<double>(now - start).count());
      last_progress = now;
    }
  }
  if (compares) {
    std::size_t repeating = 0;
    for (const auto& b : bits) repeating += b.has_value();
    // A second input tells apart candidates that agree on the call's own
    // inputs by chance (zeros, small sums); only worth it for two or more.
    if (repeating > 1 && runner.use_second_input()) {
      for (std::size_t j = 0; j < which.size(); ++j)
        if (bits[j]) bits[j]->push_back(runner.run_outputs(which[j]));
    }
    trials.bit_class = number_classes(bits);
  }
  const std::optional<std::size_t> best = fastest(trials, audit);
  if (!best) {
    throw Error("every candidate of " + names.what + " failed to run (" +
                std::to_string(which.size()) + " tried); last error: " + last_error);
  }
  trials.best = *best;
  return trials;
}

}  // namespace tunelock::detail
