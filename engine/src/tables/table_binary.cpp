#include "tunelock/tables/table_binary.hpp"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <map>

#include "io/checksum_trailer.hpp"
#include "io/json_checks.hpp"
#include "io/sealed_file.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/fb/table_generated.h"
#include "tunelock/tables/table_format.hpp"
#include "tunelock/tables/table_invariance.hpp"

namespace tunelock {
namespace {

using FbStrings = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>;

// 2: a checksum trailer (checksum_trailer.hpp). Version 1 files have none.
constexpr std::uint32_t kBinaryFormatVersion = 2;
constexpr std::string_view kReconvert =
    "re-convert it from its JSON table: tunelock table convert TABLE.json TABLE.tlb";

std::string_view view(const flatbuffers::String* s) { return {s->c_str(), s->size()}; }

// Text that JSON output prints must be UTF-8, or printing it fails later
// far from the file that held it.
std::string_view text(const flatbuffers::String* s, const std::string& where) {
  json_checks::require_utf8(view(s), where);
  return view(s);
}

// ---- Writing ----

flatbuffers::Offset<fb::TableConfig> write_config(flatbuffers::FlatBufferBuilder& b,
                                                  const TableEntry& entry) {
  std::vector<flatbuffers::Offset<fb::Param>> params;
  for (const Param& p : entry.config.params)
    params.push_back(fb::CreateParam(b, b.CreateString(p.name), p.value));
  const auto params_offset = b.CreateVector(params);
  const auto ir_override = entry.config.ir_override ? b.CreateString(*entry.config.ir_override)
                                                    : flatbuffers::Offset<flatbuffers::String>();
  const auto algorithm = entry.config.algorithm ? b.CreateString(*entry.config.algorithm)
                                                : flatbuffers::Offset<flatbuffers::String>();
  fb::TableConfigBuilder config(b);
  config.add_params(params_offset);
  config.add_num_warps(entry.config.num_warps);
  config.add_num_stages(entry.config.num_stages);
  config.add_num_ctas(entry.config.num_ctas);
  if (entry.config.maxnreg) config.add_maxnreg(*entry.config.maxnreg);
  if (entry.config.ir_override) config.add_ir_override(ir_override);
  if (entry.config.algorithm) config.add_algorithm(algorithm);
  return config.Finish();
}

flatbuffers::Offset<fb::Provenance> write_provenance(flatbuffers::FlatBufferBuilder& b,
                                                     const Provenance& p) {
  std::vector<std::string> names, versions;
  for (const auto& [name, version] : p.packages) {
    names.push_back(name);
    versions.push_back(version);
  }
  const auto names_offset = b.CreateVectorOfStrings(names);
  const auto versions_offset = b.CreateVectorOfStrings(versions);
  const auto mixed_offset = p.mixed.empty() ? 0 : b.CreateVectorOfStrings(p.mixed);
  // Arguments are built before CreateProvenance starts its table, as required.
  return fb::CreateProvenance(b, b.CreateString(p.source), b.CreateString(p.tool_version),
                              b.CreateString(p.device_name), p.sm_count,
                              b.CreateString(p.driver_version), b.CreateString(p.cuda_version),
                              b.CreateString(p.recorded_at), b.CreateString(p.triton), names_offset,
                              versions_offset, p.ranks, p.runs, mixed_offset);
}

// ---- Reading ----

NondeterministicConfigs read_nondeterministic(const fb::TunedTable& table,
                                              const std::string& origin) {
  NondeterministicConfigs out;
  if (!table.nondeterministic()) return out;
  for (flatbuffers::uoffset_t k = 0; k < table.nondeterministic()->size(); ++k) {
    const fb::FlaggedKernel* flagged = table.nondeterministic()->Get(k);
    const std::string where = origin + ": nondeterministic[" + std::to_string(k) + "]";
    const std::string name(text(flagged->name(), where + ".name"));
    check_kernel_name(name, where + ".name");
    std::vector<std::string>& list = out[name];
    for (flatbuffers::uoffset_t i = 0; i < flagged->signatures()->size(); ++i) {
      const std::string at = where + ".signatures[" + std::to_string(i) + "]";
      const std::string_view sig = text(flagged->signatures()->Get(i), at);
      if (sig.empty()) throw Error(at + ": empty; expected a config signature");
      list.emplace_back(sig);
    }
  }
  return out;
}

KernelIdentities read_identities(const fb::TunedTable& table, const std::string& origin) {
  KernelIdentities out;
  if (!table.identities()) return out;
  for (flatbuffers::uoffset_t k = 0; k < table.identities()->size(); ++k) {
    const fb::KernelIdentity* item = table.identities()->Get(k);
    const std::string where = origin + ": identities[" + std::to_string(k) + "]";
    const std::string name(text(item->name(), where + ".name"));
    check_kernel_name(name, where + ".name");
    const std::string_view identity = text(item->identity(), where + ".identity");
    if (identity.empty())
      throw Error(where + ".identity: empty; expected the kernel's code identity");
    if (!out.emplace(name, identity).second)
      throw Error(where + ".name: '" + name + "' given twice");
  }
  return out;
}

BatchInvariance read_invariance(const fb::TunedTable& table, const std::string& origin) {
  BatchInvariance out;
  if (!table.invariance()) return out;
  for (flatbuffers::uoffset_t k = 0; k < table.invariance()->size(); ++k) {
    const fb::InvariantKernel* item = table.invariance()->Get(k);
    const std::string where = origin + ": invariance[" + std::to_string(k) + "]";
    const std::string name(text(item->name(), where + ".name"));
    check_kernel_name(name, where + ".name");
    KernelInvariance kernel;
    if (item->dim()) kernel.dim = item->dim()->str();
    if (item->variant())
      for (const flatbuffers::String* sig : *item->variant()) kernel.variant.push_back(sig->str());
    for (flatbuffers::uoffset_t g = 0; item->groups() && g < item->groups()->size(); ++g) {
      const fb::InvariantGroup* group = item->groups()->Get(g);
      const std::string at = where + ".groups[" + std::to_string(g) + "]";
      InvariantGroup out_group;
      if (group->class_configs())
        for (const flatbuffers::String* sig : *group->class_configs())
          out_group.class_configs.push_back(sig->str());
      if (group->proven())
        out_group.proven.assign(group->proven()->begin(), group->proven()->end());
      if (group->recorded())
        out_group.recorded.assign(group->recorded()->begin(), group->recorded()->end());
      if (!kernel.groups.emplace(std::string(text(group->group(), at + ".group")), out_group)
               .second)
        throw Error(at + ".group: given twice");
    }
    if (!out.emplace(name, std::move(kernel)).second)
      throw Error(where + ".name: '" + name + "' given twice");
  }
  return out;
}

// The checks the FlatBuffers verifier cannot make: what lookups and
// decisions rely on. O(entries), run on every load.
void check_semantics(const fb::TunedTable& table, const std::string& origin) {
  check_arch_name(text(table.arch(), origin + ": arch"), origin + ": arch");
  const auto config_count = table.configs()->size();
  for (flatbuffers::uoffset_t c = 0; c < config_count; ++c) {
    const fb::TableConfig* config = table.configs()->Get(c);
    const std::string where = origin + ": configs[" + std::to_string(c) + "]";
    if (config->num_warps() < 0 || config->num_stages() < 0 || config->num_ctas() < 1 ||
        (config->maxnreg() && *config->maxnreg() < 1))
      throw Error(where + ": launch option out of range");
    if (config->ir_override()) text(config->ir_override(), where + ": ir_override");
    if (config->algorithm()) {
      text(config->algorithm(), where + ": algorithm");
      if (!is_algorithm_name(view(config->algorithm())))
        throw Error(where + ": algorithm '" + config->algorithm()->str() +
                    "' is not an algorithm name");
    }
    if (!config->params()) continue;
    std::string_view previous;
    for (flatbuffers::uoffset_t i = 0; i < config->params()->size(); ++i) {
      const fb::Param* p = config->params()->Get(i);
      text(p->name(), where + ": params[" + std::to_string(i) + "].name");
      if (i > 0 && !(previous < view(p->name())))
        throw Error(where + ": params not sorted and unique");
      if (view(p->name()).empty() || (is_block_param(view(p->name())) && p->value() < 1))
        throw Error(where + ": parameter '" + p->name()->str() + "' out of range");
      previous = view(p->name());
    }
  }
  std::string_view previous_kernel;
  for (flatbuffers::uoffset_t k = 0; k < table.kernels()->size(); ++k) {
    const fb::Kernel* kernel = table.kernels()->Get(k);
    const std::string where = origin + ": kernels[" + std::to_string(k) + "]";
    text(kernel->name(), where + ".name");
    if (view(kernel->name()).empty() || (k > 0 && !(previous_kernel < view(kernel->name()))))
      throw Error(where + ": kernel names not sorted and unique");
    previous_kernel = view(kernel->name());
    const FbStrings& keys = *kernel->keys();
    if (keys.size() != kernel->configs()->size())
      throw Error(where + ": " + std::to_string(keys.size()) + " keys but " +
                  std::to_string(kernel->configs()->size()) + " config references");
    for (flatbuffers::uoffset_t i = 0; i < keys.size(); ++i) {
      text(keys.Get(i), where + ".keys[" + std::to_string(i) + "]");
      if (view(keys.Get(i)).empty() || (i > 0 && !(view(keys.Get(i - 1)) < view(keys.Get(i)))))
        throw Error(where + " (" + kernel->name()->str() + "): keys not sorted and unique");
      if (kernel->configs()->Get(i) >= config_count)
        throw Error(where + " (" + kernel->name()->str() + "): config reference out of range");
    }
    for (const auto& [lists, what] :
         {std::pair(kernel->equivalents(), "equivalent"), std::pair(kernel->ties(), "tie")}) {
      if (!lists) continue;
      if (lists->size() != keys.size())
        throw Error(where + " (" + kernel->name()->str() + "): " + std::to_string(lists->size()) +
                    " " + what + " lists for " + std::to_string(keys.size()) + " keys");
      for (const fb::Equivalents* list : *lists) {
        for (std::uint32_t ref : *list->configs())
          if (ref >= config_count)
            throw Error(where + " (" + kernel->name()->str() + "): " + what +
                        " config reference out of range");
        if (list->faster() < -1 ||
            (list->faster() >= 0 &&
             static_cast<std::uint32_t>(list->faster()) > list->configs()->size()))
          throw Error(where + " (" + kernel->name()->str() + "): " + what + " list says " +
                      std::to_string(list->faster()) + " of its " +
                      std::to_string(list->configs()->size()) +
                      " configs were timed faster than the entry's");
      }
    }
  }
}

Provenance read_provenance(const fb::Provenance* p, const std::string& origin) {
  Provenance out;
  if (!p) return out;
  const std::string where = origin + ": provenance";
  auto str = [&](const flatbuffers::String* s, const char* field) {
    return s ? std::string(text(s, where + "." + field)) : std::string();
  };
  out.source = str(p->source(), "source");
  out.tool_version = str(p->tool_version(), "tool_version");
  out.device_name = str(p->device_name(), "device_name");
  if (p->sm_count() < 0)
    throw Error(where + ".sm_count: " + std::to_string(p->sm_count()) +
                " is out of range; allowed 0 and up");
  out.sm_count = p->sm_count();
  out.driver_version = str(p->driver_version(), "driver_version");
  out.cuda_version = str(p->cuda_version(), "cuda_version");
  out.recorded_at = str(p->recorded_at(), "recorded_at");
  out.triton = str(p->triton(), "triton");
  const auto* names = p->package_names();
  const auto* versions = p->package_versions();
  if ((names ? names->size() : 0) != (versions ? versions->size() : 0))
    throw Error(origin + ": provenance package names and versions differ in count");
  for (flatbuffers::uoffset_t i = 0; names && i < names->size(); ++i) {
    const std::string at = where + ".packages[" + std::to_string(i) + "]";
    out.packages[std::string(text(names->Get(i), at))] = text(versions->Get(i), at);
  }
  if (p->ranks() < 0 || p->runs() < 0)
    throw Error(where + ": ranks and runs must be 0 or more, not " + std::to_string(p->ranks()) +
                " and " + std::to_string(p->runs()));
  out.ranks = p->ranks();
  out.runs = p->runs();
  for (flatbuffers::uoffset_t i = 0; p->mixed() && i < p->mixed()->size(); ++i)
    out.mixed.push_back(
        std::string(text(p->mixed()->Get(i), where + ".mixed[" + std::to_string(i) + "]")));
  return out;
}

bool param_equal(const fb::Param* stored, const Param& live) {
  return stored->value() == live.value && view(stored->name()) == live.name;
}

bool config_matches(const fb::TableConfig& stored, const Config& live) {
  if (stored.num_warps() != live.num_warps || stored.num_stages() != live.num_stages) return false;
  // Megatron's matching: every field equal, unset only equal to unset.
  if (stored.num_ctas() != live.num_ctas) return false;
  if (stored.maxnreg() ? (!live.maxnreg || *stored.maxnreg() != *live.maxnreg) : !!live.maxnreg)
    return false;
  if (stored.ir_override() ? (!live.ir_override || view(stored.ir_override()) != *live.ir_override)
                           : !!live.ir_override)
    return false;
  if (stored.algorithm() ? (!live.algorithm || view(stored.algorithm()) != *live.algorithm)
                         : !!live.algorithm)
    return false;
  const auto* params = stored.params();
  const std::size_t count = params ? params->size() : 0;
  if (count != live.params.size()) return false;
  for (std::size_t i = 0; i < count; ++i) {
    if (!param_equal(params->Get(static_cast<flatbuffers::uoffset_t>(i)), live.params[i]))
      return false;
  }
  return true;
}

TableEntry decode_config(const fb::TableConfig& stored) {
  TableEntry entry;
  if (stored.params()) {
    for (const fb::Param* p : *stored.params())
      entry.config.params.push_back(Param{p->name()->str(), p->value()});
  }
  entry.config.num_warps = stored.num_warps();
  entry.config.num_stages = stored.num_stages();
  entry.config.num_ctas = stored.num_ctas();
  if (stored.maxnreg()) entry.config.maxnreg = *stored.maxnreg();
  if (stored.ir_override()) entry.config.ir_override = stored.ir_override()->str();
  if (stored.algorithm()) entry.config.algorithm = stored.algorithm()->str();
  return entry;
}

// Index of `name` in a sorted vector, by binary search, or -1.
template <typename Vector, typename Name>
std::ptrdiff_t find_sorted(const Vector& items, std::string_view name, Name name_of) {
  std::size_t low = 0, high = items.size();
  while (low < high) {
    const std::size_t mid = low + (high - low) / 2;
    const std::string_view here = name_of(items.Get(static_cast<flatbuffers::uoffset_t>(mid)));
    if (here < name)
      low = mid + 1;
    else
      high = mid;
  }
  if (low < items.size() && name_of(items.Get(static_cast<flatbuffers::uoffset_t>(low))) == name)
    return static_cast<std::ptrdiff_t>(low);
  return -1;
}

// The kernels and flagged kernels of a table, and their string lists, are
// distinct objects in every file tunelock writes. A crafted file whose
// offsets point K times at one kernel of M keys would cost the verifier K x M
// string checks (hours at 8 MB), since strings are not the tables its limit
// counts. Read shallowly with the verifier's own checks before it runs; what
// cannot be read here is left for it to refuse.
bool lists_unshared(const std::uint8_t* data, std::size_t size) {
  flatbuffers::Verifier verifier = detail::bounded_verifier(data, size);
  const flatbuffers::uoffset_t root_at = size >= 8 ? verifier.VerifyOffset(0) : 0;
  if (!root_at || !verifier.VerifyTableStart(data + root_at)) return true;
  const auto* root = reinterpret_cast<const fb::TunedTable*>(data + root_at);
  const auto* root_fields = reinterpret_cast<const flatbuffers::Table*>(data + root_at);
  std::vector<const void*> objects;
  // Each element of `items` (a vector of tables), and the string list its
  // field `list` holds; false where something cannot be read.
  const auto collect = [&](const auto* items, flatbuffers::voffset_t list, auto list_of) {
    if (!items || !verifier.VerifyVector(items)) return items == nullptr;
    for (flatbuffers::uoffset_t i = 0; i < items->size(); ++i) {
      const auto at =
          static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(items->Data()) +
                                   i * sizeof(flatbuffers::uoffset_t) - data);
      const flatbuffers::uoffset_t offset = verifier.VerifyOffset(at);
      if (!offset || !verifier.VerifyTableStart(data + at + offset)) return false;
      const auto* item = reinterpret_cast<const flatbuffers::Table*>(data + at + offset);
      const bool readable = item->VerifyOffset(verifier, list);
      verifier.EndTable();
      if (!readable) return false;
      objects.push_back(item);
      if (const void* strings = list_of(item)) objects.push_back(strings);
    }
    return true;
  };
  const bool readable =
      root_fields->VerifyOffset(verifier, fb::TunedTable::VT_KERNELS) &&
      root_fields->VerifyOffset(verifier, fb::TunedTable::VT_NONDETERMINISTIC) &&
      root_fields->VerifyOffset(verifier, fb::TunedTable::VT_IDENTITIES) &&
      root_fields->VerifyOffset(verifier, fb::TunedTable::VT_INVARIANCE) &&
      collect(root->kernels(), fb::Kernel::VT_KEYS,
              [](const flatbuffers::Table* t) {
                return static_cast<const void*>(reinterpret_cast<const fb::Kernel*>(t)->keys());
              }) &&
      collect(root->nondeterministic(), fb::FlaggedKernel::VT_SIGNATURES,
              [](const flatbuffers::Table* t) {
                return static_cast<const void*>(
                    reinterpret_cast<const fb::FlaggedKernel*>(t)->signatures());
              }) &&
      collect(root->identities(), fb::KernelIdentity::VT_IDENTITY,
              [](const flatbuffers::Table* t) {
                return static_cast<const void*>(
                    reinterpret_cast<const fb::KernelIdentity*>(t)->identity());
              }) &&
      collect(root->invariance(), fb::InvariantKernel::VT_VARIANT, [](const flatbuffers::Table* t) {
        return static_cast<const void*>(reinterpret_cast<const fb::InvariantKernel*>(t)->variant());
      });
  verifier.EndTable();
  if (!readable) return true;
  std::sort(objects.begin(), objects.end());
  return std::adjacent_find(objects.begin(), objects.end()) == objects.end();
}

class BinaryTable final : public Table {
 public:
  BinaryTable(std::string bytes, const std::string& origin) : bytes_(std::move(bytes)) {
    if (!looks_like_binary_table(bytes_))
      throw Error(origin + ": not a binary tunelock table (no TLTB identifier)");
    root_ =
        &detail::open_sealed<fb::TunedTable>(bytes_, origin,
                                             {"binary table", fb::TunedTableIdentifier(),
                                              kBinaryFormatVersion, kReconvert, lists_unshared});
    check_semantics(*root_, origin);
    arch_ = root_->arch()->str();
    provenance_ = read_provenance(root_->provenance(), origin);
    for (const fb::Kernel* k : *root_->kernels())
      kernel_name_lengths_ |= std::uint64_t{1} << (k->name()->size() & 63);
    set_nondeterministic(read_nondeterministic(*root_, origin));
    set_identities(read_identities(*root_, origin));
    set_invariance(read_invariance(*root_, origin));
    check_invariance(*this, origin);
  }

