// The first call of a kernel for a new key, told once for every face: the
// call plan, the decision and its evidence, the fastest equivalent, the
// bits check, the audit entry, the choice-log entry, the record and every
// message. A face (the C++ launcher; Triton and Inductor through the C
// ABI's tunelock_first_call and Python's tunelock.first_call, which keep
// these names) implements only a CallRunner: how to run and time one
// candidate on this call's arguments, and how to put those arguments back.
// The driver's other collaborators come through narrow ports
// (first_call_ports.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/decision/call_plan.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/model/kernel_id.hpp"
#include "tunelock/runtime/first_call_ports.hpp"

namespace tunelock {

class Runtime;

// One candidate's first rows, for batch invariance: run on only those rows
// of the call's inputs (`alone`), and the same rows of a run on all of them
// (`inside`). Texts equal exactly when the rows' bits are, comparable
// across candidates of one call.
struct FirstRows {
  std::string alone;
  std::string inside;
};

// What the driver asks of a face for one call. Candidates are numbered as
// in FirstCallRequest::candidates.
class CallRunner {
 public:
  virtual ~CallRunner() = default;

  // Median milliseconds of candidate `i`, timed as the face's autotuner
  // times (warm-up, repeats), its declared outputs reset before each run.
  // Throws when the candidate fails to run.
  virtual double time(std::size_t i) = 0;

  // A shorter timing of candidate `i`, for choosing among configs that give
  // the same bits (TUNELOCK_EQUIVALENT=timed): a close call there costs a
  // little speed, never bits, so a few milliseconds of repeats suffice
  // where an autotuner spends a hundred. By default, time(i).
  virtual double time_briefly(std::size_t i) { return time(i); }

  // Whether the call declares outputs a bits check can compare. Without
  // them, run_outputs is never called.
  virtual bool has_outputs() const = 0;

  // One run of candidate `i` from the call's own inputs (or, after
  // use_second_input, from the second input): a text equal for two runs
  // exactly when every output bit is equal (the bytes, or a digest of
  // them, with shapes and types). Throws when the candidate fails to run.
  virtual std::string run_outputs(std::size_t i) = 0;

  // Overwrites the call's floating-point inputs with a second input, for
  // the bit classes; false when the call offers none.
  virtual bool use_second_input() = 0;

  // Leaves every buffer of the call as it came in: the real launch follows.
  virtual void put_back() = 0;

  // Whether the caller's stream is being captured into a graph: nothing
  // may run twice there, so nothing is timed or checked.
  virtual bool capturing() const = 0;

  // Whether candidates can run now. False for a choice made while a
  // program compiles (Inductor's templates, its kernels before their first
  // launch): a pinned plan then decides and logs only (no bits check, no
  // timed equivalents), and time(i) hands back what the face's own
  // autotuner measured, for a record or an audit.
  virtual bool runs_candidates() const { return true; }

  // Batch invariance (FirstCallRequest::batch_dim): how many rows the call
  // has along its batch dim, or 0 when it cannot run on fewer of them.
  virtual std::int64_t batch_rows() const { return 0; }

  // Candidate `i` on the first `rows` rows (1 <= rows <= batch_rows()),
  // alone and inside the full call; the call's buffers are left for
  // put_back. Throws when the candidate fails to run; by default, always
  // (a runner without batch_rows is never asked).
  virtual FirstRows run_first_rows(std::size_t i, std::int64_t rows);
};

struct FirstCallRequest {
  std::string arch;
  KernelId kernel;
  std::string key;                     // the tuning key's text
  std::span<const Config> candidates;  // the live ones (after any pruning)
  std::size_t declared = 0;            // configs the kernel declares (the plan's input); 0: all
  // Signatures of candidates the kernel itself declares racy.
  std::span<const std::string> nondeterministic_variants = {};
  // What the face calls its candidates in the enumerate line ("configs",
  // "variants").
  std::string_view candidates_are = "configs";
  // The candidate the kernel's own untimed heuristic launches, which
  // on_miss min_cost takes instead of the cheapest (Inductor's default).
  std::optional<std::size_t> own_default = std::nullopt;
  // The identity of the kernel's code (table.hpp's KernelIdentities), empty
  // when the face cannot say: recorded with its timings and compared with
  // the table's (Runtime::note_identity).
  std::string_view identity = {};
  // The key argument that counts the call's independent rows ("M"), when
  // the kernel declares one: under TUNELOCK_BATCH_INVARIANT, record runs the
  // invariance audit over it and pinned checks row 0 against a one-row call.
  std::string_view batch_dim = {};
};

struct FirstCallOutcome {
  FirstCall plan = FirstCall::untouched;
  std::size_t launched = 0;             // the candidate to launch for this key from now on
  std::optional<Decision> decision;     // pinned and audited: the rules' answer and its evidence
  std::optional<bool> repeats;          // the launched config's bits check, when it ran
  std::optional<std::size_t> audit_id;  // audited: the entry to count calls against
  bool timed = false;                   // the launched config won on the clock
  // Ask again at the next call instead of caching `launched`: a consensus
  // key whose first call was inside a graph capture (not timed yet), or
  // whose agreed winner a capture must not switch to.
  bool provisional = false;
};

// Carries out the plan for one new key (see call_plan.hpp). Decides through
// `ports.tables`; logs, records and files audit entries through
// `ports.outputs`; leaves the call's buffers as they came in, also when it
// throws. Throws Error for a timed first call inside a graph capture, when
// every timed candidate fails, and for changed bits under verify_strict;
// TableMissError under on_miss = error.
FirstCallOutcome run_first_call(const FirstCallPorts& ports, const FirstCallRequest& request,
                                CallRunner& runner);

// The same through the process runtime's ports, under its installed policy.
FirstCallOutcome run_first_call(Runtime& runtime, const FirstCallRequest& request,
                                CallRunner& runner);

// The enumerate line of a kernel (PINNED, TIMED or UNPINNED, with its count
// of candidates), once per policy, when the policy asks for it.
void enumerate_once(const Policy& policy, Notices& notices, const KernelId& kernel, FirstCall plan,
                    std::size_t count, std::string_view candidates_are = "configs");
void enumerate_once(Runtime& runtime, const KernelId& kernel, FirstCall plan, std::size_t count,
                    std::string_view candidates_are = "configs");

}  // namespace tunelock
