// A map from one 64-bit hash to another, open-addressed. The tree root's
// agreed set holds every key a job has verified (hundreds of thousands);
// with a node-based map, one allocation and one cache miss per insert made
// up most of a check with 1,000 new entries. Linear probing in one array;
// erase shifts the following entries back, so there are no tombstones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace tunelock::detail {

class HashToHashMap {
 public:
  // The value stored for `key`, if any.
  std::optional<std::uint64_t> find(std::uint64_t key) const {
    if (key == kEmpty) return zero_;
    if (slots_.empty()) return std::nullopt;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == kEmpty) return std::nullopt;
    }
  }

  // Stores key -> value unless `key` is present. Returns the value now
  // stored and whether it was inserted, as std::unordered_map::emplace does.
  std::pair<std::uint64_t, bool> emplace(std::uint64_t key, std::uint64_t value) {
    if (key == kEmpty) {
      if (zero_) return {*zero_, false};
      zero_ = value;
      return {value, true};
    }
    if ((used_ + 1) * 4 > slots_.size() * 3) grow();  // load factor at most 3/4
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return {slots_[i].value, false};
      if (slots_[i].key == kEmpty) {
        slots_[i] = {key, value};
        ++used_;
        return {value, true};
      }
    }
  }

  // Removes `key`; returns whether it was present.
  bool erase(std::uint64_t key) {
    if (key == kEmpty) return std::exchange(zero_, std::nullopt).has_value();
    if (slots_.empty()) return false;
    std::size_t hole = home(key);
    while (slots_[hole].key != key) {
      if (slots_[hole].key == kEmpty) return false;
      hole = (hole + 1) & mask();
    }
    // Backward shift: an entry after the hole moves into it unless its home
    // lies cyclically in (hole, next], where it would no longer be found.
    for (std::size_t next = (hole + 1) & mask(); slots_[next].key != kEmpty;
         next = (next + 1) & mask()) {
      const std::size_t h = home(slots_[next].key);
      const bool stays = hole <= next ? (hole < h && h <= next) : (hole < h || h <= next);
      if (stays) continue;
      slots_[hole] = slots_[next];
      hole = next;
    }
    slots_[hole] = {kEmpty, 0};
    --used_;
    return true;
  }

  std::size_t size() const { return used_ + (zero_ ? 1 : 0); }

  // Starts loading `key`'s slot into the cache: a batch of lookups that
  // prefetches a few keys ahead waits for several cache misses at once
  // instead of one after another.
  void prefetch(std::uint64_t key) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(key)]);
  }

 private:
  static constexpr std::uint64_t kEmpty = 0;  // key 0 lives in zero_
  struct Slot {
    std::uint64_t key = kEmpty;
    std::uint64_t value = 0;
  };

  std::size_t mask() const { return slots_.size() - 1; }
  // Keys are hashes already, but mixed once more so that keys a test or an
  // attacker picks (1, 2, 3...) do not pile up in neighbouring slots.
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::size_t size = old.empty() ? 64 : old.size() * 2;
    slots_.assign(size, Slot{});
    shift_ = 64;
    for (std::size_t s = size; s > 1; s >>= 1) --shift_;
    used_ = 0;
    for (const Slot& s : old)
      if (s.key != kEmpty) emplace(s.key, s.value);
  }

  std::vector<Slot> slots_;  // a power of two in size
  std::size_t used_ = 0;     // entries in slots_
  int shift_ = 64;
  std::optional<std::uint64_t> zero_;
};

}  // namespace tunelock::detail
