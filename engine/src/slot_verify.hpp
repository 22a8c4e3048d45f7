// Verification over a transport's fixed-size all-reduce (torch.distributed,
// MPI): bytes per rank grow with the keys new in this check, not with the
// number of ranks, and a check with nothing new is one all-reduce of one
// integer.
//
// Entries travel as hashes in slots. A round of all-reduces places every
// new key alone in a slot (slots holding two keys are split again with
// another salt); then, for each such key, every rank that has ever logged
// it contributes its value's hash, and a slot whose smallest and largest
// value differ names a key two ranks chose differently. Only those keys'
// texts are gathered, to write the same report as GroupAgreement::fold.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunelock/choice_log.hpp"
#include "tunelock/collective.hpp"
#include "tunelock/verify.hpp"

namespace tunelock::detail {

// What one rank keeps of a group between checks: the hashes of every entry
// it has sent (a key new on another rank is compared with them), the keys
// already reported, and whether any check failed. Every rank computes the
// same `conflicted` and `failed`, from the same all-reduced data.
struct SlotAgreement {
  std::unordered_map<std::uint64_t, std::uint64_t> sent;  // key hash -> value hash
  std::unordered_set<std::uint64_t> conflicted;           // reported once
  bool failed = false;
};

// One check. `fresh`: the hashes of this rank's entries since its last
// check in the group; `everything_sent`: every entry it has sent the group,
// this check's included (read only when a key conflicts, for its text).
VerifyResult verify_over_slots(Collective& group, std::span<const ChoiceHash> fresh,
                               const std::function<std::vector<ChoiceEntry>()>& everything_sent,
                               SlotAgreement& state);

}  // namespace tunelock::detail
