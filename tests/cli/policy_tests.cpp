// `tunelock policy`: what the environment and flags resolve to.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "captured_log.hpp"
#include "cli_run.hpp"

using tunelock::testing::CapturedLog;
using tunelock::testing::run_cli;

BOOST_AUTO_TEST_SUITE(policy_command)

BOOST_AUTO_TEST_CASE(json_lists_every_field_under_its_design_name) {
  const auto result = run_cli({"policy", "--json"}, {{"TUNELOCK_DETERMINISTIC", "1"},
                                                     {"TUNELOCK_BLOCK_M", "64"},
                                                     {"TUNELOCK_TABLE_PATH", "/a:/b"},
                                                     {"TUNELOCK_VERIFY", "100"}});
  BOOST_TEST_REQUIRE(result.code == 0);
  const auto policy = nlohmann::json::parse(result.out);
  BOOST_TEST(policy["mode"] == "pinned");
  BOOST_TEST(policy["modules"] == nlohmann::json::array());
  BOOST_TEST(policy["config_invariant"] == nlohmann::json::array());
  BOOST_TEST(policy["table_path"] == nlohmann::json::parse(R"(["/a", "/b"])"));
  BOOST_TEST(policy["record_path"] == "");
  BOOST_TEST(policy["on_miss"] == "min_cost");
  BOOST_TEST(policy["block_sizes"] == nlohmann::json::parse(R"({"BLOCK_M": 64})"));
  BOOST_TEST(policy["verify_every"] == 100);
  BOOST_TEST(policy["verify_strict"] == false);
  BOOST_TEST(policy["enumerate"] == false);
  BOOST_TEST(policy["chaos"] == false);
  BOOST_TEST(policy["intercepts"] == true);
}

BOOST_AUTO_TEST_CASE(defaults_do_not_intercept) {
  const auto policy = nlohmann::json::parse(run_cli({"policy", "--json"}).out);
  BOOST_TEST(policy["mode"] == "auto");
  BOOST_TEST(policy["intercepts"] == false);
}

BOOST_AUTO_TEST_CASE(flags_override_the_environment) {
  const auto result = run_cli({"policy", "--json", "--mode", "record", "--record", "/tmp/r",
                               "--block", "BLOCK_N=32", "--verify-strict", "--chaos"},
                              {{"TUNELOCK_MODE", "pinned"}, {"TUNELOCK_BLOCK_M", "64"}});
  BOOST_TEST_REQUIRE(result.code == 0);
  const auto policy = nlohmann::json::parse(result.out);
  BOOST_TEST(policy["mode"] == "record");
  BOOST_TEST(policy["record_path"] == "/tmp/r");
  BOOST_TEST(policy["block_sizes"] == nlohmann::json::parse(R"({"BLOCK_N": 32})"));
  BOOST_TEST(policy["verify_strict"] == true);
  BOOST_TEST(policy["chaos"] == true);
}

BOOST_AUTO_TEST_CASE(text_form_shows_the_resolved_mode) {
  const auto result = run_cli({"policy"}, {{"MCORE_AUTOTUNE_RECORD", "/tmp/rec"}});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("mode:             record\n") != std::string::npos);
  BOOST_TEST(result.out.find("record_path:      /tmp/rec\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(invalid_variable_exits_2_naming_it) {
  const auto result = run_cli({"policy", "--json"}, {{"TUNELOCK_ON_MISS", "fastest"}});
  BOOST_TEST(result.code == 2);
  BOOST_TEST(result.out.empty());
  BOOST_TEST(result.err ==
             "tunelock: TUNELOCK_ON_MISS: invalid value 'fastest'; allowed: min_cost, error\n");
  const auto unknown = run_cli({"policy"}, {{"TUNELOCK_VERIFYSTRICT", "1"}});
  BOOST_TEST(unknown.code == 2);
  BOOST_TEST(unknown.err.find("TUNELOCK_VERIFYSTRICT: unknown variable") != std::string::npos);
  const auto transport = run_cli({"policy"}, {{"TUNELOCK_VERIFY_TRANSPORT", "nccl2"}});
  BOOST_TEST(transport.code == 2);
  BOOST_TEST(transport.err ==
             "tunelock: TUNELOCK_VERIFY_TRANSPORT: invalid value 'nccl2'; "
             "allowed: auto, ucx, group\n");
  const auto bad_flag = run_cli({"policy", "--verify", "often"});
  BOOST_TEST(bad_flag.code == 2);
  BOOST_TEST(bad_flag.err.find("verify_every: invalid value 'often'") != std::string::npos);
  const auto record_without_path = run_cli({"policy", "--mode", "record"});
  BOOST_TEST(record_without_path.code == 2);
  BOOST_TEST(record_without_path.err.find("needs a record path") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_table_path_that_does_not_exist_is_named) {
  CapturedLog log;
  const auto result = run_cli({"policy"}, {{"TUNELOCK_MODE", "pinned"},
                                           {"TUNELOCK_TABLE_PATH", "/tmp/tunelock-no-such-dir"}});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("/tmp/tunelock-no-such-dir") != std::string::npos);
  BOOST_TEST(log.count("table path entry /tmp/tunelock-no-such-dir does not exist") == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
