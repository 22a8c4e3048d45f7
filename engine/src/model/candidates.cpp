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

}  // namespace tunelock
