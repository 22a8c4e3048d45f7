#include "tunelock/tables/table_json.hpp"

#include "io/json_checks.hpp"
#include "tables/table_entry_json.hpp"
#include "tables/table_json_fast.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/tables/provenance_json.hpp"
#include "tunelock/tables/table_format.hpp"
#include "tunelock/tables/table_invariance.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

// `prefix` is the path of `object` with its trailing separator ("t.json: "
// at the root, "t.json: provenance." below it).
std::string optional_string(const json& object, std::string_view field, const std::string& prefix) {
  const json* value = find_member(object, field);
  return value ? require_string(*value, prefix + std::string(field)) : std::string();
}

Provenance provenance_from(const json& root, const std::string& where) {
  Provenance out;
  out.source = optional_string(root, "source", where);
  out.triton = optional_string(root, "triton", where);
  if (const json* packages = find_member(root, "packages")) {
    const std::string at = where + "packages";
    for (const auto& [name, version] : require_object(*packages, at).items())
      out.packages[name] = require_string(version, member_path(at, name));
  }
  if (const json* tool = find_member(root, "provenance")) {
    const std::string at = where + "provenance";
    require_object(*tool, at);
    // The device fields, as records and audits hold them; triton and the
    // packages sit at the root in a table (Megatron's layout).
    const Provenance device = device_from_json(*tool, at);
    out.tool_version = device.tool_version;
    out.device_name = device.device_name;
    out.driver_version = device.driver_version;
    out.cuda_version = device.cuda_version;
    out.recorded_at = device.recorded_at;
    out.sm_count = device.sm_count;
    if (const json* ranks = find_member(*tool, "ranks"))
      out.ranks = require_int(*ranks, member_path(at, "ranks"), 0);
    if (const json* runs = find_member(*tool, "runs"))
      out.runs = require_int(*runs, member_path(at, "runs"), 0);
    if (const json* mixed = find_member(*tool, "mixed")) {
      const std::string mixed_at = member_path(at, "mixed");
      require_array(*mixed, mixed_at);
      for (std::size_t i = 0; i < mixed->size(); ++i)
        out.mixed.push_back(require_string((*mixed)[i], index_path(mixed_at, i)));
    }
  }
  return out;
}

// `{kernel: [signature, ...]}`: the configs merge flagged nondeterministic.
NondeterministicConfigs nondeterministic_from(const json& value, const std::string& at) {
  NondeterministicConfigs out;
  for (const auto& [kernel, list] : require_object(value, at).items()) {
    check_kernel_name(kernel, at);
    const std::string kernel_at = member_path(at, kernel);
    require_array(list, kernel_at);
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string sig = require_string(list[i], index_path(kernel_at, i));
      if (sig.empty())
        throw Error(index_path(kernel_at, i) + ": empty; expected a config signature");
      out[kernel].push_back(std::move(sig));
    }
  }
  return out;
}

// `{kernel: identity}`: the code each kernel's entries were timed on.
KernelIdentities identities_from(const json& value, const std::string& at) {
  KernelIdentities out;
  for (const auto& [kernel, identity] : require_object(value, at).items()) {
    check_kernel_name(kernel, at);
    std::string text = require_string(identity, member_path(at, kernel));
    if (text.empty())
      throw Error(member_path(at, kernel) + ": empty; expected the identity of the kernel's code");
    out[kernel] = std::move(text);
  }
  return out;
}

}  // namespace

