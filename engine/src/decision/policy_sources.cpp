#include "tunelock/decision/policy_sources.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <vector>

#include "base/text.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/base/variables.hpp"
#include "tunelock/decision/modes.hpp"

namespace tunelock {
namespace {

constexpr std::string_view kPrefix = "TUNELOCK_";
constexpr std::string_view kMegatronPrefix = "MCORE_AUTOTUNE_";
constexpr std::string_view kTritonBlockPrefix = "TRITON_AUTOTUNE_";

std::string trim(std::string_view value) { return std::string(text::trimmed(value)); }

[[noreturn]] void invalid(const std::string& origin, std::string_view value,
                          std::string_view allowed) {
  invalid_value(origin, value, allowed);
}

bool parse_bool(std::string_view raw, const std::string& origin) {
  return parse_boolean(origin, raw);
}

std::int64_t parse_int(std::string_view raw, const std::string& origin, std::string_view allowed) {
  return parse_integer(origin, raw, std::numeric_limits<std::int64_t>::min(),
                       std::numeric_limits<std::int64_t>::max(), allowed);
}

int parse_count(std::string_view raw, const std::string& origin) {
  constexpr std::string_view allowed = "0 (off) or a positive integer";
  const std::int64_t value = parse_int(raw, origin, allowed);
  if (value < 0 || value > std::numeric_limits<int>::max()) invalid(origin, raw, allowed);
  return static_cast<int>(value);
}

double parse_seconds(std::string_view raw, const std::string& origin) {
  constexpr std::string_view allowed = "a positive number of seconds, decimal, 0.001 to 1e9";
  const std::string value = trim(raw);
  // Decimal only: strtod would also take hex ("0x10") and "inf"/"nan".
  const bool decimal = std::all_of(value.begin(), value.end(), [](unsigned char c) {
    return std::isdigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  });
  char* end = nullptr;
  const double out = std::strtod(value.c_str(), &end);
  // Below a millisecond the deadline would round to 0 ms: no wait at all.
  if (value.empty() || !decimal || end != value.c_str() + value.size() || !(out >= 0.001) ||
      out > 1e9)
    invalid(origin, raw, allowed);
  return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    std::string item = trim(text.substr(start, end - start));
    if (!item.empty()) out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

Mode parse_mode(std::string_view raw, const std::string& origin) {
  const std::string value = trim(raw);
  if (value == "auto") return Mode::automatic;
  if (value == "pinned") return Mode::pinned;
  if (value == "record") return Mode::record;
  if (value == "audit") return Mode::audit;
  if (value == "consensus") return Mode::consensus;
  invalid(origin, raw, "auto, pinned, record, audit, consensus");
}

Equivalent parse_equivalent(std::string_view raw, const std::string& origin) {
  const std::string value = trim(raw);
  if (value == "off") return Equivalent::off;
  if (value == "timed") return Equivalent::timed;
  invalid(origin, raw, "off, timed");
}

ProvenanceCheck parse_provenance_check(std::string_view raw, const std::string& origin) {
  const std::string value = trim(raw);
  if (value == "warn") return ProvenanceCheck::warn;
  if (value == "strict") return ProvenanceCheck::strict;
  if (value == "ignore") return ProvenanceCheck::ignore;
  invalid(origin, raw, "warn, strict, ignore");
}

BlockSize parse_block_size(std::string_view name, std::string_view value,
                           const std::string& origin) {
  constexpr std::string_view allowed = "a positive integer";
  const std::int64_t size = parse_int(value, origin, allowed);
  if (size <= 0) invalid(origin, value, allowed);
  return BlockSize{std::string(name), size};
}

// One settable field: its key/value name, its environment suffix, and how a
// text value lands in the policy. Every source goes through this table.
struct Field {
  std::string_view key;
  std::string_view env;  // after TUNELOCK_ / MCORE_AUTOTUNE_; empty = no variable
  void (*apply)(Policy&, std::string_view value, const std::string& origin);
  // An older name of the variable, still read (the primary name wins).
  std::string_view env_alias = {};
};

constexpr std::array<Field, 19> kFields{{
    {"mode", "MODE",
     [](Policy& p, std::string_view v, const std::string& o) { p.mode = parse_mode(v, o); }},
    {"modules", "MODULES",
     [](Policy& p, std::string_view v, const std::string&) { p.modules = split(v, ','); }},
    {"config_invariant", "CONFIG_INVARIANT",
     [](Policy& p, std::string_view v, const std::string&) { p.config_invariant = split(v, ','); }},
    {"table_path", "TABLE_PATH",
     [](Policy& p, std::string_view v, const std::string&) { p.table_path = split(v, ':'); }},
    {"record_path", "RECORD",
     [](Policy& p, std::string_view v, const std::string&) { p.record_path = trim(v); }},
    {"on_miss", "ON_MISS",
     [](Policy& p, std::string_view v, const std::string& o) { p.on_miss = parse_on_miss(v, o); }},
    {"block_sizes", "",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.block_sizes = parse_block_sizes(v, o);
     }},
    {"verify_every", "VERIFY_EVERY",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.verify_every = parse_count(v, o);
     },
     "VERIFY"},
    {"verify_strict", "VERIFY_STRICT",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.verify_strict = parse_bool(v, o);
     }},
    {"enumerate", "ENUMERATE",
     [](Policy& p, std::string_view v, const std::string& o) { p.enumerate = parse_bool(v, o); }},
    {"chaos", "CHAOS",
     [](Policy& p, std::string_view v, const std::string& o) { p.chaos = parse_bool(v, o); }},
    {"deterministic", "DETERMINISTIC",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.deterministic = parse_bool(v, o);
     }},
    {"verify_timeout_s", "VERIFY_TIMEOUT",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.verify_timeout_s = parse_seconds(v, o);
     }},
    {"nondeterministic", "NONDETERMINISTIC",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.nondeterministic = parse_declared_configs(v, o);
     }},
    {"check_bits", "CHECK_BITS",
     [](Policy& p, std::string_view v, const std::string& o) { p.check_bits = parse_bool(v, o); }},
    {"equivalent", "EQUIVALENT",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.equivalent = parse_equivalent(v, o);
     }},
    {"provenance", "PROVENANCE",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.provenance = parse_provenance_check(v, o);
     }},
    {"identity", "IDENTITY",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.identity = parse_provenance_check(v, o);
     }},
    {"batch_invariant", "BATCH_INVARIANT",
     [](Policy& p, std::string_view v, const std::string& o) {
       p.batch_invariant = parse_bool(v, o);
     }},
}};

