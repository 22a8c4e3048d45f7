#include "tunelock/model/candidates.hpp"

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/model/config_json.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

std::vector<Config> configs_from(const json& value, const std::string& where) {
  require_array(value, where);
  if (value.empty()) throw Error(where + ": no configs; a kernel needs at least one candidate");
  std::vector<Config> out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i)
    out.push_back(candidate_from_json(value[i], index_path(where, i)));
  return out;
}

KernelCandidates kernel_from(const json& value, const std::string& where) {
  require_object(value, where);
  KernelCandidates out;
  const json* configs = find_member(value, "configs");
  if (!configs) throw Error(where + ": missing \"configs\" (the candidate list)");
  out.configs = configs_from(*configs, member_path(where, "configs"));
  if (const json* key = find_member(value, "key")) {
    const std::string key_where = member_path(where, "key");
    require_array(*key, key_where);
    for (std::size_t i = 0; i < key->size(); ++i)
      out.key_args.push_back(require_string((*key)[i], index_path(key_where, i)));
  }
  return out;
}

}  // namespace

std::string CandidateManifest::resolve(std::string_view name, const std::string& origin) const {
  if (single_kernel || kernels.contains(name)) return std::string(name);
  std::vector<std::string> bare_matches;
  if (name.find('.') == std::string_view::npos) {
    for (const auto& [listed, unused] : kernels) {
      const std::size_t dot = listed.rfind('.');
      if (dot != std::string::npos && std::string_view(listed).substr(dot + 1) == name)
        bare_matches.push_back(listed);
    }
  }
  if (bare_matches.size() == 1) return bare_matches.front();
  auto joined = [](const auto& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  if (bare_matches.size() > 1)
    throw Error(origin + ": kernel '" + std::string(name) + "' is ambiguous; the manifest has " +
                joined(bare_matches) + " (type the qualified name)");
  std::vector<std::string> known;
  for (const auto& [listed, unused] : kernels) known.push_back(listed);
  throw Error(origin + ": no kernel '" + std::string(name) +
              "'; the manifest has: " + joined(known));
}

const KernelCandidates& CandidateManifest::find(std::string_view name,
                                                const std::string& origin) const {
  if (single_kernel) return kernels.begin()->second;
  return kernels.find(resolve(name, origin))->second;
}

CandidateManifest candidates_from_json(std::string_view text, const std::string& origin) {
  const json root = parse_json(text, origin);
  require_object(root, origin);
  CandidateManifest manifest;
  if (find_member(root, "configs")) {
    manifest.single_kernel = true;
    manifest.kernels.emplace("", kernel_from(root, origin + ": "));
    return manifest;
  }
  const json* kernels = find_member(root, "kernels");
  if (!kernels) {
    throw Error(origin +
                ": expected {\"configs\": [...]} or {\"kernels\": {name: {\"key\": [...], "
                "\"configs\": [...]}}}");
  }
  const std::string where = origin + ": kernels";
  require_object(*kernels, where);
  for (const auto& [name, kernel] : kernels->items()) {
    if (name.empty()) throw Error(where + ": empty kernel name");
    manifest.kernels.emplace(name, kernel_from(kernel, member_path(where, name)));
  }
  if (manifest.kernels.empty()) throw Error(where + ": no kernels");
  return manifest;
}

void check_key_names(const KernelCandidates& kernel, std::string_view key,
                     const std::string& origin) {
  if (kernel.key_args.empty() || key == "*") return;  // nothing declared to check against
  std::string expected;
  for (const std::string& name : kernel.key_args)
    expected += (expected.empty() ? "" : "|") + name + "=<value>";
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = key.find('|', start);
    parts.push_back(key.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  // A key that names other arguments, or joins them with commas, matches no
  // entry and would fall through to the table's '*' entry without a word.
  for (std::size_t i = 0; i < kernel.key_args.size(); ++i) {
    const std::string want = kernel.key_args[i] + "=";
    if (i >= parts.size() || !parts[i].starts_with(want) ||
        parts[i].find(',') != std::string_view::npos) {
      throw Error(origin + " '" + std::string(key) + "': part " + std::to_string(i + 1) +
                  " should be " + want + "<value>: the kernel's key is " + expected +
                  ", then the dtypes, every part separated by '|'");
    }
  }
}

}  // namespace tunelock
