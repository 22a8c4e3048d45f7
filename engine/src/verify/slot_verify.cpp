#include "verify/slot_verify.hpp"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <map>
#include <set>

#include "tunelock/base/error.hpp"

namespace tunelock::detail {
namespace {

using ReduceOp = Collective::ReduceOp;

// A slot table for one MIN all-reduce: slot s holds the smallest key word,
// the negated largest key word, the smallest value word and the negated
// largest value word, so one reduction gives both ranges. Words are positive
// and below 2^62, so their negations fit; an empty slot keeps the neutral
// values (absent is never a disagreement).
class Slots {
 public:
  explicit Slots(std::size_t slots) : slots_(slots), words_(4 * slots) {
    for (std::size_t s = 0; s < slots; ++s) {
      words_[4 * s] = words_[4 * s + 2] = kNeutral;
      words_[4 * s + 1] = words_[4 * s + 3] = 0;
    }
  }

  void add(std::size_t slot, std::int64_t key, std::int64_t value) {
    std::int64_t* w = &words_[4 * slot];
    w[0] = std::min(w[0], key);
    w[1] = std::min(w[1], -key);
    w[2] = std::min(w[2], value);
    w[3] = std::min(w[3], -value);
  }
  void reduce(Collective& group) { group.all_reduce(words_, ReduceOp::min); }

