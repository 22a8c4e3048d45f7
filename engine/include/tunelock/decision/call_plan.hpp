// What the first call of a kernel for a new key does under a policy: the
// one place the story of a call is decided. The driver (runtime/first_call.hpp)
// carries it out for every face: the C++ launcher (family_core.cpp), the
// Triton and Inductor adapters (python/tunelock, through the C ABI); a face
// reads what a plan means from engine_chooses/intercepts/counts_calls, never
// from its name.
#pragma once

#include <cstddef>
#include <string_view>

#include "tunelock/decision/policy.hpp"
#include "tunelock/model/kernel_id.hpp"

namespace tunelock {

enum class FirstCall {
  untouched,       // not observed: timed as the autotuner would, nothing logged
  single,          // one config: nothing to choose, not logged
  single_logged,   // one config, observed: logged once under key "*"
  pinned,          // the rules choose without a clock; the first call checks its bits
  audited,         // as pinned, then every live candidate timed and the bits compared
  consensus,       // as pinned until a check agrees on a winner; every candidate timed once
  timed_logged,    // timed as the autotuner would; the winner logged as timed
  timed_recorded,  // timed, audited for bits, the winner logged and recorded
};

// "untouched", "single", "single_logged", "pinned", "audited", "consensus",
// "timed_logged", "timed_recorded": how the C ABI names a plan.
std::string_view to_string(FirstCall plan);

// `config_count`: the kernel's declared configs (before any pruning).
FirstCall plan_first_call(const Policy& policy, const KernelId& kernel, std::size_t config_count);

// What a plan means for the face that carries it out, so no face compares
// plan or mode names: the engine chooses without a clock (pinned, audited,
// consensus), the kernel is intercepted at all (neither untouched nor
// single), and every call of a key is counted against its audit entry.
bool engine_chooses(FirstCall plan);
bool intercepts(FirstCall plan);
bool counts_calls(FirstCall plan);

// What `enumerate` says of a kernel under the plan: PINNED, TIMED or UNPINNED.
std::string_view enumerate_state(FirstCall plan);

}  // namespace tunelock
