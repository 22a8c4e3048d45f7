#include "tunelock/model/batch_rows.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "tunelock/base/error.hpp"

namespace tunelock {
namespace {

// Calls `visit(part, begin)` for each '|'-separated part of `key`, where
// `begin` is the part's offset, until visit returns true.
template <typename Visit>
void for_each_part(std::string_view key, Visit visit) {
  std::size_t begin = 0;
  while (begin <= key.size()) {
    const std::size_t end = std::min(key.find('|', begin), key.size());
    if (visit(key.substr(begin, end - begin), begin)) return;
    if (end == key.size()) return;
    begin = end + 1;
  }
}

bool names_dim(std::string_view part, std::string_view dim) {
  return part.size() > dim.size() && part.substr(0, dim.size()) == dim && part[dim.size()] == '=';
}

}  // namespace

std::optional<std::int64_t> batch_size_of(std::string_view key, std::string_view dim) {
  std::optional<std::int64_t> size;
  for_each_part(key, [&](std::string_view part, std::size_t) {
    if (!names_dim(part, dim)) return false;
    const std::string_view value = part.substr(dim.size() + 1);
    std::int64_t parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error == std::errc() && end == value.data() + value.size() && parsed > 0) size = parsed;
    return true;
  });
  return size;
}

std::string group_key_of(std::string_view key, std::string_view dim) {
  std::string out;
  for_each_part(key, [&](std::string_view part, std::size_t) {
    if (names_dim(part, dim)) return false;
    if (!out.empty()) out += '|';
    out += part;
    return false;
  });
  return out;
}

namespace {

std::string key_with_dim(std::string_view key, std::string_view dim, std::string_view value) {
  std::string out;
  bool first = true;
  for_each_part(key, [&](std::string_view part, std::size_t) {
    if (!first) out += '|';
    first = false;
    if (names_dim(part, dim)) {
      out += std::string(dim) + "=" + std::string(value);
    } else {
      out += part;
    }
    return false;
  });
  return out;
}

}  // namespace

std::string key_at_size(std::string_view key, std::string_view dim, std::int64_t size) {
  return key_with_dim(key, dim, std::to_string(size));
}

std::string key_at_every_size(std::string_view key, std::string_view dim) {
  return key_with_dim(key, dim, "*");
}

std::vector<std::int64_t> row_ladder(std::int64_t rows, const std::vector<std::int64_t>& also) {
  std::vector<std::int64_t> sizes;
  if (rows < 1) return sizes;
  for (std::int64_t size = 1; size < rows; size *= 2) sizes.push_back(size);
  for (std::int64_t size : also)
    if (size >= 1 && size < rows) sizes.push_back(size);
  sizes.push_back(rows);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void check_batch_dim_name(std::string_view dim, const std::string& where) {
  const bool valid = !dim.empty() && std::all_of(dim.begin(), dim.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_';
  });
  if (!valid)
    throw Error(where + ": '" + std::string(dim) +
                "' is not a key argument's name (letters, digits and '_')");
}

}  // namespace tunelock
