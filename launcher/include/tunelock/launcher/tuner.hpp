// Timed tuning: run every candidate on the call's real arguments (warm-up,
// repeats, median), with hooks so the timing runs leave the outputs as if
// one launch had happened. A candidate that throws is timed as infinite and
// reported once; when all fail, tuning fails with a clear error.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunelock/config.hpp"
#include "tunelock/launcher/backend.hpp"
#include "tunelock/notices.hpp"

namespace tunelock::launcher {

struct TuningOptions {
  int warmup = 1;   // untimed runs per candidate (caches, lazy init)
  int repeats = 5;  // timed runs per candidate; the median is kept
};

// One call, type-erased for tuning: how to run candidate i on this call's
// arguments, and which of those arguments are outputs to protect.
struct CallSite {
  std::function<void(std::size_t variant)> run;
  std::vector<NamedBuffer> reset_to_zero;  // zeroed before every timing run
  std::vector<NamedBuffer> restore;        // put back after every timing run
};

struct TuningResult {
  std::size_t best = 0;
  std::vector<std::optional<double>> median_ms;  // per candidate; empty = failed
};

// `what` names the kernel and key in messages ("pkg.mm [M=1]"); a failing
// candidate is reported once per `kernel` (qualified name) and config.
TuningResult tune(Backend& backend, const CallSite& site, std::span<const Config> configs,
                  const TuningOptions& options, const std::string& kernel, const std::string& what,
                  Notices& notices);

}  // namespace tunelock::launcher
