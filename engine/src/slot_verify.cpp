#include "slot_verify.hpp"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <set>

#include "tunelock/error.hpp"

namespace tunelock::detail {
namespace {

using ReduceOp = Collective::ReduceOp;

// A slot table for one MIN all-reduce: slot s holds the smallest word at
// [s] and the negated largest at [size + s], so one reduction gives both.
// Words are positive and below 2^62, so their negations fit; an empty slot
// keeps the neutral values (absent is never a disagreement).
class MinMaxSlots {
 public:
  explicit MinMaxSlots(std::size_t slots) : slots_(slots), words_(2 * slots, kNeutral) {
    std::fill(words_.begin() + static_cast<std::ptrdiff_t>(slots), words_.end(), 0);
  }

  void add(std::size_t slot, std::int64_t word) {
    words_[slot] = std::min(words_[slot], word);
    words_[slots_ + slot] = std::min(words_[slots_ + slot], -word);
  }
  void reduce(Collective& group) { group.all_reduce(words_, ReduceOp::min); }

  bool present(std::size_t slot) const { return words_[slot] != kNeutral; }
  std::int64_t smallest(std::size_t slot) const { return words_[slot]; }
  std::int64_t largest(std::size_t slot) const { return -words_[slots_ + slot]; }
  std::size_t size() const { return slots_; }

 private:
  static constexpr std::int64_t kNeutral = std::numeric_limits<std::int64_t>::max();
  std::size_t slots_;
  std::vector<std::int64_t> words_;
};

// A 64-bit hash as a word the table holds: positive, below 2^62.
std::int64_t word_of(std::uint64_t hash) { return static_cast<std::int64_t>((hash >> 2) | 1); }

std::uint64_t hash_of(std::string_view text) { return XXH3_64bits(text.data(), text.size()); }

// The slot of a key at a level: each level salts the hash afresh, so keys
// that shared a slot at one level part at the next.
std::size_t slot_of(std::int64_t key, unsigned level, std::size_t slots) {
  return static_cast<std::size_t>(XXH3_64bits_withSeed(&key, sizeof key, level) & (slots - 1));
}

constexpr unsigned kMaxLevels = 32;  // two distinct words stay together with odds 2^-96

// Every key new on some rank in this check, each placed alone in a slot by
// rounds of all-reduces; the same list, in the same order, on every rank.
std::vector<std::int64_t> new_keys(Collective& group, std::vector<std::int64_t> in_play,
                                   std::size_t total) {
  const std::size_t slots = std::bit_ceil(std::max<std::size_t>(64, 8 * total));
  std::vector<std::int64_t> placed;
  for (unsigned level = 0;; ++level) {
    if (level == kMaxLevels)
      throw Error("verify: group '" + group.group_id() + "': keys could not be told apart");
    MinMaxSlots table(slots);
    for (std::int64_t key : in_play) table.add(slot_of(key, level, slots), key);
    table.reduce(group);
    std::vector<bool> shared(slots, false);
    bool any_shared = false;
    for (std::size_t s = 0; s < slots; ++s) {
      if (!table.present(s)) continue;
      if (table.smallest(s) == table.largest(s)) {
        placed.push_back(table.smallest(s));
      } else {
        shared[s] = true;
        any_shared = true;
      }
    }
    // Every rank reads the same reduced table, so all leave together.
    if (!any_shared) return placed;
    std::erase_if(in_play, [&](std::int64_t key) { return !shared[slot_of(key, level, slots)]; });
  }
}

// The texts of `suspects` from every rank that ever sent them: key -> value
// -> world ranks, as GroupAgreement::fold reports them.
std::map<std::string, std::map<std::string, std::set<int>>> gather_texts(
    Collective& group, const std::set<std::int64_t>& suspects,
    const std::vector<ChoiceEntry>& sent) {
  std::vector<ChoiceEntry> mine;
  for (const ChoiceEntry& e : sent)
    if (suspects.count(word_of(hash_of(e.key)))) mine.push_back(e);
  const std::vector<std::string> gathered = group.all_gather(encode_batch(group.rank(), mine));
  if (gathered.size() != static_cast<std::size_t>(group.size())) {
    throw Error("verify: group '" + group.group_id() + "' returned " +
                std::to_string(gathered.size()) + " payloads for " + std::to_string(group.size()) +
                " ranks");
  }
  std::map<std::string, std::map<std::string, std::set<int>>> texts;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    const std::string origin =
        "verify: rank " + std::to_string(r) + " of group '" + group.group_id() + "'";
    const RankBatch batch = decode_batch(gathered[r], origin);
    if (batch.rank != static_cast<int>(r))
      throw Error(origin + ": batch claims rank " + std::to_string(batch.rank));
    for (const ChoiceEntry& e : batch.entries)
      texts[e.key][e.value].insert(group.world_rank(static_cast<int>(r)));
  }
  return texts;
}

}  // namespace

VerifyResult verify_over_slots(Collective& group, std::span<const ChoiceHash> fresh,
                               const std::function<std::vector<ChoiceEntry>()>& everything_sent,
                               SlotAgreement& state) {
  std::vector<std::int64_t> in_play;
  in_play.reserve(fresh.size());
  for (const ChoiceHash& h : fresh) {
    state.sent.emplace(word_of(h.key), word_of(h.value));
    in_play.push_back(word_of(h.key));
  }
  VerifyResult result;
  std::int64_t total = static_cast<std::int64_t>(fresh.size());
  group.all_reduce({&total, 1}, ReduceOp::sum);
  result.compared = static_cast<std::size_t>(total);
  if (total > 0) {
    // Each new key's value, from every rank that ever logged it.
    const std::vector<std::int64_t> keys =
        new_keys(group, std::move(in_play), static_cast<std::size_t>(total));
    MinMaxSlots values(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (auto it = state.sent.find(keys[i]); it != state.sent.end()) values.add(i, it->second);
    values.reduce(group);
    std::set<std::int64_t> suspects;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (values.smallest(i) != values.largest(i) && !state.conflicted.count(keys[i]))
        suspects.insert(keys[i]);
    if (!suspects.empty()) {
      for (auto& [key, by_value] : gather_texts(group, suspects, everything_sent())) {
        if (by_value.size() < 2) continue;  // two keys whose hashes met: no conflict
        state.conflicted.insert(word_of(hash_of(key)));
        result.conflicts.push_back(Conflict{key, std::move(by_value)});
      }
    }
  }
  if (!result.conflicts.empty()) state.failed = true;
  result.agreed = !state.failed;
  return result;
}

}  // namespace tunelock::detail
