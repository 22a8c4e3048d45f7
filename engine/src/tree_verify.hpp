// Verification along the collective's tree (DESIGN "Verification at scale"):
// entries travel as (XXH3-64 of key, XXH3-64 of value); the tree keeps, per
// key hash, the smallest and largest value hash; rank 0 compares with the
// agreed set and sends the verdict down. Only keys it suspects make a
// second round gather their texts (values and ranks) for the report, so the
// verdicts and reports are those of GroupAgreement::fold over all batches.
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

// What a group has agreed on, by hash. Every rank keeps one; only the
// group's rank 0 fills it, as the tree's root.
struct TreeAgreement {
  std::unordered_map<std::uint64_t, std::uint64_t> agreed;  // key hash -> value hash
  std::unordered_set<std::uint64_t> conflicted;             // reported once, never re-agreed
  bool failed = false;
};

// One check. `fresh`: the hashes of this rank's entries since its last check
// in the group; `everything_sent`: every entry it has sent the group, this
// check's included (read only when a suspect needs its text).
VerifyResult verify_over_tree(Collective& group, std::span<const ChoiceHash> fresh,
                              const std::function<std::vector<ChoiceEntry>()>& everything_sent,
                              TreeAgreement& state);

}  // namespace tunelock::detail