  std::string_view arch() const override { return arch_; }
  const Provenance& provenance() const override { return provenance_; }

  std::optional<TableEntry> entry(std::string_view kernel, std::string_view key) const override {
    const fb::Kernel* k = find_kernel(kernel);
    const std::ptrdiff_t index = k ? find_key(*k, key) : -1;
    if (index < 0) return std::nullopt;
    const auto at = static_cast<flatbuffers::uoffset_t>(index);
    TableEntry out = decode_config(*root_->configs()->Get(k->configs()->Get(at)));
    if (k->equivalents()) {
      const fb::Equivalents& list = *k->equivalents()->Get(at);
      for (std::uint32_t ref : *list.configs())
        out.equivalent.push_back(decode_config(*root_->configs()->Get(ref)).config);
      if (list.faster() >= 0 && !out.equivalent.empty())
        out.faster_equivalents = static_cast<std::size_t>(list.faster());
    }
    if (k->ties())
      for (std::uint32_t ref : *k->ties()->Get(at)->configs())
        out.ties.push_back(decode_config(*root_->configs()->Get(ref)).config);
    return out;
  }

  bool has_kernel(std::string_view kernel) const override { return find_kernel(kernel) != nullptr; }

  EntryMatch match(std::string_view kernel, std::string_view key,
                   std::span<const Config> candidates) const override {
    const fb::TableConfig* stored = find(kernel, key);
    if (!stored) return {};
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (config_matches(*stored, candidates[i])) return {true, i};
    }
    return {true, std::nullopt};
  }