std::string known_keys() {
  std::string out;
  for (std::string_view key : policy_keys()) out += (out.empty() ? "" : ", ") + std::string(key);
  return out;
}

// The non-empty value of `name`, if set.
const std::string* lookup(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() || trim(it->second).empty() ? nullptr : &it->second;
}

// Every variable name after its prefix: for MCORE_AUTOTUNE_, the policy
// fields (and their older names); for TUNELOCK_, the documented variables.
std::vector<std::string_view> known_suffixes(bool tunelock_prefix) {
  std::vector<std::string_view> out;
  if (tunelock_prefix) {
    // TUNELOCK_ names: exactly the documented ones (the policy fields among them).
    for (const VariableInfo& v : documented_variables())
      if (!v.name.starts_with("TUNELOCK_BLOCK_")) out.push_back(v.name.substr(kPrefix.size()));
    return out;
  }
  for (const Field& f : kFields) {
    if (!f.env.empty()) out.push_back(f.env);
    if (!f.env_alias.empty()) out.push_back(f.env_alias);
  }
  return out;
}

// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

void reject_unknown_variables(const Environment& env) {
  for (const auto& [name, value] : env) {
    for (std::string_view prefix : {kPrefix, kMegatronPrefix}) {
      std::string_view view = name;
      if (!view.starts_with(prefix) || trim(value).empty()) continue;
      const std::string_view suffix = view.substr(prefix.size());
      if (suffix.starts_with("BLOCK")) continue;
      const std::vector<std::string_view> known = known_suffixes(prefix == kPrefix);
      if (std::find(known.begin(), known.end(), suffix) != known.end()) continue;
      std::string_view nearest;
      std::size_t best = 3;  // a suggestion only within two edits
      for (std::string_view k : known)
        if (const std::size_t d = edit_distance(suffix, k); d < best) best = d, nearest = k;
      // The suggestion, then a pointer: the list of every name is a page, not a line.
      throw Error(name + ": unknown variable" +
                  (nearest.empty()
                       ? std::string()
                       : "; did you mean " + std::string(prefix) + std::string(nearest) + "?") +
                  " Every variable a run accepts: `tunelock help environment`" +
                  (prefix == kMegatronPrefix ? " (Megatron's names: docs/policy.md)" : ""));
    }
  }
}

