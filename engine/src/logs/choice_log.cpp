#include "tunelock/logs/choice_log.hpp"

#include "tunelock/base/error.hpp"

#include <xxhash.h>

#include <cstdio>

namespace tunelock {

std::string choice_log_key(std::string_view arch, std::string_view qualified,
                           std::string_view key) {
  std::string out;
  out.reserve(arch.size() + qualified.size() + key.size() + 2);
  out.append(arch).append("|").append(qualified).append("|").append(key);
  return out;
}

std::string choice_log_value(std::string_view signature, ChoiceOrigin origin) {
  const char* suffix = origin == ChoiceOrigin::pinned  ? ";pinned"
                       : origin == ChoiceOrigin::timed ? ";timed"
                                                       : ";consensus";
  return std::string(signature) + suffix;
}

ChoiceLogKey parse_choice_log_key(std::string_view entry, const std::string& origin) {
  const std::size_t first = entry.find('|');
  const std::size_t second = first == std::string_view::npos ? first : entry.find('|', first + 1);
  if (second == std::string_view::npos)
    throw Error(origin + ": entry '" + std::string(entry) + "' is not arch|kernel|key");
  return {std::string(entry.substr(0, first)),
          std::string(entry.substr(first + 1, second - first - 1)),
          std::string(entry.substr(second + 1))};
}

std::string logged_signature(std::string_view value) {
  const std::size_t semicolon = value.rfind(';');
  return std::string(semicolon == std::string_view::npos ? value : value.substr(0, semicolon));
}

bool ChoiceLog::add(std::string key, std::string value) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = index_.try_emplace(key, entries_.size());
  if (!inserted) return false;
  hashes_.push_back({XXH3_64bits(key.data(), key.size()), XXH3_64bits(value.data(), value.size())});
  entries_.push_back(ChoiceEntry{std::move(key), std::move(value)});
  return true;
}

std::size_t ChoiceLog::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::vector<ChoiceEntry> ChoiceLog::since(std::size_t cursor, std::size_t* next_cursor) const {
  std::lock_guard lock(mutex_);
  std::vector<ChoiceEntry> out;
  if (cursor < entries_.size())
    out.assign(entries_.begin() + static_cast<std::ptrdiff_t>(cursor), entries_.end());
  if (next_cursor) *next_cursor = entries_.size();
  return out;
}

void ChoiceLog::hashes_since(std::size_t cursor, std::size_t* next_cursor,
                             std::vector<ChoiceHash>& out) const {
  std::lock_guard lock(mutex_);
  out.clear();
  if (cursor < hashes_.size())
    out.assign(hashes_.begin() + static_cast<std::ptrdiff_t>(cursor), hashes_.end());
  if (next_cursor) *next_cursor = hashes_.size();
}

std::map<std::string, std::string> ChoiceLog::snapshot() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::string> out;
  for (const ChoiceEntry& e : entries_) out.emplace(e.key, e.value);
  return out;
}

void ChoiceLog::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  hashes_.clear();
  index_.clear();
}

std::string choice_digest(const std::map<std::string, std::string>& entries) {
  // One contiguous buffer hashed in one call: several times faster than
  // streaming three small updates per entry.
  std::size_t total = 0;
  for (const auto& [key, value] : entries) total += key.size() + value.size() + 2;
  std::string text;
  text.reserve(total);
  for (const auto& [key, value] : entries) {  // std::map: sorted by key
    if (!text.empty()) text += '\n';
    text.append(key).append("=").append(value);
  }
  const XXH128_hash_t hash = XXH3_128bits(text.data(), text.size());
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  std::string hex(32, '0');
  static constexpr char kDigits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof canonical.digest; ++i) {
    hex[2 * i] = kDigits[canonical.digest[i] >> 4];
    hex[2 * i + 1] = kDigits[canonical.digest[i] & 0xf];
  }
  return hex;
}

}  // namespace tunelock