namespace detail {

std::unique_ptr<InMemoryTable> table_from_json_header(const json& root, const std::string& origin,
                                                      InMemoryTable&& entries) {
  const std::string where = origin + ": ";
  require_object(root, origin);
  if (const json* version = find_member(root, "format_version")) {
    const std::int64_t number = require_int(*version, where + "format_version", 1);
    if (number > kTableFormatVersion) {
      throw Error(where + "format_version " + std::to_string(number) +
                  " is newer than this tunelock supports (" + std::to_string(kTableFormatVersion) +
                  "); upgrade tunelock");
    }
  }
  const json* arch = find_member(root, "arch");
  if (!arch) throw Error(where + "arch: missing; a table names its architecture, e.g. \"sm90\"");
  const std::string arch_name = require_string(*arch, where + "arch");
  check_arch_name(arch_name, where + "arch");

  const json* kernels = find_member(root, "kernels");
  if (!kernels) throw Error(where + "kernels: missing; expected {kernel: {key: config}}");
  require_object(*kernels, where + "kernels");
  for (const auto& [kernel, keys] : kernels->items()) {
    // The entries were read as they streamed by; what is left here is a
    // kernel that is not an object, or one without entries.
    check_kernel_name(kernel, where + "kernels");
    require_object(keys, where + "kernels." + kernel);
  }
  auto table =
      std::make_unique<InMemoryTable>(arch_name, provenance_from(root, where), std::move(entries));
  if (const json* flagged = find_member(root, "nondeterministic"))
    table->set_nondeterministic(nondeterministic_from(*flagged, where + "nondeterministic"));
  if (const json* identities = find_member(root, "identities"))
    table->set_identities(identities_from(*identities, where + "identities"));
  if (const json* invariance = find_member(root, "invariance")) {
    table->set_invariance(batch_invariance_from_json(*invariance, origin + ": invariance"));
    check_invariance(*table, origin);
  }
  return table;
}

std::unique_ptr<InMemoryTable> full_table_from_json(std::string_view text,
                                                    const std::string& origin) {
  const std::string where = origin + ": ";
  // Entries are read as the parser finishes each one, so a million-entry
  // table never exists as JSON in memory all at once.
  InMemoryTable entries("");
  std::string kernel_where;  // "t.json: kernels.<kernel>", kept while a kernel's keys stream by
  const json root =
      parse_json(text, origin, [&](std::span<const std::string_view> keys, json& value) {
        if (keys.size() != 3 || keys[0] != "kernels") return false;
        const std::string_view kernel = keys[1], key = keys[2];
        if (std::string_view(kernel_where)
                .substr(std::min(kernel_where.size(), where.size() + 8)) != kernel) {
          check_kernel_name(kernel, where + "kernels");
          kernel_where = where + "kernels." + std::string(kernel);
        }
        check_key(key, kernel_where);
        entries.set(std::string(kernel), std::string(key),
                    table_entry_from_json(value, kernel_where + "[\"" + std::string(key) + "\"]"));
        return true;
      });
  return table_from_json_header(root, origin, std::move(entries));
}

}  // namespace detail

std::unique_ptr<InMemoryTable> table_from_json(std::string_view text, const std::string& origin) {
  if (auto table = detail::fast_table_from_json(text, origin)) return table;
  return detail::full_table_from_json(text, origin);
}

}  // namespace tunelock

namespace tunelock {

std::string table_to_json(const Table& table) {
  using nlohmann::json;
  const Provenance& p = table.provenance();
  json kernels = json::object();
  for (const std::string& kernel : table.kernels()) {
    json keys = json::object();
    for (const std::string& key : table.keys(kernel))
      keys[key] = table_entry_to_json(*table.entry(kernel, key));
    kernels[kernel] = std::move(keys);
  }
  json packages = json::object();
  for (const auto& [name, version] : p.packages) packages[name] = version;
  json root = {
      {"arch", std::string(table.arch())},
      {"format_version", kTableFormatVersion},
      {"kernels", std::move(kernels)},
      {"packages", std::move(packages)},
      {"provenance", device_to_json(p)},
      {"source", p.source},
      {"triton", p.triton},
  };
  // Who voted and what differed: absent in tables no merge wrote.
  json& written = root["provenance"];
  written.erase("triton");  // at the root, as Megatron writes it
  written.erase("packages");
  if (p.ranks) written["ranks"] = p.ranks;
  if (p.runs) written["runs"] = p.runs;
  if (!p.mixed.empty()) written["mixed"] = p.mixed;
  if (!table.nondeterministic().empty()) {  // absent: as before the audit reached tables
    json flagged = json::object();
    for (const auto& [kernel, signatures] : table.nondeterministic()) flagged[kernel] = signatures;
    root["nondeterministic"] = std::move(flagged);
  }
  if (!table.identities().empty()) {  // absent: as before tables knew their kernels' code
    json identities = json::object();
    for (const auto& [kernel, identity] : table.identities()) identities[kernel] = identity;
    root["identities"] = std::move(identities);
  }
  if (!table.invariance().empty())  // absent: recorded without batch invariance
    root["invariance"] = batch_invariance_to_json(table.invariance());
  return root.dump(1) + "\n";  // nlohmann's object is a std::map: keys come out sorted
}

}  // namespace tunelock
