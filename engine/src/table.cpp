#include "tunelock/table.hpp"

// Inlined: kernel names and keys are short, a library call costs as much as the hash.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include <algorithm>

namespace tunelock {

std::vector<std::string> provenance_differences(const Provenance& table, const Provenance& device) {
  std::vector<std::string> out;
  auto compare = [&](const char* field, const std::string& a, const std::string& b) {
    if (!a.empty() && !b.empty() && a != b)
      out.push_back(std::string(field) + ": table '" + a + "' vs device '" + b + "'");
  };
  compare("device_name", table.device_name, device.device_name);
  if (table.sm_count && device.sm_count && table.sm_count != device.sm_count) {
    out.push_back("sm_count: table " + std::to_string(table.sm_count) + " vs device " +
                  std::to_string(device.sm_count));
  }
  compare("driver_version", table.driver_version, device.driver_version);
  compare("cuda_version", table.cuda_version, device.cuda_version);
  return out;
}

std::size_t Table::entry_count() const {
  std::size_t count = 0;
  for (const std::string& kernel : kernels()) count += keys(kernel).size();
  return count;
}

std::size_t InMemoryTable::StringHash::operator()(std::string_view s) const {
  return static_cast<std::size_t>(XXH3_64bits(s.data(), s.size()));
}

InMemoryTable::InMemoryTable(std::string arch, Provenance provenance)
    : arch_(std::move(arch)), provenance_(std::move(provenance)) {}

void InMemoryTable::set(std::string kernel, std::string key, TableEntry entry) {
  kernels_[std::move(kernel)].insert_or_assign(std::move(key), std::move(entry));
}

const TableEntry* InMemoryTable::find(std::string_view kernel, std::string_view key) const {
  auto by_kernel = kernels_.find(kernel);
  if (by_kernel == kernels_.end()) return nullptr;
  auto by_key = by_kernel->second.find(key);
  return by_key == by_kernel->second.end() ? nullptr : &by_key->second;
}

std::optional<TableEntry> InMemoryTable::entry(std::string_view kernel,
                                               std::string_view key) const {
  const TableEntry* found = find(kernel, key);
  if (!found) return std::nullopt;
  return *found;
}

EntryMatch InMemoryTable::match(std::string_view kernel, std::string_view key,
                                std::span<const Config> candidates) const {
  const TableEntry* found = find(kernel, key);
  if (!found) return {};
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (found->matches(candidates[i])) return {true, i};
  }
  return {true, std::nullopt};
}

std::vector<std::string> InMemoryTable::kernels() const {
  std::vector<std::string> names;
  names.reserve(kernels_.size());
  for (const auto& [name, keys] : kernels_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> InMemoryTable::keys(std::string_view kernel) const {
  std::vector<std::string> out;
  auto found = kernels_.find(kernel);
  if (found == kernels_.end()) return out;
  for (const auto& [key, entry] : found->second) out.push_back(key);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tunelock
