// A string-keyed map for a tuned table's lookups, open-addressed in one
// power-of-two array. A table hit is a few lookups (qualified name, bare
// name, key); with std::unordered_map each paid a 64-bit division for the
// prime bucket count and a node hop, half of the hit's cost. Here a lookup
// is one hash, a mask, and a probe that compares stored hashes before text.
// A mask of the key lengths present answers most misses before any hashing
// (a qualified name asked of a table holding bare names, say). Items stay
// in insertion order in their own vector; there is no erase
// (tables are built once, then read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Inlined: kernel names and keys are short, a library call costs as much as the hash.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include "tunelock/base/same_bytes.hpp"

namespace tunelock::detail {

template <typename Value>
class FlatStringMap {
 public:
  static std::uint64_t hash(std::string_view text) { return XXH3_64bits(text.data(), text.size()); }

  const Value* find(std::string_view key) const {
    if (!may_hold(key)) return nullptr;
    return find(key, hash(key));
  }

  // REQUIRES: `key_hash` == hash(key).
  const Value* find(std::string_view key, std::uint64_t key_hash) const {
    if (slots_.empty()) return nullptr;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = key_hash & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.item == kEmpty) return nullptr;
      if (slot.hash == key_hash && same_text(items_[slot.item].first, key))
        return &items_[slot.item].second;
    }
  }

  // The value for `key`, default-constructed and added when absent.
  Value& operator[](std::string_view key) {
    const std::uint64_t key_hash = hash(key);
    if (const Value* found = find(key, key_hash)) return const_cast<Value&>(*found);
    if ((items_.size() + 1) * 2 > slots_.size()) grow();  // load stays under one half
    items_.emplace_back(std::string(key), Value{});
    lengths_ |= length_bit(key.size());
    place(key_hash, items_.size() - 1);
    return items_.back().second;
  }

  // False only when no stored key has this length (modulo 64): a miss
  // answered before the key is hashed, or even built.
  bool may_hold_length(std::size_t length) const { return (lengths_ & length_bit(length)) != 0; }

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

  // (key, value) pairs in insertion order.
  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;

  bool may_hold(std::string_view key) const { return may_hold_length(key.size()); }
  static std::uint64_t length_bit(std::size_t length) { return std::uint64_t{1} << (length & 63); }

  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t item = kEmpty;  // index into items_
  };

  void place(std::uint64_t key_hash, std::size_t item) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = key_hash & mask;
    while (slots_[i].item != kEmpty) i = (i + 1) & mask;
    slots_[i] = Slot{key_hash, static_cast<std::uint32_t>(item)};
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 8 : old.size() * 2, Slot{});
    for (const Slot& slot : old)
      if (slot.item != kEmpty) place(slot.hash, slot.item);
  }

  std::vector<Slot> slots_;
  std::vector<std::pair<std::string, Value>> items_;
  std::uint64_t lengths_ = 0;  // bit (size % 64) set for every stored key
};

}  // namespace tunelock::detail
