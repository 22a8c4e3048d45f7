// What this rank chose, once per (arch, kernel, key): the record that
// cross-rank verification and offline checks compare. Entries read
// `arch|qualified|key` -> `signature;pinned` (or `;timed`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tunelock {

// pinned: chosen without a clock; timed: won on this rank's clock;
// consensus: the group's winner, from all ranks' timings (a switch entry).
enum class ChoiceOrigin { pinned, timed, consensus };

struct ChoiceEntry {
  std::string key;    // arch|qualified|key
  std::string value;  // signature;pinned or signature;timed

  friend bool operator==(const ChoiceEntry&, const ChoiceEntry&) = default;
};

std::string choice_log_key(std::string_view arch, std::string_view qualified, std::string_view key);
std::string choice_log_value(std::string_view signature, ChoiceOrigin origin);

// The readers of those two, beside their writers. A key's parts: the tuning
// key may hold '|', the arch and kernel may not; Error naming `origin` when
// `entry` is not arch|kernel|key.
struct ChoiceLogKey {
  std::string arch, kernel, key;
};
ChoiceLogKey parse_choice_log_key(std::string_view entry, const std::string& origin);
// A value's config signature, less its origin (";pinned" or ";timed").
std::string logged_signature(std::string_view value);

// XXH3-64 of an entry's key and of its value: what a check along the tree
// sends instead of the texts.
struct ChoiceHash {
  std::uint64_t key = 0;
  std::uint64_t value = 0;
};

// Append-only and thread-safe. Appending order is kept so verification can
// send only what was logged since its last check (a cursor per group).
class ChoiceLog {
 public:
  // Logs the entry unless its key is already there. Returns true when new.
  // A second choice for a logged key is ignored: the first one is what ran.
  bool add(std::string key, std::string value);

  std::size_t size() const;

  // Entries [cursor, size()) and the new cursor, read under one lock.
  std::vector<ChoiceEntry> since(std::size_t cursor, std::size_t* next_cursor) const;

  // The hashes of the same entries into `out` (replacing its contents,
  // keeping its capacity), computed once when each was logged, so a check
  // neither copies nor hashes texts, nor takes fresh memory.
  void hashes_since(std::size_t cursor, std::size_t* next_cursor,
                    std::vector<ChoiceHash>& out) const;

  // Every entry, sorted by key.
  std::map<std::string, std::string> snapshot() const;

  void clear();

 private:
  mutable std::mutex mutex_;
  std::vector<ChoiceEntry> entries_;
  std::vector<ChoiceHash> hashes_;  // by entry
  std::unordered_map<std::string, std::size_t> index_;
};

// XXH3-128 of the sorted `entry=value` lines joined by '\n' (no trailing
// newline), as 32 hex digits in canonical (big-endian) order. Independent of
// insertion order; identical on every platform.
std::string choice_digest(const std::map<std::string, std::string>& entries);

}  // namespace tunelock