  std::size_t size() const { return slots_; }
  bool present(std::size_t slot) const { return words_[4 * slot] != kNeutral; }
  // One key in the slot, on every rank that sent one there.
  bool one_key(std::size_t slot) const { return words_[4 * slot] == -words_[4 * slot + 1]; }
  std::int64_t key(std::size_t slot) const { return words_[4 * slot]; }
  bool one_value(std::size_t slot) const { return words_[4 * slot + 2] == -words_[4 * slot + 3]; }
  std::int64_t value(std::size_t slot) const { return words_[4 * slot + 2]; }

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

// The first all-reduce: how many entries are new in all (the check's
// `compared`), and the busiest rank's count within a factor of two (a
// count of ranks per power of two), which sizes the first table.
struct Counts {
  std::size_t total = 0;
  std::size_t busiest = 0;
};

Counts count_new(Collective& group, std::size_t mine) {
  std::array<std::int64_t, 65> words{};
  words[0] = static_cast<std::int64_t>(mine);
  if (mine > 0) words[1 + std::bit_width(mine)] = 1;  // counts stay below 2^63
  group.all_reduce(words, ReduceOp::sum);
  Counts out{static_cast<std::size_t>(words[0]), 0};
  for (std::size_t b = 64; b >= 2; --b) {
    if (words[b] > 0) {
      out.busiest = std::size_t{1} << (b - 1);  // above the busiest count, below twice it
      break;
    }
  }
  return out;
}

// The first all-reduce, one MIN of six words whatever the number of new
// entries: each rank's count and an order-free digest of its new (key,
// value) pairs, each as its smallest and negated largest value over the
// group. When every rank sent the same count and the same digest, the ranks
// logged the same new entries (a data-parallel group's usual check), so no
// new key can differ between them and no further round is needed.
struct FirstRound {
  std::size_t most = 0;       // new entries on the busiest rank
  bool same_entries = false;  // every rank's new entries are the same set
};

FirstRound first_round(Collective& group, std::span<const ChoiceHash> fresh) {
  // A sum of per-entry hashes: the same set in any order gives the same digest.
  std::uint64_t digest = 0;
  for (const ChoiceHash& h : fresh) {
    const std::uint64_t pair[2] = {h.key, h.value};
    digest += XXH3_64bits(pair, sizeof pair);
  }
  const auto count = static_cast<std::int64_t>(fresh.size());
  const auto low = static_cast<std::int64_t>(digest & 0xFFFFFFFFu);
  const auto high = static_cast<std::int64_t>(digest >> 32);
  std::array<std::int64_t, 6> words{count, -count, low, -low, high, -high};
  group.all_reduce(words, ReduceOp::min);
  FirstRound out;
  out.most = static_cast<std::size_t>(-words[1]);
  out.same_entries = words[0] == -words[1] && words[2] == -words[3] && words[4] == -words[5];
  return out;
}

// The same new entries on every rank: each is checked only against what the
// group agreed before (the same on every rank, so the suspects are too).
std::set<std::int64_t> check_shared_entries(std::span<const ChoiceHash> fresh,
                                            SlotAgreement& state) {
  std::set<std::int64_t> suspects;
  for (const ChoiceHash& h : fresh) {
    const std::int64_t key = word_of(h.key), value = word_of(h.value);
    if (state.conflicted.count(key)) continue;  // reported once
    const auto agreed = state.agreed.find(key);
    if (agreed != state.agreed.end() && agreed->second != value)
      suspects.insert(key);
    else
      state.agreed.emplace(key, value);
  }
  return suspects;
}

// Suspects: new keys whose ranks chose differently, or that differ from
// what the group agreed before. Places every new key alone in a slot by
// rounds of all-reduces (a slot holding two keys is split again with another
// salt), compares each key's values there and with the agreed set, and
// agrees the rest. Every rank reads the same tables, so every rank reaches
// the same suspects and the same agreed set.
std::set<std::int64_t> find_suspects(Collective& group, std::span<const ChoiceHash> fresh,
                                     std::size_t busiest, SlotAgreement& state) {
  std::vector<std::pair<std::int64_t, std::int64_t>> in_play;  // key word, value word
  in_play.reserve(fresh.size());
  for (const ChoiceHash& h : fresh) in_play.emplace_back(word_of(h.key), word_of(h.value));
  // Four slots per key of the busiest rank at first (ranks of a
  // data-parallel group mostly log the same keys), sixteen per shared slot
  // after: the bytes follow the keys still in play.
  std::size_t slots = std::bit_ceil(std::max<std::size_t>(16, 4 * busiest));
  std::set<std::int64_t> suspects;
  for (unsigned level = 0;; ++level) {
    if (level == kMaxLevels)
      throw Error("verify: group '" + group.group_id() + "': keys could not be told apart");
    Slots table(slots);
    for (const auto& [key, value] : in_play) table.add(slot_of(key, level, slots), key, value);
    table.reduce(group);
    std::vector<bool> shared(slots, false);
    std::size_t shared_slots = 0;
    for (std::size_t s = 0; s < slots; ++s) {
      if (!table.present(s)) continue;
      if (!table.one_key(s)) {
        shared[s] = true;
        ++shared_slots;
        continue;
      }
      const std::int64_t key = table.key(s);
      if (state.conflicted.count(key)) continue;  // reported once
      auto agreed = state.agreed.find(key);
      if (!table.one_value(s) || (agreed != state.agreed.end() && agreed->second != table.value(s)))
        suspects.insert(key);
      else
        state.agreed.emplace(key, table.value(s));
    }
    if (shared_slots == 0) return suspects;
    std::erase_if(in_play,
                  [&](const auto& entry) { return !shared[slot_of(entry.first, level, slots)]; });
    slots = std::bit_ceil(std::max<std::size_t>(16, 16 * shared_slots));
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
  std::map<std::string, std::map<std::string, std::set<int>>> texts;
  for (const RankBatch& batch : gather_batches(group, mine))
    for (const ChoiceEntry& e : batch.entries) texts[e.key][e.value].insert(batch.rank);
  return texts;
}

}  // namespace

VerifyResult verify_over_slots(Collective& group, std::span<const ChoiceHash> fresh,
                               const std::function<std::vector<ChoiceEntry>()>& everything_sent,
                               SlotAgreement& state) {
  VerifyResult result;
  const FirstRound first = first_round(group, fresh);
  std::set<std::int64_t> suspects;
  if (first.most == 0) {
    result.compared = 0;  // nothing new anywhere: the one all-reduce was the check
  } else if (first.same_entries) {
    result.compared = first.most * static_cast<std::size_t>(group.size());
    suspects = check_shared_entries(fresh, state);
  } else {
    const Counts counts = count_new(group, fresh.size());
    result.compared = counts.total;
    suspects = find_suspects(group, fresh, counts.busiest, state);
  }
  {
    if (!suspects.empty()) {
      for (auto& [key, by_value] : gather_texts(group, suspects, everything_sent())) {
        state.conflicted.insert(word_of(hash_of(key)));
        if (by_value.size() < 2) continue;  // cannot be: the hashes differed
        result.conflicts.push_back(Conflict{key, std::move(by_value)});
      }
    }
  }
  if (!result.conflicts.empty()) state.failed = true;
  result.agreed = !state.failed;
  return result;
}

}  // namespace tunelock::detail
