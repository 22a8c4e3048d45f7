// Policy fields, resolution, validation, and every source that builds one.
#include <boost/test/unit_test.hpp>

#include "captured_log.hpp"
#include "tunelock/base/environment.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/variables.hpp"
#include "tunelock/decision/modes.hpp"
#include "tunelock/decision/policy_sources.hpp"

using namespace tunelock;
using tunelock::testing::CapturedLog;

namespace {

// The message of the Error `action` throws, or "" when it does not throw.
template <typename F>
std::string error_of(F&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(policy)

BOOST_AUTO_TEST_CASE(defaults_scope_every_kernel_and_do_not_intercept) {
  const Policy p;
  BOOST_TEST((p.effective_mode() == Mode::automatic));
  BOOST_TEST(p.in_scope(KernelId{"any.module", "k"}));
  BOOST_TEST(p.in_scope(KernelId{"", "k"}));
  BOOST_TEST((p.on_miss == OnMiss::min_cost));
  BOOST_TEST(p.verify_every == 0);
  BOOST_TEST(!p.intercepts());
}

BOOST_AUTO_TEST_CASE(resolution_order_is_explicit_then_record_path_then_deterministic) {
  Policy p;
  p.deterministic = true;
  BOOST_TEST((p.effective_mode() == Mode::pinned));
  p.record_path = "/tmp/rec";
  BOOST_TEST((p.effective_mode() == Mode::record));
  p.mode = Mode::pinned;
  BOOST_TEST((p.effective_mode() == Mode::pinned));
  p.mode = Mode::automatic;
  BOOST_TEST((p.effective_mode() == Mode::automatic));
}

BOOST_AUTO_TEST_CASE(intercepts_when_not_auto_or_enumerating_or_verifying) {
  Policy p;
  p.enumerate = true;
  BOOST_TEST(p.intercepts());
  p = Policy{};
  p.verify_every = 10;
  BOOST_TEST(p.intercepts());
  p = Policy{};
  p.mode = Mode::pinned;
  BOOST_TEST(p.intercepts());
}

BOOST_AUTO_TEST_CASE(module_list_narrows_scope_and_invariant_matches_either_name) {
  Policy p;
  p.modules = {"mamba_ssm", "te.ops"};
  BOOST_TEST(p.in_scope(KernelId{"mamba_ssm.ops.triton", "k"}));
  BOOST_TEST(p.in_scope(KernelId{"te.ops", "k"}));
  BOOST_TEST(!p.in_scope(KernelId{"te.opsx", "k"}));
  BOOST_TEST(!p.in_scope(KernelId{"", "k"}));
  p.config_invariant = {"layernorm", "te.ops.softmax"};
  BOOST_TEST(p.is_config_invariant(KernelId{"x.y", "layernorm"}));
  BOOST_TEST(p.is_config_invariant(KernelId{"te.ops", "softmax"}));
  BOOST_TEST(!p.is_config_invariant(KernelId{"other", "softmax"}));
}

BOOST_AUTO_TEST_CASE(record_mode_needs_a_record_path) {
  Policy p;
  p.mode = Mode::record;
  BOOST_TEST(contains(error_of([&] { p.validate(); }), "record path"));
  p.record_path = "/tmp/rec";
  BOOST_CHECK_NO_THROW(p.validate());
}

BOOST_AUTO_TEST_CASE(block_sizes_must_be_block_names_positive_and_unique) {
  Policy p;
  p.block_sizes = {{"SPLIT_K", 4}};
  BOOST_TEST(contains(error_of([&] { p.validate(); }), "'SPLIT_K' must be a BLOCK*"));
  p.block_sizes = {{"BLOCK_M", 0}};
  BOOST_TEST(contains(error_of([&] { p.validate(); }), "positive"));
  p.block_sizes = {{"BLOCK_M", 64}, {"BLOCK_M", 32}};
  BOOST_TEST(contains(error_of([&] { p.validate(); }), "given twice"));
  p.block_sizes = {{"BLOCK_M", 64}, {"BLOCK_N", 32}};
  BOOST_CHECK_NO_THROW(p.validate());
}

BOOST_AUTO_TEST_CASE(negative_cadence_and_timeouts_are_rejected) {
  Policy p;
  p.verify_every = -1;
  BOOST_TEST(contains(error_of([&] { p.validate(); }), "verify_every"));
  p = Policy{};
  p.verify_timeout_s = 0;
  BOOST_TEST(contains(error_of([&] { p.validate(); }), "verify_timeout_s"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(policy_environment)

BOOST_AUTO_TEST_CASE(empty_environment_gives_defaults) {
  BOOST_TEST((policy_from_environment({}) == Policy{}));
}

BOOST_AUTO_TEST_CASE(every_variable_maps_to_its_field) {
  const Environment env{{"TUNELOCK_MODE", "pinned"},
                        {"TUNELOCK_MODULES", "mamba_ssm, te"},
                        {"TUNELOCK_CONFIG_INVARIANT", "layernorm"},
                        {"TUNELOCK_TABLE_PATH", "/a:/b"},
                        {"TUNELOCK_RECORD", "/tmp/rec"},
                        {"TUNELOCK_ON_MISS", "error"},
                        {"TUNELOCK_VERIFY", "50"},
                        {"TUNELOCK_VERIFY_STRICT", "YES"},
                        {"TUNELOCK_ENUMERATE", "on"},
                        {"TUNELOCK_CHAOS", "1"},
                        {"TUNELOCK_DETERMINISTIC", "True"},
                        {"TUNELOCK_VERIFY_TIMEOUT", "12.5"},
                        {"TUNELOCK_BLOCK_M", "64"},
                        {"TUNELOCK_MASTER_PORT", "29501"}};
  const Policy p = policy_from_environment(env);
  BOOST_TEST((p.effective_mode() == Mode::pinned));
  BOOST_TEST((p.modules == std::vector<std::string>{"mamba_ssm", "te"}));
  BOOST_TEST((p.config_invariant == std::vector<std::string>{"layernorm"}));
  BOOST_TEST((p.table_path == std::vector<std::string>{"/a", "/b"}));
  BOOST_TEST(p.record_path == "/tmp/rec");
  BOOST_TEST((p.on_miss == OnMiss::error));
  BOOST_TEST(p.verify_every == 50);
  BOOST_TEST(p.verify_strict);
  BOOST_TEST(p.enumerate);
  BOOST_TEST(p.chaos);
  BOOST_TEST(p.deterministic);
  BOOST_TEST(p.verify_timeout_s == 12.5);
  BOOST_TEST((p.block_sizes == std::vector<BlockSize>{{"BLOCK_M", 64}}));
}

BOOST_AUTO_TEST_CASE(omitted_mode_resolves_from_record_path_then_deterministic) {
  BOOST_TEST((policy_from_environment({{"TUNELOCK_DETERMINISTIC", "1"}}).effective_mode() ==
              Mode::pinned));
  BOOST_TEST((policy_from_environment({{"TUNELOCK_DETERMINISTIC", "1"}, {"TUNELOCK_RECORD", "/r"}})
                  .effective_mode() == Mode::record));
  BOOST_TEST((policy_from_environment({{"TUNELOCK_RECORD", "/r"}, {"TUNELOCK_MODE", "auto"}})
                  .effective_mode() == Mode::automatic));
}

BOOST_AUTO_TEST_CASE(megatron_and_triton_aliases_are_accepted_and_tunelock_wins) {
  const Policy aliases = policy_from_environment({{"MCORE_AUTOTUNE_MODE", "pinned"},
                                                  {"MCORE_AUTOTUNE_ON_MISS", "error"},
                                                  {"TRITON_AUTOTUNE_BLOCK_N", "32"},
                                                  {"MCORE_AUTOTUNE_BLOCK_K", "16"}});
  BOOST_TEST((aliases.effective_mode() == Mode::pinned));
  BOOST_TEST((aliases.on_miss == OnMiss::error));
  BOOST_TEST((aliases.block_sizes == std::vector<BlockSize>{{"BLOCK_K", 16}, {"BLOCK_N", 32}}));

  const Policy both = policy_from_environment({{"MCORE_AUTOTUNE_MODE", "record"},
                                               {"MCORE_AUTOTUNE_RECORD", "/r"},
                                               {"TUNELOCK_MODE", "pinned"},
                                               {"TRITON_AUTOTUNE_BLOCK_M", "32"},
                                               {"MCORE_AUTOTUNE_BLOCK_M", "64"},
                                               {"TUNELOCK_BLOCK_M", "128"}});
  BOOST_TEST((both.effective_mode() == Mode::pinned));
  BOOST_TEST((both.block_sizes == std::vector<BlockSize>{{"BLOCK_M", 128}}));
}

BOOST_AUTO_TEST_CASE(empty_variables_count_as_unset) {
  BOOST_TEST(
      (policy_from_environment({{"TUNELOCK_MODE", ""}, {"TUNELOCK_VERIFY", " "}}) == Policy{}));
}

BOOST_AUTO_TEST_CASE(invalid_values_name_the_variable_and_the_allowed_values) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"TUNELOCK_MODE", "fast", "auto, pinned, record"},
      {"TUNELOCK_ON_MISS", "cheapest", "min_cost, error"},
      {"TUNELOCK_VERIFY_STRICT", "maybe", "1, 0, true, false, yes, no, on, off"},
      {"TUNELOCK_ENUMERATE", "2", "1, 0, true"},
      {"TUNELOCK_CHAOS", "y", "1, 0, true"},
      {"TUNELOCK_DETERMINISTIC", "enabled", "1, 0, true"},
      {"TUNELOCK_VERIFY", "-5", "0 (off) or a positive integer"},
      {"TUNELOCK_VERIFY", "10x", "0 (off) or a positive integer"},
      {"TUNELOCK_VERIFY", "99999999999", "0 (off) or a positive integer"},
      {"TUNELOCK_VERIFY_TIMEOUT", "soon", "positive number of seconds"},
      {"TUNELOCK_VERIFY_TIMEOUT", "-1", "positive number of seconds"},
      {"TUNELOCK_BLOCK_M", "sixty", "positive integer"},
      {"TUNELOCK_BLOCK_M", "0", "positive integer"},
      {"TRITON_AUTOTUNE_BLOCK_N", "-8", "positive integer"},
      {"MCORE_AUTOTUNE_MODE", "timed", "auto, pinned, record"},
      // Not policy fields, but refused where the policy is read, at start.
      {"TUNELOCK_VERIFY_TRANSPORT", "nccl2", "auto, ucx, group"},
      {"TUNELOCK_WATCH_VERIFY", "2", "1, 0, true"},
      {"TUNELOCK_NONDETERMINISTIC", "|", "names no config"},
      {"TUNELOCK_LOG_LEVEL", "loud", "trace, debug, info, warn, error, critical, off"},
      {"TUNELOCK_LOG_LEVEL", "INFO ", "trace, debug, info, warn, error, critical, off"},
  };
  for (const auto& [name, value, allowed] : cases) {
    const std::string message = error_of([&] { policy_from_environment({{name, value}}); });
    BOOST_TEST_INFO(name << "=" << value << " -> " << message);
    BOOST_TEST(message.starts_with(name + ":"));
    BOOST_TEST(contains(message, "'" + value + "'"));
    BOOST_TEST(contains(message, allowed));
  }
}

BOOST_AUTO_TEST_CASE(unknown_variables_are_errors_not_ignored) {
  const std::string message = error_of([] {
    policy_from_environment({{"TUNELOCK_MODES", "pinned"}});
  });
  BOOST_TEST(message.starts_with("TUNELOCK_MODES: unknown variable"));
  BOOST_TEST(contains(message, "TUNELOCK_MODE"));
  BOOST_TEST(contains(error_of([] {
                        policy_from_environment({{"MCORE_AUTOTUNE_VERIFI", "1"}});
                      }),
                      "MCORE_AUTOTUNE_VERIFI: unknown variable"));
  // Variables that belong to rendezvous and logs are not policy typos.
  BOOST_CHECK_NO_THROW(policy_from_environment({{"TUNELOCK_JOB_TOKEN", "abc"},
                                                {"TUNELOCK_CHOICE_LOG", "/tmp/log"},
                                                {"TUNELOCK_MASTER_ADDR", "10.0.0.1"}}));
}

BOOST_AUTO_TEST_CASE(the_documented_variables_are_exactly_the_accepted_ones) {
  // Every documented name is accepted (its value may be refused, its name never).
  for (const tunelock::VariableInfo& v : tunelock::documented_variables()) {
    BOOST_TEST_CONTEXT(v.name) {
      BOOST_TEST(!v.meaning.empty());
      BOOST_TEST(!v.default_value.empty());
      std::string name(v.name);
      if (name == "TUNELOCK_BLOCK_<NAME>") name = "TUNELOCK_BLOCK_M";
      const std::string message = error_of([&] { policy_from_environment({{name, "x"}}); });
      BOOST_TEST(!contains(message, "unknown variable"), message);
    }
  }
  // The names the rest of the code spells are documented.
  for (std::string_view name : tunelock::env_names::kAll)
    BOOST_TEST(tunelock::find_variable(name) != nullptr, name);
  for (std::string_view name : tunelock::env_names::kBuildOnly)
    BOOST_TEST(tunelock::find_variable(name) != nullptr, name);
  BOOST_TEST(tunelock::find_variable("TUNELOCK_BLOCK_K")->name == "TUNELOCK_BLOCK_<NAME>");
  BOOST_TEST(tunelock::find_variable("TUNELOCK_BLOCK_") == nullptr);
  BOOST_TEST(tunelock::find_variable("TUNELOCK_NOPE") == nullptr);
}

BOOST_AUTO_TEST_CASE(an_unknown_variable_names_the_nearest_and_points_to_the_list) {
  const std::string typo = error_of([] { policy_from_environment({{"TUNELOCK_MDOE", "pinned"}}); });
  BOOST_TEST(typo ==
             "TUNELOCK_MDOE: unknown variable; did you mean TUNELOCK_MODE? Every variable "
             "a run accepts: `tunelock help environment`");
  // One line, not 35 names after the suggestion: the list is a help page.
  BOOST_TEST(!contains(typo, "TUNELOCK_VERIFY_TRANSPORT"));
  // Far from every name: no guess, the same pointer.
  const std::string far = error_of([] { policy_from_environment({{"TUNELOCK_QQQQQQQQ", "1"}}); });
  BOOST_TEST(!contains(far, "did you mean"));
  BOOST_TEST(contains(far, "`tunelock help environment`"));
  // A build variable exported in the shell breaks no run.
  BOOST_CHECK_NO_THROW(policy_from_environment(
      {{"TUNELOCK_PYTHON_BUILD_DIR", "/tmp/b"}, {"TUNELOCK_CLI", "/usr/bin/tunelock"}}));
  // Megatron's prefix offers Megatron's names only.
  const std::string megatron = error_of([] {
    policy_from_environment({{"MCORE_AUTOTUNE_MDOE", "pinned"}});
  });
  BOOST_TEST(contains(megatron, "did you mean MCORE_AUTOTUNE_MODE?"));
  BOOST_TEST(!contains(megatron, "MCORE_AUTOTUNE_JOB_TOKEN"));
  BOOST_TEST(contains(megatron, "Megatron's names: docs/policy.md"));
}

BOOST_AUTO_TEST_CASE(record_mode_without_path_fails_validation) {
  BOOST_TEST(contains(error_of([] {
                        policy_from_environment({{"TUNELOCK_MODE", "record"}});
                      }),
                      "record path"));
}

BOOST_AUTO_TEST_CASE(mamba_variable_gets_a_once_per_policy_notice) {
  Notices notices;
  CapturedLog log;
  const Environment env{{"MAMBA_DETERMINISTIC", "1"}};
  const Policy automatic = policy_from_environment(env);
  BOOST_TEST(warn_if_mamba_env_ignored(env, automatic, notices));
  BOOST_TEST(!warn_if_mamba_env_ignored(env, automatic, notices));
  BOOST_TEST(log.count("MAMBA_DETERMINISTIC=1 is set") == 1u);
  notices.reset();
  BOOST_TEST(warn_if_mamba_env_ignored(env, automatic, notices));
  // A pinned policy already does what the variable asked for.
  Policy pinned;
  pinned.mode = Mode::pinned;
  notices.reset();
  BOOST_TEST(!warn_if_mamba_env_ignored(env, pinned, notices));
  BOOST_TEST(!warn_if_mamba_env_ignored({}, automatic, notices));
}

BOOST_AUTO_TEST_CASE(a_setting_the_mode_ignores_is_named_once_in_one_line) {
  // The forgotten TUNELOCK_MODE: a table path and a choice log under auto.
  Notices notices;
  CapturedLog log;
  const Environment forgot{{"TUNELOCK_TABLE_PATH", "try/tables"},
                           {"TUNELOCK_CHOICE_LOG", "try/logs/forgot"}};
  const Policy automatic = policy_from_environment(forgot);
  BOOST_TEST(warn_if_settings_ignored(forgot, automatic, notices));
  BOOST_TEST(!warn_if_settings_ignored(forgot, automatic, notices));  // once
  BOOST_TEST(log.count("mode 'auto' (no mode set) ignores table_path (TUNELOCK_TABLE_PATH): auto "
                       "reads no table; TUNELOCK_CHOICE_LOG: auto logs no choice without "
                       "verify_every or enumerate. Set the mode that uses them") == 1u);
  BOOST_TEST(log.count("\n") <= 1u);  // one line
  // Pinned uses both: silence.
  const Environment pinned_env{{"TUNELOCK_MODE", "pinned"},
                               {"TUNELOCK_TABLE_PATH", "try/tables"},
                               {"TUNELOCK_CHOICE_LOG", "try/logs/run"},
                               {"TUNELOCK_VERIFY_STRICT", "1"}};
  BOOST_TEST(!warn_if_settings_ignored(pinned_env, policy_from_environment(pinned_env), notices));
  // Auto with a check logs and verifies: the choice log and strict are used.
  const Environment checked{{"TUNELOCK_VERIFY_EVERY", "1"},
                            {"TUNELOCK_CHOICE_LOG", "try/logs/run"},
                            {"TUNELOCK_VERIFY_STRICT", "1"}};
  BOOST_TEST(ignored_settings(policy_from_environment(checked), true).empty());
  // Record reads no table either; pinned writes no records.
  Policy record;
  record.mode = Mode::record;
  record.record_path = "rec/run";
  record.table_path = {"tables"};
  record.on_miss = OnMiss::error;
  const auto recorded = ignored_settings(record, false);
  BOOST_TEST_REQUIRE(recorded.size() == 2u);
  BOOST_TEST(recorded[0].setting == "table_path (TUNELOCK_TABLE_PATH)");
  BOOST_TEST(recorded[1].why == "record reads no table");
  Policy pinned;
  pinned.mode = Mode::pinned;
  pinned.record_path = "rec/run";
  const auto kept = ignored_settings(pinned, false);
  BOOST_TEST_REQUIRE(kept.size() == 1u);
  BOOST_TEST(kept[0].setting == "record_path (TUNELOCK_RECORD)");
  BOOST_TEST(ignored_settings_line(Policy{}, false).empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(policy_key_values)

BOOST_AUTO_TEST_CASE(pairs_set_fields_over_a_base) {
  Policy base;
  base.modules = {"kept"};
  const Policy p = policy_from_key_values({{"mode", "pinned"},
                                           {"block_sizes", "BLOCK_M=64, BLOCK_N=32"},
                                           {"verify_every", "5"},
                                           {"table_path", "/t1:/t2"}},
                                          base);
  BOOST_TEST((p.effective_mode() == Mode::pinned));
  BOOST_TEST((p.block_sizes == std::vector<BlockSize>{{"BLOCK_M", 64}, {"BLOCK_N", 32}}));
  BOOST_TEST(p.verify_every == 5);
  BOOST_TEST((p.modules == std::vector<std::string>{"kept"}));
  BOOST_TEST((p.table_path == std::vector<std::string>{"/t1", "/t2"}));
}

BOOST_AUTO_TEST_CASE(every_documented_key_is_accepted) {
  const std::vector<std::pair<std::string, std::string>> all{
      {"mode", "auto"},           {"modules", "a"},
      {"config_invariant", "b"},  {"table_path", "/t"},
      {"record_path", "/r"},      {"on_miss", "error"},
      {"block_sizes", "BLOCK=8"}, {"verify_every", "1"},
      {"verify_strict", "off"},   {"enumerate", "no"},
      {"chaos", "false"},         {"deterministic", "0"},
      {"verify_timeout_s", "30"}, {"nondeterministic", "k@BLOCK=1;warps=4;stages=3"},
      {"check_bits", "off"},      {"equivalent", "timed"},
      {"provenance", "strict"},   {"identity", "ignore"},
      {"batch_invariant", "on"}};
  BOOST_TEST(all.size() == policy_keys().size());
  BOOST_CHECK_NO_THROW(policy_from_key_values(all));
}

BOOST_AUTO_TEST_CASE(unknown_key_is_an_error_listing_known_keys) {
  const std::string message = error_of([] { policy_from_key_values({{"on-miss", "error"}}); });
  BOOST_TEST(message.starts_with("on-miss: unknown policy key"));
  BOOST_TEST(contains(message, "on_miss"));
}

BOOST_AUTO_TEST_CASE(invalid_values_name_the_key) {
  BOOST_TEST(error_of([] { policy_from_key_values({{"chaos", "sure"}}); }).starts_with("chaos:"));
  BOOST_TEST(error_of([] {
               policy_from_key_values({{"block_sizes", "BLOCK_M"}});
             }).starts_with("block_sizes:"));
  BOOST_TEST(contains(error_of([] {
                        policy_from_key_values({{"block_sizes", "WARP=4"}});
                      }),
                      "'WARP' must be a BLOCK*"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(policy_values)

// The verify timeout is a decimal number of seconds a deadline can hold:
// hex, inf/nan and values that round to a 0 ms deadline are refused.
BOOST_AUTO_TEST_CASE(the_timeout_is_decimal_seconds_of_at_least_a_millisecond) {
  BOOST_TEST(policy_from_environment({{"TUNELOCK_VERIFY_TIMEOUT", "0.5"}}).verify_timeout_s == 0.5);
  BOOST_TEST(policy_from_environment({{"TUNELOCK_VERIFY_TIMEOUT", "1e3"}}).verify_timeout_s ==
             1000);
  for (const char* bad : {"0x10", "1e-300", "0.0001", "inf", "nan", "-5", "0"}) {
    BOOST_TEST_INFO(bad);
    BOOST_TEST(error_of([&] {
                 policy_from_environment({{"TUNELOCK_VERIFY_TIMEOUT", bad}});
               }).find("TUNELOCK_VERIFY_TIMEOUT: invalid value") == 0u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(policy_names)

// One spelling per setting: TUNELOCK_VERIFY_EVERY names the verify_every
// field; the older TUNELOCK_VERIFY (and Megatron's MCORE_AUTOTUNE_VERIFY)
// are still read, the primary name winning.
BOOST_AUTO_TEST_CASE(the_verify_cadence_has_one_name_and_its_older_ones_still_work) {
  BOOST_TEST(policy_from_environment({{"TUNELOCK_VERIFY_EVERY", "4"}}).verify_every == 4);
  BOOST_TEST(policy_from_environment({{"TUNELOCK_VERIFY", "3"}}).verify_every == 3);
  BOOST_TEST(policy_from_environment({{"MCORE_AUTOTUNE_VERIFY", "5"}}).verify_every == 5);
  BOOST_TEST(policy_from_environment({{"TUNELOCK_VERIFY_EVERY", "4"}, {"TUNELOCK_VERIFY", "3"}})
                 .verify_every == 4);
  BOOST_TEST(
      policy_from_environment({{"TUNELOCK_VERIFY", "3"}, {"MCORE_AUTOTUNE_VERIFY_EVERY", "5"}})
          .verify_every == 3);
  BOOST_TEST(error_of([] {
               policy_from_environment({{"TUNELOCK_VERIFY_EVERY", "x"}});
             }).starts_with("TUNELOCK_VERIFY_EVERY: invalid value 'x'"));
}

BOOST_AUTO_TEST_SUITE_END()
