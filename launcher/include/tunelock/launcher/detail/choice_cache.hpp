// The per-family cache of choices, read on every launch. The entry of the
// last hit is tried first, before any hashing: a training step calls a
// kernel with one shape layer after layer, so most launches repeat the
// previous key. Reads take no lock: an insert-only open-addressing table whose slots are published
// with release stores; growing builds a new table and publishes it, keeping the old one alive
// (capacities double, so all tables together cost about twice the last). Writers are serialised by
// the family's decision mutex.
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

#include "tunelock/base/same_bytes.hpp"
#include "tunelock/model/tuning_key.hpp"

namespace tunelock::launcher {

// A call's key values and dtypes as tagged bytes: cheaper to build and hash
// than the textual tuning key, which is only built on a miss. Compact, since
// hashing and comparing it are most of a cached launch: a text's length
// takes one byte when it is under 255. The size is known before writing, so
// ordinary keys are written into inline storage without a check per byte.
// Defined inline: it runs on every launch.
class RawKey {
 public:
  RawKey(std::span<const KeyValue> values, std::span<const std::string_view> dtypes) {
    std::size_t size = 0;
    for (const KeyValue& value : values) {
      if (std::holds_alternative<std::int64_t>(value))
        size += 1 + sizeof(std::int64_t);
      else if (std::holds_alternative<bool>(value))
        size += 1;
      else
        size += text_size(std::get<std::string_view>(value));
    }
    for (std::string_view dtype : dtypes) size += text_size(dtype);
    if (size > sizeof inline_) heap_.reset(new char[size]);
    char* out = heap_ ? heap_.get() : inline_;
    data_ = out;
    for (const KeyValue& value : values) {
      if (const auto* number = std::get_if<std::int64_t>(&value)) {
        *out++ = 'i';
        std::memcpy(out, number, sizeof *number);
        out += sizeof *number;
      } else if (const auto* flag = std::get_if<bool>(&value)) {
        *out++ = *flag ? 'T' : 'F';
      } else {
        out = put_text(out, 's', std::get<std::string_view>(value));
      }
    }
    for (std::string_view dtype : dtypes) out = put_text(out, 'd', dtype);
    size_ = static_cast<std::size_t>(out - data_);
  }
  RawKey(const RawKey&) = delete;
  RawKey& operator=(const RawKey&) = delete;

  std::string_view bytes() const { return {data_, size_}; }

  // Whether `stored` (the bytes of an earlier RawKey) is this call's key,
  // read against the values in place: the same answer as comparing bytes,
  // without writing the call's key first (reading freshly written bytes
  // back as words stalls the processor more than the comparison costs).
  static bool same_key(std::string_view stored, std::span<const KeyValue> values,
                       std::span<const std::string_view> dtypes) {
    const char* at = stored.data();
    const char* const end = at + stored.size();
    for (const KeyValue& value : values) {
      if (const auto* number = std::get_if<std::int64_t>(&value)) {
        std::int64_t recorded;
        if (end - at < 1 + static_cast<std::ptrdiff_t>(sizeof recorded) || *at != 'i') return false;
        std::memcpy(&recorded, at + 1, sizeof recorded);
        if (recorded != *number) return false;
        at += 1 + sizeof recorded;
      } else if (const auto* flag = std::get_if<bool>(&value)) {
        if (at == end || *at != (*flag ? 'T' : 'F')) return false;
        ++at;
      } else if (!same_text(at, end, 's', std::get<std::string_view>(value))) {
        return false;
      }
    }
    for (std::string_view dtype : dtypes)
      if (!same_text(at, end, 'd', dtype)) return false;
    return at == end;
  }

 private:
  static constexpr unsigned char kLongText = 255;  // then a 4-byte length follows
  static std::size_t text_size(std::string_view text) {
    return 2 + (text.size() >= kLongText ? sizeof(std::uint32_t) : 0) + text.size();
  }
  // Advances `at` past a stored text equal to (tag, text), else false.
  static bool same_text(const char*& at, const char* end, char tag, std::string_view text) {
    const std::size_t header = text_size(text) - text.size();
    if (static_cast<std::size_t>(end - at) < header + text.size() || at[0] != tag) return false;
    if (text.size() < kLongText) {
      if (static_cast<unsigned char>(at[1]) != text.size()) return false;
    } else {
      std::uint32_t size;
      std::memcpy(&size, at + 2, sizeof size);
      if (static_cast<unsigned char>(at[1]) != kLongText || size != text.size()) return false;
    }
    if (!detail::same_bytes(at + header, text.data(), text.size())) return false;
    at += header + text.size();
    return true;
  }
  static char* put_text(char* out, char tag, std::string_view text) {
    *out++ = tag;
    if (text.size() < kLongText) {
      *out++ = static_cast<char>(text.size());
    } else {
      *out++ = static_cast<char>(kLongText);
      const auto size = static_cast<std::uint32_t>(text.size());
      std::memcpy(out, &size, sizeof size);
      out += sizeof size;
    }
    std::memcpy(out, text.data(), text.size());
    return out + text.size();
  }

  char inline_[192];
  std::unique_ptr<char[]> heap_;  // only for a key that outgrows inline_
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

class ChoiceCache {
 public:
  ChoiceCache();
  ~ChoiceCache();

  static constexpr std::size_t kNone = SIZE_MAX;  // find(): no choice cached

  // The variant cached for this call's key, or kNone. Lock-free; safe
  // against a concurrent insert() or clear(). (A plain index rather than an
  // optional: returning an optional through memory stalled every launch.)
  std::size_t find(std::span<const KeyValue> values,
                   std::span<const std::string_view> dtypes) const {
    const Entry* last = last_hit_.load(std::memory_order_acquire);
    if (last && last->epoch == epoch_.load(std::memory_order_acquire) &&
        RawKey::same_key(last->raw, values, dtypes))
      return last->variant;
    return find_hashed(values, dtypes);
  }

  // REQUIRES: callers serialise insert() and clear(), and the key is absent.
  void insert(std::span<const KeyValue> values, std::span<const std::string_view> dtypes,
              std::size_t variant);
  void clear();
  std::size_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::string raw;
    std::uint64_t hash;
    std::size_t variant;
    std::uint64_t epoch;  // clears before it was inserted
  };
  struct Slots {
    explicit Slots(std::size_t capacity);
    std::size_t mask;
    std::unique_ptr<std::atomic<const Entry*>[]> slots;
  };

  static void place(Slots& table, const Entry* entry);
  std::size_t find_hashed(std::span<const KeyValue> values,
                          std::span<const std::string_view> dtypes) const;

  std::atomic<const Slots*> current_;
  // The last entry found: a hint, used only while its epoch is current, so
  // a reader that stores an entry of before a clear() cannot revive it.
  mutable std::atomic<const Entry*> last_hit_{nullptr};
  std::atomic<std::uint64_t> epoch_{0};  // clear() count
  std::atomic<std::size_t> count_{0};
  // Everything ever published stays alive until the cache dies: a reader may
  // still be walking an old table or entry.
  std::vector<std::unique_ptr<Slots>> tables_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace tunelock::launcher