// Block sizes from every BLOCK* variable; the TUNELOCK_ spelling wins over
// the Megatron one, which wins over Triton's.
std::vector<BlockSize> block_sizes_from(const Environment& env) {
  std::map<std::string, BlockSize, std::less<>> by_name;
  for (std::string_view prefix : {kTritonBlockPrefix, kMegatronPrefix, kPrefix}) {
    for (const auto& [name, value] : env) {
      std::string_view view = name;
      if (!view.starts_with(prefix) || trim(value).empty()) continue;
      std::string_view block = view.substr(prefix.size());
      if (!block.starts_with("BLOCK")) continue;
      by_name.insert_or_assign(std::string(block), parse_block_size(block, value, name));
    }
  }
  std::vector<BlockSize> out;
  for (auto& [name, size] : by_name) out.push_back(std::move(size));
  return out;
}

// Megatron passes its table and record paths through os.path.expanduser, so
// `~` and `~/...` name the home folder here too (`~user` is left as written).
std::string expand_home(const std::string& path, const char* home) {
  if (!home || !*home || path.empty() || path[0] != '~') return path;
  if (path.size() > 1 && path[1] != '/') return path;
  return std::string(home) + path.substr(1);
}

void expand_user_paths(Policy& policy, const char* home) {
  for (std::string& entry : policy.table_path) entry = expand_home(entry, home);
  policy.record_path = expand_home(policy.record_path, home);
}

}  // namespace

OnMiss parse_on_miss(std::string_view raw, const std::string& origin) {
  const std::string value = trim(raw);
  if (value == "min_cost") return OnMiss::min_cost;
  if (value == "error") return OnMiss::error;
  invalid(origin, raw, "min_cost, error");
}