  std::vector<std::string> kernels() const override {
    std::vector<std::string> out;
    for (const fb::Kernel* k : *root_->kernels()) out.push_back(k->name()->str());
    return out;  // stored sorted
  }

  std::vector<std::string> keys(std::string_view kernel) const override {
    std::vector<std::string> out;
    const fb::Kernel* k = find_kernel(kernel);
    if (k) {
      for (const flatbuffers::String* key : *k->keys()) out.push_back(key->str());
    }
    return out;
  }

  std::size_t entry_count() const override {
    std::size_t count = 0;
    for (const fb::Kernel* k : *root_->kernels()) count += k->keys()->size();
    return count;
  }

 protected:
  bool may_hold_kernel_name_of_length(std::size_t length) const override {
    return (kernel_name_lengths_ >> (length & 63)) & 1;
  }

 private:
  const fb::Kernel* find_kernel(std::string_view name) const {
    const auto index =
        find_sorted(*root_->kernels(), name, [](const fb::Kernel* k) { return view(k->name()); });
    return index < 0 ? nullptr : root_->kernels()->Get(static_cast<flatbuffers::uoffset_t>(index));
  }

  static std::ptrdiff_t find_key(const fb::Kernel& k, std::string_view key) {
    return find_sorted(*k.keys(), key, [](const flatbuffers::String* s) { return view(s); });
  }

