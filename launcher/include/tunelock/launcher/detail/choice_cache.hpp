// The per-family cache of choices, read on every launch. Reads take no
// lock: an insert-only open-addressing table whose slots are published with
// release stores; growing builds a new table and publishes it, keeping the
// old one alive (capacities double, so all tables together cost about twice
// the last). Writers are serialised by the family's decision mutex.
//
// Internal (detail/): kernel_family.hpp needs it inline for the hot path,
// but it is not part of the API and may change between versions.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/tuning_key.hpp"

namespace tunelock::launcher {

// A call's key values and dtypes as tagged bytes: cheaper to build and hash
// than the textual tuning key, which is only built on a miss. Inline storage
// covers ordinary keys without touching the heap.
// Defined inline: it runs on every launch, and its tiny fixed-size copies
// only become plain moves when the compiler sees them.
class RawKey {
 public:
  RawKey(std::span<const KeyValue> values, std::span<const std::string_view> dtypes) {
    for (const KeyValue& value : values) {
      if (const auto* number = std::get_if<std::int64_t>(&value)) {
        put('i');
        append(number, sizeof *number);
      } else if (const auto* flag = std::get_if<bool>(&value)) {
        put(*flag ? 'T' : 'F');
      } else {
        put_text('s', std::get<std::string_view>(value));
      }
    }
    for (std::string_view dtype : dtypes) put_text('d', dtype);
  }
  std::string_view bytes() const { return {data(), size_}; }

 private:
  void put(char tag) { append(&tag, 1); }
  void put_text(char tag, std::string_view text) {
    const auto size = static_cast<std::uint32_t>(text.size());
    put(tag);
    append(&size, sizeof size);
    append(text.data(), text.size());
  }
  void append(const void* bytes, std::size_t count) {
    if (heap_.empty() && size_ + count <= sizeof inline_) {
      std::memcpy(inline_ + size_, bytes, count);
    } else {
      if (heap_.empty()) heap_.assign(inline_, size_);
      heap_.append(static_cast<const char*>(bytes), count);
    }
    size_ += count;
  }
  const char* data() const { return heap_.empty() ? inline_ : heap_.data(); }

  char inline_[192];
  std::size_t size_ = 0;
  std::string heap_;  // used once the key outgrows inline_
};

class ChoiceCache {
 public:
  ChoiceCache();
  ~ChoiceCache();

  // Lock-free; safe against a concurrent insert() or clear().
  std::optional<std::size_t> find(std::string_view raw) const;

  // REQUIRES: callers serialise insert() and clear(), and `raw` is absent.
  void insert(std::string_view raw, std::size_t variant);
  void clear();
  std::size_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::string raw;
    std::uint64_t hash;
    std::size_t variant;
  };
  struct Slots {
    explicit Slots(std::size_t capacity);
    std::size_t mask;
    std::unique_ptr<std::atomic<const Entry*>[]> slots;
  };

  static void place(Slots& table, const Entry* entry);

  std::atomic<const Slots*> current_;
  std::atomic<std::size_t> count_{0};
  // Everything ever published stays alive until the cache dies: a reader may
  // still be walking an old table or entry.
  std::vector<std::unique_ptr<Slots>> tables_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace tunelock::launcher
