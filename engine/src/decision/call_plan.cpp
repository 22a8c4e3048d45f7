#include "tunelock/decision/call_plan.hpp"

namespace tunelock {

std::string_view to_string(FirstCall plan) {
  switch (plan) {
    case FirstCall::untouched:
      return "untouched";
    case FirstCall::single:
      return "single";
    case FirstCall::single_logged:
      return "single_logged";
    case FirstCall::pinned:
      return "pinned";
    case FirstCall::audited:
      return "audited";
    case FirstCall::consensus:
      return "consensus";
    case FirstCall::timed_logged:
      return "timed_logged";
    case FirstCall::timed_recorded:
      return "timed_recorded";
  }
  return "unknown";
}

FirstCall plan_first_call(const Policy& policy, const KernelId& kernel, std::size_t config_count) {
  // Megatron's story: out of scope or config-invariant kernels are left to
  // the autotuner; a single config has nothing to choose; pinned kernels are
  // never timed (audit times them too, after choosing); the rest are timed.
  const bool observed = policy.observes(kernel) && policy.intercepts();
  if (config_count <= 1) return observed ? FirstCall::single_logged : FirstCall::single;
  if (!observed) return FirstCall::untouched;
  switch (policy.effective_mode()) {
    case Mode::pinned:
      return FirstCall::pinned;
    case Mode::audit:
      return FirstCall::audited;
    case Mode::consensus:
      return FirstCall::consensus;
    case Mode::record:
      return FirstCall::timed_recorded;
    case Mode::automatic:
      break;
  }
  return FirstCall::timed_logged;
}

bool engine_chooses(FirstCall plan) {
  return plan == FirstCall::pinned || plan == FirstCall::audited || plan == FirstCall::consensus;
}

bool intercepts(FirstCall plan) {
  return plan != FirstCall::untouched && plan != FirstCall::single;
}

bool counts_calls(FirstCall plan) { return plan == FirstCall::audited; }

std::string_view enumerate_state(FirstCall plan) {
  switch (plan) {
    case FirstCall::pinned:
    case FirstCall::audited:
    case FirstCall::consensus:
      return "PINNED";
    case FirstCall::timed_logged:
    case FirstCall::timed_recorded:
      return "TIMED";
    default:
      return "UNPINNED";
  }
}

}  // namespace tunelock