  const fb::TableConfig* find(std::string_view kernel, std::string_view key) const {
    const fb::Kernel* k = find_kernel(kernel);
    if (!k) return nullptr;
    const auto index = find_key(*k, key);
    if (index < 0) return nullptr;
    return root_->configs()->Get(k->configs()->Get(static_cast<flatbuffers::uoffset_t>(index)));
  }

  std::string bytes_;
  const fb::TunedTable* root_ = nullptr;
  std::string arch_;
  Provenance provenance_;
  std::uint64_t kernel_name_lengths_ = 0;  // bit (size % 64) set for every kernel name
};

}  // namespace

bool looks_like_binary_table(std::string_view bytes) {
  return bytes.size() >= 8 &&
         flatbuffers::BufferHasIdentifier(bytes.data(), fb::TunedTableIdentifier());
}

std::string table_to_binary(const Table& table) {
  flatbuffers::FlatBufferBuilder b(1024);
  // Identical configs are stored once: a table has many keys, few configs.
  std::map<std::string, std::uint32_t> config_index;  // by signature: equal configs, equal text
  std::vector<flatbuffers::Offset<fb::TableConfig>> configs;
  std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
  auto reference = [&](const Config& config) {
    auto [it, inserted] =
        config_index.try_emplace(signature(config), static_cast<std::uint32_t>(configs.size()));
    if (inserted) configs.push_back(write_config(b, TableEntry{config, {}}));
    return it->second;
  };
  for (const std::string& kernel : table.kernels()) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> keys;
    std::vector<std::uint32_t> refs;
    std::vector<std::vector<std::uint32_t>> equivalent_lists, tie_lists;
    std::vector<int> faster;  // parallel to equivalent_lists
    for (const std::string& key : table.keys(kernel)) {
      const TableEntry entry = *table.entry(kernel, key);
      keys.push_back(b.CreateString(key));
      refs.push_back(reference(entry.config));
      std::vector<std::uint32_t>& equivalent = equivalent_lists.emplace_back();
      for (const Config& c : entry.equivalent) equivalent.push_back(reference(c));
      faster.push_back(entry.faster_equivalents ? static_cast<int>(*entry.faster_equivalents) : -1);
      std::vector<std::uint32_t>& ties = tie_lists.emplace_back();
      for (const Config& c : entry.ties) ties.push_back(reference(c));
    }
    // Absent when no entry has any, so a table without them keeps its bytes.
    using ListsOffset =
        flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Equivalents>>>;
    auto write_lists = [&](const std::vector<std::vector<std::uint32_t>>& lists,
                           const std::vector<int>* faster_counts) {
      ListsOffset offset;
      if (std::all_of(lists.begin(), lists.end(), [](const auto& l) { return l.empty(); }))
        return offset;
      std::vector<flatbuffers::Offset<fb::Equivalents>> written;
      for (std::size_t i = 0; i < lists.size(); ++i)
        written.push_back(fb::CreateEquivalents(b, b.CreateVector(lists[i]),
                                                faster_counts ? (*faster_counts)[i] : -1));
      return b.CreateVector(written);
    };
    const ListsOffset equivalents_offset = write_lists(equivalent_lists, &faster);
    const ListsOffset ties_offset = write_lists(tie_lists, nullptr);
    const auto name = b.CreateString(kernel);
    const auto keys_offset = b.CreateVector(keys);
    const auto refs_offset = b.CreateVector(refs);
    kernels.push_back(
        fb::CreateKernel(b, name, keys_offset, refs_offset, equivalents_offset, ties_offset));
  }
  const auto arch = b.CreateString(std::string(table.arch()));
  const auto provenance = write_provenance(b, table.provenance());
  const auto configs_offset = b.CreateVector(configs);
  const auto kernels_offset = b.CreateVector(kernels);  // table.kernels() is sorted
  std::vector<flatbuffers::Offset<fb::FlaggedKernel>> flagged;
  for (const auto& [kernel, signatures] : table.nondeterministic()) {  // std::map: sorted
    const auto name = b.CreateString(kernel);
    const auto list = b.CreateVectorOfStrings(signatures);
    flagged.push_back(fb::CreateFlaggedKernel(b, name, list));
  }
  // Absent when empty, so a table without flags keeps its bytes.
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::FlaggedKernel>>> flagged_offset;
  if (!flagged.empty()) flagged_offset = b.CreateVector(flagged);
  std::vector<flatbuffers::Offset<fb::KernelIdentity>> identities;
  for (const auto& [kernel, identity] : table.identities()) {  // std::map: sorted
    const auto name = b.CreateString(kernel);
    identities.push_back(fb::CreateKernelIdentity(b, name, b.CreateString(identity)));
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::KernelIdentity>>>
      identities_offset;
  if (!identities.empty()) identities_offset = b.CreateVector(identities);
  std::vector<flatbuffers::Offset<fb::InvariantKernel>> invariance;
  for (const auto& [kernel, item] : table.invariance()) {  // std::map: sorted
    std::vector<flatbuffers::Offset<fb::InvariantGroup>> groups;
    for (const auto& [group_key, group] : item.groups)
      groups.push_back(fb::CreateInvariantGroup(
          b, b.CreateString(group_key), b.CreateVectorOfStrings(group.class_configs),
          b.CreateVector(group.proven), b.CreateVector(group.recorded)));
    invariance.push_back(fb::CreateInvariantKernel(b, b.CreateString(kernel),
                                                   b.CreateString(item.dim), b.CreateVector(groups),
                                                   b.CreateVectorOfStrings(item.variant)));
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::InvariantKernel>>>
      invariance_offset;
  if (!invariance.empty()) invariance_offset = b.CreateVector(invariance);
  const auto root =
      fb::CreateTunedTable(b, kBinaryFormatVersion, arch, provenance, configs_offset,
                           kernels_offset, flagged_offset, identities_offset, invariance_offset);
  fb::FinishTunedTableBuffer(b, root);
  return checksum_trailer::seal(
      std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()));
}

std::unique_ptr<Table> table_from_binary(std::string bytes, const std::string& origin) {
  if (bytes.empty()) throw Error(origin + ": empty file, expected a binary table");
  return std::make_unique<BinaryTable>(std::move(bytes), origin);
}

}  // namespace tunelock
