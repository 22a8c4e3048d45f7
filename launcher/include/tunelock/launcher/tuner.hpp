// One call as the launcher's tuning sees it: how to run candidate i on the
// call's real arguments, and which of those arguments are outputs to
// protect and compare. The engine's first-call driver (first_call.hpp)
// says what to run: timing, the self-determinism audit, the bits check;
// the launcher's runner (backend_runner.cpp) runs it on a Backend.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tunelock/launcher/backend.hpp"

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
  // Batch invariance, optional: the call's rows along its batch dim, a run
  // of candidate `variant` on only the first `rows` of them, and the output
  // bytes of the first `rows` rows (what the invariance audit compares).
  std::int64_t batch_rows = 0;
  std::function<void(std::size_t variant, std::int64_t rows)> run_rows;
  std::function<std::vector<NamedBuffer>(std::int64_t rows)> row_outputs;
};

}  // namespace tunelock::launcher
