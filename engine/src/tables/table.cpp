#include "tunelock/tables/table.hpp"

#include <utility>

#include <algorithm>

#include "tables/flat_string_map.hpp"

namespace tunelock {

namespace {

// "12.4.1" -> "12.4" (parts = 2) or "12" (parts = 1); text without dots as is.
std::string leading_parts(std::string_view version, int parts) {
  std::size_t end = 0;
  for (int i = 0; i < parts; ++i) {
    end = version.find('.', end ? end + 1 : 0);
    if (end == std::string_view::npos) return std::string(version);
  }
  return std::string(version.substr(0, end));
}

// The values of a field a merged table lists ("a | b"), each cut to `parts`
// version parts when parts > 0.
std::vector<std::string> listed_values(std::string_view field, int parts) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= field.size()) {
    std::size_t end = field.find(" | ", start);
    if (end == std::string_view::npos) end = field.size();
    const std::string_view value = field.substr(start, end - start);
    out.push_back(parts > 0 ? leading_parts(value, parts) : std::string(value));
    start = end + 3;
  }
  return out;
}

}  // namespace

std::vector<std::string> provenance_differences(const Provenance& table, const Provenance& device) {
  std::vector<std::string> out;
  // `parts` > 0 compares only that many leading version parts.
  auto compare = [&](const char* field, const std::string& a, const std::string& b, int parts) {
    if (a.empty() || b.empty()) return;
    const std::vector<std::string> values = listed_values(a, parts);
    const std::string running = parts > 0 ? leading_parts(b, parts) : b;
    if (std::find(values.begin(), values.end(), running) != values.end()) return;
    out.push_back(std::string(field) + ": table '" + a + "' vs device '" + b + "'");
  };
  compare("device_name", table.device_name, device.device_name, 0);
  if (table.sm_count && device.sm_count && table.sm_count != device.sm_count) {
    out.push_back("sm_count: table " + std::to_string(table.sm_count) + " vs device " +
                  std::to_string(device.sm_count));
  }
  compare("triton", table.triton, device.triton, 2);
  compare("cuda_version", table.cuda_version, device.cuda_version, 1);
  return out;
}

std::vector<std::pair<std::string, std::string>> provenance_lines(const Provenance& p) {
  std::vector<std::pair<std::string, std::string>> out;
  auto line = [&](const char* label, const std::string& value) {
    if (!value.empty()) out.emplace_back(label, value);
  };
  line("source", p.source);
  line("device",
       p.device_name + (p.sm_count ? " (" + std::to_string(p.sm_count) + " SMs)" : std::string()));
  line("recorded", p.recorded_at);
  line("driver", p.driver_version);
  line("cuda", p.cuda_version);
  line("triton", p.triton);
  std::string packages;
  for (const auto& [name, version] : p.packages)
    packages += (packages.empty() ? "" : ", ") + name + " " + version;
  line("packages", packages);
  if (p.ranks)
    line("voted", std::to_string(p.ranks) + " rank(s) of " + std::to_string(p.runs) + " run(s)");
  std::string mixed;
  for (const std::string& field : p.mixed) mixed += (mixed.empty() ? "" : ", ") + field;
  if (!mixed.empty()) line("mixed", "the records differed in " + mixed);
  line("tool", p.tool_version);
  return out;
}

std::string provenance_difference_line(const Provenance& table, const Provenance& device) {
  std::string out;
  for (const std::string& difference : provenance_differences(table, device))
    out += (out.empty() ? "" : "; ") + difference;
  return out;
}

std::string describe(const TableEntry& entry) {
  std::string out = signature(entry.config);
  for (std::size_t i = 0; i < entry.equivalent.size(); ++i)
    out += (i ? ", " : " (equivalent: ") + signature(entry.equivalent[i]);
  if (!entry.equivalent.empty()) out += ")";
  for (std::size_t i = 0; i < entry.ties.size(); ++i)
    out += (i ? ", " : " (within noise: ") + signature(entry.ties[i]);
  return entry.ties.empty() ? out : out + ")";
}

std::size_t Table::entry_count() const {
  std::size_t count = 0;
  for (const std::string& kernel : kernels()) count += keys(kernel).size();
  return count;
}

bool Table::may_hold_kernel_name_of_length(std::size_t) const { return true; }

std::span<const std::string> Table::nondeterministic(std::string_view kernel) const {
  const auto found = nondeterministic_.find(kernel);
  if (found == nondeterministic_.end()) return {};
  return found->second;
}

bool Table::flags(std::string_view kernel, const Config& config) const {
  const std::span<const std::string> flagged = nondeterministic(kernel);
  return !flagged.empty() && std::binary_search(flagged.begin(), flagged.end(), signature(config));
}

