// Verification along the collective's tree (docs/many-ranks.md, "Verification at scale"):
// entries travel as (XXH3-64 of key, XXH3-64 of value); the tree keeps, per
// key hash, the smallest and largest value hash; rank 0 compares with the
// agreed set and sends the verdict down. Only keys it suspects make a
// second round gather their texts (values and ranks) for the report, so the
// verdicts and reports are those of GroupAgreement::fold over all batches.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_set>
#include <vector>

#include "tunelock/fb/verify_tree_generated.h"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/verify/collective.hpp"
#include "tunelock/verify/verify.hpp"
#include "verify/hash_to_hash_map.hpp"

namespace tunelock::detail {

// Buffers kept from one check to the next. Between checks a trainer's log
// grows into the memory a check frees, so buffers allocated afresh at each
// check land on untouched pages; with 1,000 new entries their page faults
// cost more than the check's own work.
struct TreeScratch {
  std::vector<ChoiceHash> fresh;  // this rank's new entries
  std::vector<fb::KeyRange> ranges, merged;
  std::vector<std::uint32_t> buckets;
  flatbuffers::FlatBufferBuilder builder;
};

// What a group has agreed on, by hash. Every rank keeps one; only the
// group's rank 0 fills it, as the tree's root.
struct TreeAgreement {
  HashToHashMap agreed;                          // key hash -> value hash
  std::unordered_set<std::uint64_t> conflicted;  // reported once, never re-agreed
  bool failed = false;
  TreeScratch scratch;
};

// Sorts by key hash (one bucket pass on the top bits, then each bucket);
// `spare` and `starts` are working space kept between checks.
void sort_by_key(std::vector<fb::KeyRange>& ranges, std::vector<fb::KeyRange>& spare,
                 std::vector<std::uint32_t>& starts);

// One check. `fresh`: the hashes of this rank's entries since its last check
// in the group; `everything_sent`: every entry it has sent the group, this
// check's included (read only when a suspect needs its text).
VerifyResult verify_over_tree(Collective& group, std::span<const ChoiceHash> fresh,
                              const std::function<std::vector<ChoiceEntry>()>& everything_sent,
                              TreeAgreement& state);

}  // namespace tunelock::detail
