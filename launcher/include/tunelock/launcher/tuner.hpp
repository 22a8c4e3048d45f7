// Timed tuning: run every candidate on the call's real arguments (warm-up,
// repeats, median), with hooks so the timing runs leave the outputs as if
// one launch had happened. A candidate that throws is timed as infinite and
// reported once; when all fail, tuning fails with a clear error.
//
// The self-determinism audit (record mode) also runs each candidate twice
// more on identical inputs and compares its outputs bit for bit: a config
// whose bits differ between two runs of itself (float atomics, races) is
// flagged, and never wins while a config that repeats its bits exists. The
// others are sorted into bit classes: candidates whose outputs are
// identical on the call's inputs and on a second input (when the call
// offers one) are interchangeable for the bits they produce.
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
  // Runs candidate `variant` on this call's arguments, on the backend's
  // timing stream where the family takes a stream.
  std::function<void(std::size_t variant)> run;
  std::vector<NamedBuffer> reset_to_zero;  // zeroed before every timing run
  std::vector<NamedBuffer> restore;        // put back after every timing run
  std::vector<NamedBuffer> outputs;        // only compared by the audit
  bool capturing = false;                  // the caller's stream is being captured
  // For the audit's bit classes, optional: the input buffers `second_input`
  // overwrites (saved before, put back after), and the fill itself.
  std::vector<NamedBuffer> inputs;
  std::function<void()> second_input;
};

struct TuningResult {
  std::size_t best = 0;
  std::vector<std::optional<double>> median_ms;  // per candidate; empty = failed
  std::vector<bool> nondeterministic;            // per candidate; audited runs only
  // Per candidate, audited runs only: candidates with one number gave the
  // same bits (on the call's inputs and, where the call offers one, a
  // second input); empty for failed and nondeterministic candidates.
  std::vector<std::optional<int>> bit_class;
};

// The first pinned call's check: candidate `index` run twice from identical
// inputs (every declared buffer put back before each run, as before the
// call), its outputs compared bit for bit, and the buffers left as they
// were before the call (the real launch follows). nullopt when the call
// declares no buffers to compare.
std::optional<bool> repeats_its_bits(Backend& backend, const CallSite& site, std::size_t index);

// `what` names the kernel and key in messages ("pkg.mm [M=1]"); a failing
// candidate is reported once per `kernel` (qualified name) and config.
// `audit` turns on the self-determinism audit.
TuningResult tune(Backend& backend, const CallSite& site, std::span<const Config> configs,
                  const TuningOptions& options, const std::string& kernel, const std::string& what,
                  Notices& notices, bool audit = false);

}  // namespace tunelock::launcher
