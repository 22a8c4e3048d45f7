// Running a call's candidates through a face's CallRunner: timed as the
// autotuner times them, with record mode's self-determinism audit (two runs
// of each on identical inputs, then bit classes on a second input), and the
// first pinned call's bits check. Private to the first-call driver.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunelock/base/notices.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/runtime/first_call.hpp"

namespace tunelock::detail {

struct Trials {
  std::size_t best = 0;                          // position in `which`
  std::vector<std::optional<double>> median_ms;  // per position; empty = failed
  std::vector<bool> nondeterministic;            // per position; audited runs only
  // Per position, audited runs only: one number, the same bits on the
  // call's inputs and (where the call offers one) a second input.
  std::vector<std::optional<int>> bit_class;
};

// Names the call in messages: "pkg.mm [M=1]"; `qualified` keys the
// once-per-kernel notices.
struct TrialNames {
  std::string qualified;
  std::string what;
};

// Times candidates[which[j]] for each j; with `audit`, runs each twice
// more and sorts the repeating ones into bit classes. The fastest that ran
// (with an audit, the fastest that also repeated, when one did) is `best`;
// Error when every one failed. Leaves the call's buffers as it found them.
// How each candidate is timed: as the face's autotuner times, or briefly
// (CallRunner::time_briefly, among configs known to give the same bits).
enum class TrialTiming { full, brief };

Trials run_trials(CallRunner& runner, std::span<const Config> candidates,
                  std::span<const std::size_t> which, const TrialNames& names, Notices& notices,
                  bool audit, TrialTiming timing = TrialTiming::full);

// Two runs of candidate `i` from the call's inputs, compared: nullopt when
// the call declares nothing to compare.
std::optional<bool> repeats_its_bits(CallRunner& runner, std::size_t i);

}  // namespace tunelock::detail