std::vector<BlockSize> parse_block_sizes(std::string_view text, const std::string& origin) {
  std::vector<BlockSize> out;
  for (const std::string& item : split(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      invalid(origin, text, "NAME=INT pairs such as BLOCK_M=64,BLOCK_N=32");
    out.push_back(parse_block_size(trim(item.substr(0, eq)), item.substr(eq + 1), origin));
  }
  return out;
}

// The values of the variables that are not policy fields, checked where
// the policy is read (every face reads it at start), so a bad one is
// refused before a run rather than at its first check or never.
void reject_bad_values(const Environment& env) {
  if (const std::string watch = env_value(env, env_names::kWatchVerify); !trim(watch).empty())
    parse_boolean(env_names::kWatchVerify, trim(watch));
  const std::string transport = std::string(trim(env_value(env, env_names::kVerifyTransport)));
  if (!transport.empty() && transport != "auto" && transport != "ucx" && transport != "group")
    invalid_value(env_names::kVerifyTransport, transport, "auto, ucx, group");
  if (const std::string level = env_value(env, env_names::kLogLevel);
      !level.empty() && !is_log_level(level))
    invalid_value(env_names::kLogLevel, level, kLogLevelNames);
}

Policy policy_from_environment(const Environment& env) {
  reject_unknown_variables(env);
  reject_bad_values(env);
  Policy policy;
  for (const Field& field : kFields) {
    if (field.env.empty()) continue;
    bool applied = false;
    for (std::string_view prefix : {kPrefix, kMegatronPrefix}) {
      for (std::string_view suffix : {field.env, field.env_alias}) {
        if (applied || suffix.empty()) continue;
        const std::string name = std::string(prefix) + std::string(suffix);
        if (const std::string* value = lookup(env, name)) {
          field.apply(policy, *value, name);
          applied = true;
        }
      }
    }
  }
  policy.block_sizes = block_sizes_from(env);
  const std::string* home = lookup(env, "HOME");
  expand_user_paths(policy, home ? home->c_str() : nullptr);
  policy.validate();
  return policy;
}

Policy policy_from_key_values(const std::vector<std::pair<std::string, std::string>>& pairs,
                              Policy base) {
  for (const auto& pair : pairs) {
    // Named, not a structured binding: clang 14 (Emscripten's) cannot capture those.
    const std::string& key = pair.first;
    const std::string& value = pair.second;
    auto field =
        std::find_if(kFields.begin(), kFields.end(), [&](const Field& f) { return f.key == key; });
    if (field == kFields.end()) throw Error(key + ": unknown policy key; known: " + known_keys());
    field->apply(base, value, key);
  }
  expand_user_paths(base, std::getenv("HOME"));
  base.validate();
  return base;
}

std::vector<std::string_view> policy_keys() {
  std::vector<std::string_view> out;
  for (const Field& f : kFields) out.push_back(f.key);
  return out;
}

bool warn_if_mamba_env_ignored(const Environment& env, const Policy& policy, Notices& notices) {
  const std::string* value = lookup(env, "MAMBA_DETERMINISTIC");
  if (!value || policy.pins()) return false;
  if (!notices.first("MAMBA_DETERMINISTIC")) return false;
  logger().warn(
      "MAMBA_DETERMINISTIC={} is set, but it does not pin these kernels: only the tunelock policy "
      "does. Set TUNELOCK_MODE=pinned (or TUNELOCK_DETERMINISTIC=1) for timing-free choices",
      *value);
  return true;
}

bool warn_if_settings_ignored(const Environment& env, const Policy& policy, Notices& notices) {
  const std::string line =
      ignored_settings_line(policy, !trim(env_value(env, env_names::kChoiceLog)).empty());
  if (line.empty() || !notices.first("ignored-settings|" + line)) return false;
  logger().warn("{}", line);
  return true;
}

nlohmann::json policy_to_json(const Policy& policy) {
  nlohmann::json blocks = nlohmann::json::object();
  for (const BlockSize& b : policy.block_sizes) blocks[b.name] = b.value;
  return {
      {"mode", std::string(to_string(policy.effective_mode()))},
      {"modules", policy.modules},
      {"config_invariant", policy.config_invariant},
      {"table_path", policy.table_path},
      {"record_path", policy.record_path},
      {"on_miss", std::string(to_string(policy.on_miss))},
      {"block_sizes", blocks},
      {"verify_every", policy.verify_every},
      {"verify_strict", policy.verify_strict},
      {"enumerate", policy.enumerate},
      {"chaos", policy.chaos},
      {"deterministic", policy.deterministic},
      {"verify_timeout_s", policy.verify_timeout_s},
      {"nondeterministic", declared_configs_text(policy.nondeterministic)},
      {"check_bits", policy.check_bits},
      {"equivalent", std::string(to_string(policy.equivalent))},
      {"provenance", std::string(to_string(policy.provenance))},
      {"identity", std::string(to_string(policy.identity))},
      {"batch_invariant", policy.batch_invariant},
      {"intercepts", policy.intercepts()},
  };
}

}  // namespace tunelock
