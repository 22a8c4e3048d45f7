#include "runtime/equivalent_cache.hpp"

#include <nlohmann/json.hpp>

#include "io/json_checks.hpp"
#include "tunelock/base/environment.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/io/json_reader.hpp"

namespace tunelock::detail {
namespace {

constexpr std::string_view kFormat = "tunelock equivalent cache";
constexpr int kFormatVersion = 1;

}  // namespace

std::string equivalent_cache_key(const std::string& device_name, const std::string& driver,
                                 const std::string& table_digest, const std::string& arch,
                                 const std::string& kernel, const std::string& key) {
  return device_name + "|" + driver + "|" + table_digest + "|" + arch + "|" + kernel + "|" + key;
}

std::filesystem::path EquivalentCache::path_from_environment() {
  const Environment env = process_environment();
  const std::string set = env_value(env, env_names::kEquivalentCache);
  if (set == "off") return {};
  if (!set.empty()) return set;
  const std::string xdg = env_value(env, "XDG_CACHE_HOME");
  if (!xdg.empty()) return std::filesystem::path(xdg) / "tunelock" / "equivalents.json";
  const std::string home = env_value(env, "HOME");
  if (home.empty()) return {};
  return std::filesystem::path(home) / ".cache" / "tunelock" / "equivalents.json";
}

void EquivalentCache::open(std::filesystem::path path) {
  std::lock_guard lock(mutex_);
  path_ = std::move(path);
  loaded_ = unreadable_ = false;
  picks_.clear();
  learned_.clear();
}

bool EquivalentCache::read_file_into(std::map<std::string, std::string>& picks) {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return true;  // none yet: an empty cache
  const std::string where = path_.string();
  try {
    using namespace json_checks;
    const nlohmann::json root = parse_json(read_file(path_), where);
    // Each member checked for its type before it is read, so the warning
    // names the file and the member (never a JSON library's own text).
    const nlohmann::json* format = root.is_object() ? find_member(root, "format") : nullptr;
    if (!format || !format->is_string() || format->get_ref<const std::string&>() != kFormat)
      throw Error(where + ": not a tunelock equivalent cache (no \"format\": \"" +
                  std::string(kFormat) + "\")");
    const nlohmann::json* version = find_member(root, "format_version");
    if (!version) throw Error(where + ": format_version: missing");
    if (require_int(*version, where + ": format_version") != kFormatVersion)
      throw Error(where + ": format_version " + version->dump() + " is not 1");
    const nlohmann::json* found = find_member(root, "picks");
    if (!found) throw Error(where + ": picks: missing");
    const nlohmann::json& stored = require_object(*found, where + ": picks");
    for (const auto& [key, signature] : stored.items()) {
      if (!signature.is_string() || signature.get<std::string>().empty())
        throw Error(where + ": picks[\"" + key + "\"]: expected a config signature");
      picks.emplace(key, signature.get<std::string>());
    }
    return true;
  } catch (const std::exception& e) {
    if (!unreadable_)
      logger().warn(
          "{}; the equivalents cache is ignored (every key is timed again) and left as it is: "
          "delete it to let tunelock rebuild it, or set TUNELOCK_EQUIVALENT_CACHE",
          e.what());
    unreadable_ = true;
    return false;
  }
}

void EquivalentCache::load_once() {
  if (loaded_ || path_.empty()) return;
  loaded_ = true;
  std::map<std::string, std::string> stored;
  if (read_file_into(stored)) picks_.insert(stored.begin(), stored.end());
}

std::optional<std::string> EquivalentCache::find(const std::string& key) {
  std::lock_guard lock(mutex_);
  load_once();
  if (unreadable_) return std::nullopt;
  const auto it = picks_.find(key);
  if (it == picks_.end()) return std::nullopt;
  return it->second;
}

void EquivalentCache::remember(const std::string& key, std::string signature) {
  std::lock_guard lock(mutex_);
  if (path_.empty()) return;
  picks_.insert_or_assign(key, signature);
  learned_.insert_or_assign(key, std::move(signature));
}

void EquivalentCache::write() {
  std::lock_guard lock(mutex_);
  if (path_.empty() || learned_.empty() || unreadable_) return;
  std::map<std::string, std::string> merged;
  if (!read_file_into(merged)) return;
  for (const auto& [key, signature] : learned_) merged.insert_or_assign(key, signature);
  try {
    std::filesystem::create_directories(path_.parent_path());
    const nlohmann::json out = {
        {"format", kFormat}, {"format_version", kFormatVersion}, {"picks", merged}};
    write_file_atomically(path_, out.dump(1) + "\n");
    learned_.clear();
  } catch (const std::exception& e) {
    logger().warn("the equivalents cache {} was not written: {}", path_.string(), e.what());
  }
}

}  // namespace tunelock::detail