void Table::set_nondeterministic(NondeterministicConfigs flagged) {
  for (auto it = flagged.begin(); it != flagged.end();) {
    std::vector<std::string>& list = it->second;
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    it = list.empty() ? flagged.erase(it) : std::next(it);
  }
  nondeterministic_ = std::move(flagged);
}

std::string_view Table::identity(std::string_view kernel) const {
  const auto found = identities_.find(kernel);
  return found == identities_.end() ? std::string_view{} : std::string_view(found->second);
}

void Table::set_identities(KernelIdentities identities) {
  std::erase_if(identities, [](const auto& item) { return item.second.empty(); });
  identities_ = std::move(identities);
}

const KernelInvariance* Table::invariance(std::string_view kernel) const {
  const auto found = invariance_.find(kernel);
  return found == invariance_.end() ? nullptr : &found->second;
}

void Table::set_invariance(BatchInvariance invariance) { invariance_ = std::move(invariance); }

detail::NameMatch Table::match_in_order(std::string_view kernel,
                                        std::span<const std::string_view> keys,
                                        std::span<const Config> candidates) const {
  detail::NameMatch out;
  out.kernel_present = has_kernel(kernel);
  if (!out.kernel_present) return out;
  for (std::string_view key : keys) {
    if (out.tried == out.keys.size()) break;
    const EntryMatch& found = out.keys[out.tried++] = match(kernel, key, candidates);
    if (found.index) break;
  }
  return out;
}

struct InMemoryTable::Index {
  detail::FlatStringMap<detail::FlatStringMap<TableEntry>> kernels;
};

namespace {

// What a present entry says of the live candidates: the first it matches.
// Filled in place: a small struct of flags built in one function and copied
// whole in another stalls on reading back bytes as words, which cost a
// table hit more than the lookups.
void match_entry(const TableEntry& entry, std::span<const Config> candidates, EntryMatch& out) {
  out.present = true;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (entry.matches(candidates[i])) {
      out.index = i;
      return;
    }
  }
}

}  // namespace

InMemoryTable::InMemoryTable(std::string arch, Provenance provenance)
    : arch_(std::move(arch)),
      provenance_(std::move(provenance)),
      index_(std::make_unique<Index>()) {}

InMemoryTable::InMemoryTable(std::string arch, Provenance provenance, InMemoryTable&& entries)
    : arch_(std::move(arch)),
      provenance_(std::move(provenance)),
      index_(std::exchange(entries.index_, std::make_unique<Index>())) {}

InMemoryTable::~InMemoryTable() = default;
InMemoryTable::InMemoryTable(InMemoryTable&&) noexcept = default;
InMemoryTable& InMemoryTable::operator=(InMemoryTable&&) noexcept = default;

bool InMemoryTable::set(std::string kernel, std::string key, TableEntry entry) {
  auto& keys = index_->kernels[kernel];
  const bool added = keys.find(key) == nullptr;
  keys[key] = std::move(entry);
  return added;
}

const TableEntry* InMemoryTable::find(std::string_view kernel, std::string_view key) const {
  const auto* keys = index_->kernels.find(kernel);
  return keys ? keys->find(key) : nullptr;
}

bool InMemoryTable::has_kernel(std::string_view kernel) const {
  return index_->kernels.find(kernel) != nullptr;
}

bool InMemoryTable::may_hold_kernel_name_of_length(std::size_t length) const {
  return index_->kernels.may_hold_length(length);
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
  EntryMatch out;
  if (found) match_entry(*found, candidates, out);
  return out;
}

detail::NameMatch InMemoryTable::match_in_order(std::string_view kernel,
                                                std::span<const std::string_view> keys,
                                                std::span<const Config> candidates) const {
  detail::NameMatch out;
  const auto* by_key = index_->kernels.find(kernel);  // the name is looked up once
  if (!by_key) return out;
  out.kernel_present = true;
  for (std::string_view key : keys) {
    if (out.tried == out.keys.size()) break;
    EntryMatch& match = out.keys[out.tried++];
    if (const TableEntry* found = by_key->find(key)) match_entry(*found, candidates, match);
    if (match.index) break;
  }
  return out;
}

std::vector<std::string> InMemoryTable::kernels() const {
  std::vector<std::string> names;
  names.reserve(index_->kernels.size());
  for (const auto& [name, keys] : index_->kernels.items()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> InMemoryTable::keys(std::string_view kernel) const {
  std::vector<std::string> out;
  const auto* found = index_->kernels.find(kernel);
  if (!found) return out;
  for (const auto& [key, entry] : found->items()) out.push_back(key);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tunelock
