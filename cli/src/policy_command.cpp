// `tunelock policy`: the policy this process would install, resolved from
// the environment with command line flags on top, so a user sees exactly
// what their variables mean before a run.
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/tables/table_files.hpp"

namespace tunelock::cli {
namespace {

struct PolicyFlags {
  std::vector<std::pair<std::string, std::string>> pairs;  // key/value, in flag order
  bool json = false;
};

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

void print_text(const Policy& policy, std::ostream& out) {
  std::vector<std::string> blocks;
  for (const BlockSize& b : policy.block_sizes)
    blocks.push_back(b.name + "=" + std::to_string(b.value));
  out << "mode:             " << to_string(policy.effective_mode()) << "\n"
      << "modules:          "
      << (policy.modules.empty() ? "(every kernel)" : join(policy.modules, ",")) << "\n"
      << "config_invariant: " << join(policy.config_invariant, ",") << "\n"
      << "table_path:       " << join(policy.table_path, ":") << "\n"
      << "record_path:      " << policy.record_path << "\n"
      << "on_miss:          " << to_string(policy.on_miss) << "\n"
      << "block_sizes:      " << join(blocks, ",") << "\n"
      << "verify_every:     " << policy.verify_every << "\n"
      << "verify_strict:    " << std::boolalpha << policy.verify_strict << "\n"
      << "enumerate:        " << policy.enumerate << "\n"
      << "chaos:            " << policy.chaos << "\n"
      << "deterministic:    " << policy.deterministic << "\n"
      << "verify_timeout_s: " << policy.verify_timeout_s << "\n"
      << "nondeterministic: " << declared_configs_text(policy.nondeterministic) << "\n"
      << "check_bits:       " << policy.check_bits << "\n"
      << "equivalent:       " << to_string(policy.equivalent) << "\n"
      << "provenance:       " << to_string(policy.provenance) << "\n"
      << "identity:         " << to_string(policy.identity) << "\n";
}

int show_policy(const PolicyFlags& flags, Streams& streams) {
  const Policy policy = policy_from_key_values(flags.pairs, policy_from_environment(streams.env));
  warn_if_mamba_env_ignored(streams.env, policy);
  warn_if_settings_ignored(streams.env, policy);
  // A run under this policy would say the same at install.
  for (const std::string& problem : unreadable_table_path(policy.table_path))
    logger().warn("table path entry {}: no table is read from it", problem);
  if (flags.json)
    streams.out << policy_to_json(policy).dump(2) << "\n";
  else
    print_text(policy, streams.out);
  return 0;
}

}  // namespace

Command add_policy_command(CLI::App& app) {
  auto flags = std::make_shared<PolicyFlags>();
  CLI::App* cmd = app.add_subcommand(
      "policy", "Show the policy resolved from TUNELOCK_* variables, with flags on top");
  // Each flag feeds the same key/value source a config file would, so
  // values parse and fail exactly as the variables do.
  auto value_flag = [&](const std::string& name, const std::string& key, const std::string& help) {
    cmd->add_option_function<std::string>(
        name, [flags, key](const std::string& v) { flags->pairs.emplace_back(key, v); }, help);
  };
  auto bool_flag = [&](const std::string& name, const std::string& key, const std::string& help) {
    cmd->add_flag_function(
        name, [flags, key](std::int64_t) { flags->pairs.emplace_back(key, "true"); }, help);
  };
  value_flag("--mode", "mode", "auto, pinned, record, audit or consensus");
  value_flag("--modules", "modules", "Comma-separated module prefixes in scope");
  value_flag("--config-invariant", "config_invariant", "Comma-separated kernels never pinned");
  value_flag("--table-path", "table_path", "Colon-separated table directories");
  value_flag("--record", "record_path", "Record file prefix");
  value_flag("--on-miss", "on_miss", "min_cost or error");
  // Repeatable, as in `choose`: each --block adds to the overrides.
  cmd->add_option_function<std::vector<std::string>>(
      "--block",
      [flags](const std::vector<std::string>& values) {
        std::string joined;
        for (const std::string& v : values) joined += (joined.empty() ? "" : ",") + v;
        flags->pairs.emplace_back("block_sizes", joined);
      },
      "Block-size override NAME=INT (repeatable, or BLOCK_M=64,BLOCK_N=32)");
  value_flag("--verify-every,--verify", "verify_every", "Verify every N iterations (0 = off)");
  value_flag("--verify-timeout", "verify_timeout_s", "Seconds to wait for peers");
  bool_flag("--verify-strict", "verify_strict", "Raise on every rank on conflict");
  bool_flag("--enumerate", "enumerate", "Report each family once");
  bool_flag("--chaos", "chaos", "Positive control: rank-dependent choices");
  bool_flag("--deterministic", "deterministic", "Deterministic mode (implies pinned)");
  value_flag("--nondeterministic", "nondeterministic",
             "Configs declared racy, KERNEL@SIGNATURE joined by '|'");
  value_flag("--check-bits", "check_bits", "on/off: the first pinned call per key checks its bits");
  value_flag("--equivalent", "equivalent",
             "off or timed: time within an entry's equivalent configs");
  value_flag("--provenance", "provenance",
             "warn, strict or ignore: a table recorded on another machine");
  cmd->add_flag("--json", flags->json, "Print the policy as one JSON object");
  return {cmd, [flags](Streams& streams) { return show_policy(*flags, streams); }};
}

}  // namespace tunelock::cli
