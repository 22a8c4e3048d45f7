// Verification over a transport's fixed-size all-reduce (torch.distributed,
// MPI): bytes per rank grow with the keys new in this check, not with the
// number of ranks. A check is one all-reduce of six integers when nothing
// is new, or when every rank logged the same new entries (a data-parallel
// group's usual check: an order-free digest of the new entries and their
// count agree); the rounds below run only when the ranks' new entries differ.
//
// Entries travel as hashes in slots: each slot's smallest and largest key
// hash and value hash, from one MIN all-reduce. A slot with one key whose
// values differ, or whose value differs from the one the group agreed
// earlier, names a key ranks chose differently; a slot holding two keys is
// split again with another salt in a smaller table. Every rank keeps the
// agreed set (key hash -> value hash), identical on all of them since all
// read the same tables. Only suspect keys' texts are gathered, to write the
// same report as GroupAgreement::fold.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunelock/logs/choice_log.hpp"
#include "tunelock/verify/collective.hpp"
#include "tunelock/verify/verify.hpp"

namespace tunelock::detail {

// What every rank keeps of a group between checks, the same on all of them:
// the agreed keys (key word -> value word, words being hashes cut to 62
// bits), the keys already reported, and whether any check failed.
struct SlotAgreement {
  std::unordered_map<std::int64_t, std::int64_t> agreed;
  std::unordered_set<std::int64_t> conflicted;  // reported once, never re-agreed
  bool failed = false;
};

// One check. `fresh`: the hashes of this rank's entries since its last
// check in the group; `everything_sent`: every entry it has sent the group,
// this check's included (read only when a key conflicts, for its text).
VerifyResult verify_over_slots(Collective& group, std::span<const ChoiceHash> fresh,
                               const std::function<std::vector<ChoiceEntry>()>& everything_sent,
                               SlotAgreement& state);

}  // namespace tunelock::detail
