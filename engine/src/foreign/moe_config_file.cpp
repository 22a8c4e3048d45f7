#include "tunelock/foreign/moe_config_file.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/model/tuning_key.hpp"

namespace tunelock {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kNameForm =
    "E=<experts>,N=<n>,device_name=<device>[,dtype=<dtype>][,block_shape=[<n>,<k>]].json";

// The tools' own order of a config's fields (benchmark_moe.py's): these,
// then num_warps and num_stages, then ROCm's three, then any other in the
// order the config holds them. A written file keeps it whatever order a
// table's JSON read them in.
constexpr std::string_view kLeadingParams[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                               "GROUP_SIZE_M"};
constexpr std::string_view kTrailingParams[] = {"waves_per_eu", "matrix_instr_nonkdim", "kpack"};
constexpr std::string_view kRequiredParams[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"};

// A positive decimal integer as the tools write one: no sign, no leading zero.
std::optional<std::int64_t> positive(std::string_view text) {
  if (text.empty() || text.front() == '0' || text.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

[[noreturn]] void bad_name(std::string_view file_name, const std::string& why) {
  throw Error(std::string(file_name) + ": not a fused-MoE config file name (" + why +
              "); expected " + std::string(kNameForm));
}

// A file name's value: printable, and none of the characters a table key
// or a file name cannot carry.
bool plain_value(std::string_view value) {
  return !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return c > ' ' && c < 127 && c != '|' && c != '=' && c != '/' && c != ',';
  });
}

}  // namespace

MoeShape moe_shape_from_file_name(std::string_view file_name) {
  std::string_view name = file_name;
  if (const auto slash = name.find_last_of('/'); slash != std::string_view::npos)
    name.remove_prefix(slash + 1);
  if (!name.ends_with(".json")) bad_name(file_name, "it does not end in .json");
  name.remove_suffix(5);
  MoeShape shape;
  // block_shape=[n,k] holds a comma of its own: taken off the end first.
  if (const auto at = name.find(",block_shape=["); at != std::string_view::npos) {
    std::string_view block = name.substr(at + 14);
    if (!block.ends_with(']')) bad_name(file_name, "block_shape is not [<n>,<k>]");
    block.remove_suffix(1);
    const auto comma = block.find(',');
    if (comma == std::string_view::npos || !positive(block.substr(0, comma)) ||
        !positive(block.substr(comma + 1)))
      bad_name(file_name, "block_shape is not [<n>,<k>] of positive integers");
    shape.block_shape = std::string(block);
    name = name.substr(0, at);
  }
  std::vector<std::pair<std::string_view, std::string_view>> parts;
  while (!name.empty()) {
    const auto comma = name.find(',');
    const std::string_view part = name.substr(0, comma);
    const auto equals = part.find('=');
    if (equals == std::string_view::npos)
      bad_name(file_name, "part '" + std::string(part) + "' is not <name>=<value>");
    parts.emplace_back(part.substr(0, equals), part.substr(equals + 1));
    name = comma == std::string_view::npos ? std::string_view() : name.substr(comma + 1);
  }
  const std::string_view order[] = {"E", "N", "device_name", "dtype"};
  std::size_t next = 0;
  for (const auto& [key, value] : parts) {
    while (next < std::size(order) && order[next] != key) ++next;
    if (next == std::size(order))
      bad_name(file_name, "'" + std::string(key) + "' is unknown or out of order");
    if (key == "E" || key == "N") {
      const auto number = positive(value);
      if (!number) bad_name(file_name, std::string(key) + " is not a positive integer");
      (key == "E" ? shape.experts : shape.n) = *number;
    } else {
      if (!plain_value(value))
        bad_name(file_name, std::string(key) + " '" + std::string(value) +
                                "' is empty or holds "
                                "a space, '|', '=', "
                                "',' or '/'");
      (key == "device_name" ? shape.device : shape.dtype) = std::string(value);
    }
    ++next;
  }
  if (shape.experts == 0 || shape.n == 0 || shape.device.empty())
    bad_name(file_name, "E, N and device_name are needed");
  return shape;
}

std::string moe_file_name(const MoeShape& shape) {
  std::string name = "E=" + std::to_string(shape.experts) + ",N=" + std::to_string(shape.n) +
                     ",device_name=" + shape.device;
  if (!shape.dtype.empty()) name += ",dtype=" + shape.dtype;
  if (!shape.block_shape.empty()) name += ",block_shape=[" + shape.block_shape + "]";
  return name + ".json";
}

MoeConfigFile moe_config_file_from_json(std::string_view text, const std::string& file_name) {
  MoeConfigFile file;
  file.shape = moe_shape_from_file_name(file_name);
  const json root = parse_json(text, file_name);
  if (!root.is_object())
    throw Error(file_name +
                ": a fused-MoE config file is a JSON object from batch size to "
                "config, not " +
                std::string(root.type_name()));
  for (const auto& [member, value] : root.items()) {
    const std::string where = file_name + ": \"" + member + "\"";
    if (member == "triton_version") {
      if (!value.is_string() || value.get<std::string>().empty())
        throw Error(where + ": expected the Triton version as a non-empty string");
      file.triton_version = value.get<std::string>();
      continue;
    }
    const auto batch = positive(member);
    if (!batch)
      throw Error(where +
                  ": expected a batch size (a positive integer, as the tools write it) "
                  "or \"triton_version\"");
    if (!value.is_object()) throw Error(where + ": expected a config object");
    Config config;  // its params sorted by name, as a Config keeps them: the JSON's order
    std::optional<std::int64_t> warps, stages;
    for (const auto& [field, number] : value.items()) {
      if (!number.is_number_integer())
        throw Error(where + "." + field + ": expected an integer, got " + number.dump());
      const std::int64_t n = number.get<std::int64_t>();
      if (field == "num_warps" || field == "num_stages") {
        if (n <= 0 || n > 1024) throw Error(where + "." + field + ": expected 1 to 1024");
        (field == "num_warps" ? warps : stages) = n;
        continue;
      }
      config.params.push_back({field, n});
    }
    for (std::string_view name : kRequiredParams)
      if (!config.param(name)) throw Error(where + ": no " + std::string(name));
    if (!warps || !stages) throw Error(where + ": needs num_warps and num_stages");
    config.num_warps = static_cast<int>(*warps);
    config.num_stages = static_cast<int>(*stages);
    file.by_batch.emplace_back(*batch, std::move(config));
  }
  if (file.by_batch.empty()) throw Error(file_name + ": holds no batch size");
  std::sort(file.by_batch.begin(), file.by_batch.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return file;
}

std::string moe_config_file_to_json(const MoeConfigFile& file) {
  ordered_json root = ordered_json::object();
  if (file.triton_version) root["triton_version"] = *file.triton_version;
  for (const auto& [batch, config] : file.by_batch) {
    ordered_json entry = ordered_json::object();
    for (std::string_view name : kLeadingParams)
      if (const auto value = config.param(name)) entry[std::string(name)] = *value;
    entry["num_warps"] = config.num_warps;
    entry["num_stages"] = config.num_stages;
    for (std::string_view name : kTrailingParams)
      if (const auto value = config.param(name)) entry[std::string(name)] = *value;
    for (const Param& p : config.params)
      if (!entry.contains(p.name)) entry[p.name] = p.value;
    root[std::to_string(batch)] = std::move(entry);
  }
  // As Python's json.dump(indent=4) writes it (ASCII only), then a newline.
  return root.dump(4, ' ', true) + "\n";
}

std::string moe_key(const MoeShape& shape, std::int64_t batch) {
  std::vector<KeyArg> args{{"E", shape.experts}, {"N", shape.n}, {"device", shape.device}};
  if (!shape.dtype.empty()) args.push_back({"dtype", shape.dtype});
  if (!shape.block_shape.empty()) args.push_back({"block_shape", shape.block_shape});
  args.push_back({"M", batch});
  return tuning_key(args, {});
}

std::pair<MoeShape, std::int64_t> moe_key_parts(std::string_view key) {
  const auto bad = [&](const std::string& why) {
    return Error(std::string(kFusedMoeKernel) + " key '" + std::string(key) + "': " + why +
                 "; expected E=<experts>|N=<n>|device=<device>[|dtype=<dtype>][|block_shape=<n>,"
                 "<k>]|M=<batch>");
  };
  std::map<std::string, std::string, std::less<>> fields;
  std::string_view rest = key;
  while (!rest.empty()) {
    const auto bar = rest.find('|');
    const std::string_view part = rest.substr(0, bar);
    const auto equals = part.find('=');
    if (equals == std::string_view::npos) throw bad("'" + std::string(part) + "' has no '='");
    if (!fields.emplace(std::string(part.substr(0, equals)), std::string(part.substr(equals + 1)))
             .second)
      throw bad("'" + std::string(part.substr(0, equals)) + "' twice");
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
  }
  MoeShape shape;
  std::int64_t batch = 0;
  for (const auto& [name, value] : fields) {
    if (name == "E" || name == "N" || name == "M") {
      const auto number = positive(value);
      if (!number) throw bad(name + " is not a positive integer");
      (name == "E" ? shape.experts : name == "N" ? shape.n : batch) = *number;
    } else if (name == "device") {
      shape.device = value;
    } else if (name == "dtype") {
      shape.dtype = value;
    } else if (name == "block_shape") {
      shape.block_shape = value;
    } else {
      throw bad("'" + name + "' is no part of a fused-MoE key");
    }
  }
  if (shape.experts == 0 || shape.n == 0 || shape.device.empty() || batch == 0)
    throw bad("E, N, device and M are needed");
  if (moe_key(shape, batch) != key) throw bad("its parts are not in the order tunelock writes");
  return {shape, batch};
}

InMemoryTable moe_table_from_files(std::span<const std::filesystem::path> paths,
                                   const std::string& arch) {
  std::vector<std::filesystem::path> files;
  for (const std::filesystem::path& path : paths) {
    if (!std::filesystem::is_directory(path)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::filesystem::path> inside;
    for (const auto& item : std::filesystem::directory_iterator(path)) {
      const std::string name = item.path().filename().string();
      if (item.is_regular_file() && name.starts_with("E=") && name.ends_with(".json"))
        inside.push_back(item.path());
    }
    if (inside.empty())
      throw Error(path.string() + ": no fused-MoE config file (" + std::string(kNameForm) +
                  ") in this folder");
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  if (files.empty()) throw Error("no fused-MoE config files given");
  std::optional<std::string> triton;
  std::string triton_from;
  std::map<std::string, std::string> seen;  // file name -> path, for a shape given twice
  InMemoryTable entries(arch);
  for (const std::filesystem::path& path : files) {
    const std::string name = path.filename().string();
    if (const auto [at, added] = seen.emplace(name, path.string()); !added)
      throw Error(path.string() + ": the same shape as " + at->second +
                  " (import each tuning run into a table of its own, then merge them)");
    const MoeConfigFile file = moe_config_file_from_json(read_file(path), path.string());
    const std::string version = file.triton_version.value_or("");
    if (triton && *triton != version)
      throw Error(path.string() + ": triton_version '" + version + "' differs from " + triton_from +
                  "'s '" + *triton +
                  "' (configs tuned on other Triton versions go into tables of their own)");
    triton = version;
    triton_from = path.string();
    for (const auto& [batch, config] : file.by_batch)
      entries.set(std::string(kFusedMoeKernel), moe_key(file.shape, batch), TableEntry{config});
  }
  Provenance provenance;
  provenance.source = "fused-MoE config files (" + std::to_string(files.size()) + ")";
  if (triton && !triton->empty()) provenance.packages["triton"] = *triton;
  return InMemoryTable(arch, std::move(provenance), std::move(entries));
}

std::vector<std::pair<std::string, std::string>> moe_files_from_table(const Table& table) {
  if (!table.has_kernel(kFusedMoeKernel))
    throw Error("the " + std::string(table.arch()) + " table has no " +
                std::string(kFusedMoeKernel) + " entries to write as fused-MoE config files");
  std::map<std::string, MoeConfigFile> by_name;
  for (const std::string& key : table.keys(kFusedMoeKernel)) {
    const auto [shape, batch] = moe_key_parts(key);
    MoeConfigFile& file = by_name[moe_file_name(shape)];
    file.shape = shape;
    if (const auto triton = table.provenance().packages.find("triton");
        triton != table.provenance().packages.end())
      file.triton_version = triton->second;
    file.by_batch.emplace_back(batch, table.entry(kFusedMoeKernel, key)->config);
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [name, file] : by_name) {
    std::sort(file.by_batch.begin(), file.by_batch.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out.emplace_back(name, moe_config_file_to_json(file));
  }
  return out;
}

}  // namespace tunelock
