// `tunelock choose` as a user runs it: decisions, JSON output, exit codes.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "captured_log.hpp"
#include "cli_run.hpp"
#include "temp_dir.hpp"

using tunelock::testing::CapturedLog;
using tunelock::testing::run_cli;
using tunelock::testing::TempDir;

namespace {

const std::string kExamples = TUNELOCK_EXAMPLES_DIR;
const std::string kCandidates = kExamples + "/candidates.json";
const std::string kTables = kExamples + "/tables";

std::vector<std::string> choose(const std::string& kernel, const std::string& key,
                                std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"choose", "--candidates", kCandidates, "--kernel",
                                kernel,   "--key",        key,         "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

nlohmann::json decision(const std::vector<std::string>& args) {
  auto result = run_cli(args);
  BOOST_TEST_INFO("stderr: " << result.err);
  BOOST_TEST_REQUIRE(result.code == 0);
  return nlohmann::json::parse(result.out);  // stdout holds exactly one object
}

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(choose_command)

BOOST_AUTO_TEST_CASE(table_hit_prints_index_signature_and_reason) {
  const auto out = decision(choose("demo.ops.matmul", "M=4096|N=4096|K=1024|bf16|bf16",
                                   {"--table", kTables, "--arch", "sm90"}));
  BOOST_TEST(
      out ==
      nlohmann::json::parse(
          R"({"index":0,"signature":"BLOCK_K=32,BLOCK_M=128,BLOCK_N=128,SPLIT_K=1;warps=8;stages=3","reason":"table"})"));
}

BOOST_AUTO_TEST_CASE(stale_entry_falls_to_the_bare_wildcard) {
  const auto out = decision(choose("demo.ops.matmul", "M=8192|N=1024|K=8192|bf16|bf16",
                                   {"--table", kTables, "--arch", "sm90"}));
  BOOST_TEST(out["index"] == 2);
  BOOST_TEST(out["reason"] == "table*");
}

BOOST_AUTO_TEST_CASE(bare_name_unique_in_the_manifest_decides_as_the_qualified_name) {
  // The qualified name's exact entries are searched too: the stale one is skipped as before.
  const auto out = decision(
      choose("matmul", "M=8192|N=1024|K=8192|bf16|bf16", {"--table", kTables, "--arch", "sm90"}));
  BOOST_TEST(out["index"] == 2);
  BOOST_TEST(out["reason"] == "table*");
  const auto exact = decision(
      choose("matmul", "M=4096|N=4096|K=1024|bf16|bf16", {"--table", kTables, "--arch", "sm90"}));
  BOOST_TEST(exact["reason"] == "table");
}

BOOST_AUTO_TEST_CASE(table_file_named_directly_gives_its_arch) {
  const auto out =
      decision(choose("demo.ops.rmsnorm", "N=8192|bf16", {"--table", kTables + "/sm90.json"}));
  BOOST_TEST(out["index"] == 0);
  BOOST_TEST(out["reason"] == "table");
}

BOOST_AUTO_TEST_CASE(untuned_call_takes_the_cheapest) {
  const auto out =
      decision(choose("demo.ops.rmsnorm", "N=1024|bf16", {"--table", kTables, "--arch", "sm90"}));
  BOOST_TEST(out["index"] == 2);
  BOOST_TEST(out["reason"] == "min_cost");
  // Another arch has no table here: the same rule, the same answer.
  BOOST_TEST(decision(choose("demo.ops.rmsnorm", "N=8192|bf16",
                             {"--table", kTables, "--arch", "sm80"}))["reason"] == "min_cost");
}

BOOST_AUTO_TEST_CASE(block_override_decides_before_on_miss) {
  const auto out = decision(choose("demo.ops.softmax", "N=4096|f32",
                                   {"--block", "BLOCK_SIZE=2048", "--on-miss", "error"}));
  BOOST_TEST(out["index"] == 0);
  BOOST_TEST(out["reason"] == "block_sizes");
}

BOOST_AUTO_TEST_CASE(a_table_argument_that_does_not_exist_is_named) {
  CapturedLog log;
  const auto out = decision(choose("demo.ops.softmax", "N=4096|f32",
                                   {"--arch", "sm90", "--table", "/tmp/tunelock-no-such-dir"}));
  BOOST_TEST(out["reason"] == "min_cost");
  BOOST_TEST(log.count("no table for sm90 among the --table arguments "
                       "(/tmp/tunelock-no-such-dir (does not exist))") == 1u);
}

BOOST_AUTO_TEST_CASE(the_environment_is_read_as_a_run_reads_it_with_the_flags_on_top) {
  const auto args = choose("demo.ops.softmax", "N=4096|f32", {"--arch", "sm90"});
  const auto blocked = run_cli(args, {{"TUNELOCK_BLOCK_SIZE", "2048"}});
  BOOST_TEST_INFO("stderr: " << blocked.err);
  BOOST_TEST_REQUIRE(blocked.code == 0);
  BOOST_TEST(nlohmann::json::parse(blocked.out)["reason"] == "block_sizes");
  BOOST_TEST(run_cli(args, {{"TUNELOCK_ON_MISS", "error"}}).code == 3);
  // A flag wins over the variable.
  auto flagged = args;
  flagged.insert(flagged.end(), {"--on-miss", "min_cost"});
  BOOST_TEST(run_cli(flagged, {{"TUNELOCK_ON_MISS", "error"}}).code == 0);
  // A typo is refused, as everywhere, with the name it meant.
  const auto typo = run_cli(args, {{"TUNELOCK_MDOE", "pinned"}});
  BOOST_TEST(typo.code == 2);
  BOOST_TEST(typo.err.find("did you mean TUNELOCK_MODE?") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(on_miss_error_exits_3_with_the_message_on_stderr) {
  auto result =
      run_cli(choose("demo.ops.softmax", "N=4096|f32", {"--on-miss", "error", "--arch", "sm90"}));
  BOOST_TEST(result.code == 3);
  BOOST_TEST(result.out.empty());
  BOOST_TEST(one_line(result.err));
  BOOST_TEST(result.err.find("'demo.ops.softmax'") != std::string::npos);
  BOOST_TEST(result.err.find("TUNELOCK_RECORD") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(chaos_is_stable_per_rank_and_differs_between_neighbours) {
  const auto key = "M=4096|N=4096|K=1024|bf16|bf16";
  for (int rank = 0; rank < 4; ++rank) {
    const auto here =
        decision(choose("demo.ops.matmul", key, {"--chaos", "--rank", std::to_string(rank)}));
    const auto again =
        decision(choose("demo.ops.matmul", key, {"--chaos", "--rank", std::to_string(rank)}));
    const auto next =
        decision(choose("demo.ops.matmul", key, {"--chaos", "--rank", std::to_string(rank + 1)}));
    BOOST_TEST(here == again);
    BOOST_TEST(here["index"] != next["index"]);
    BOOST_TEST(here["reason"] == "chaos");
  }
}

BOOST_AUTO_TEST_CASE(single_kernel_candidate_file_answers_for_any_kernel) {
  TempDir dir;
  const auto file = dir.write(
      "one.json", R"({"configs": [{"kwargs": {"BLOCK": 64}, "num_warps": 4, "num_stages": 2},
                                                          {"kwargs": {"BLOCK": 32}, "num_warps": 4, "num_stages": 2}]})");
  const auto out = decision(
      {"choose", "--candidates", file.string(), "--kernel", "x.k", "--key", "k", "--json"});
  BOOST_TEST(out["index"] == 1);
}

BOOST_AUTO_TEST_CASE(text_output_names_kernel_key_arch_and_reason) {
  auto result = run_cli({"choose", "--candidates", kCandidates, "--kernel", "demo.ops.rmsnorm",
                         "--key", "N=8192|bf16", "--table", kTables, "--arch", "sm90"});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out ==
             "demo.ops.rmsnorm [N=8192|bf16] on sm90: candidate 0 BLOCK_SIZE=1024;warps=8;stages=1 "
             "(table)\n");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cli_errors)

BOOST_AUTO_TEST_CASE(bad_input_exits_2_with_one_line_naming_the_problem) {
  TempDir dir;
  const auto broken = dir.write("broken.json", "{\"configs\": [");
  const auto wrong_type = dir.write("wrong.json", R"({"configs": [{"num_warps": "8"}]})");
  const auto bad_table = dir.write(
      "sm90.json", R"({"arch": "sm90", "kernels": {"k": {"K": {"kwargs": {"BLOCK": -4}}}}})");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"choose", "--candidates", (dir.path() / "absent.json").string(), "--kernel", "k", "--key",
        "x"},
       "no such file"},
      {{"choose", "--candidates", dir.path().string(), "--kernel", "k", "--key", "x"},
       "is a directory"},
      {{"choose", "--candidates", broken.string(), "--kernel", "k", "--key", "x"},
       "broken.json: not valid JSON"},
      {{"choose", "--candidates", wrong_type.string(), "--kernel", "k", "--key", "x"},
       "configs[0].num_warps: expected an integer"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.nope", "--key", "x"},
       "no kernel 'demo.ops.nope'"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--table", kTables},
       "give --arch"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--table", bad_table.string()},
       "kwargs.BLOCK: -4 is out of range"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--block", "BLOCK_SIZE=big"},
       "--block: invalid value"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--block", "WARPS=4"},
       "'WARPS' must be a BLOCK*"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--chaos"},
       "--chaos needs --rank"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--on-miss", "fastest"},
       "--on-miss"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--arch", "sm/90"},
       "not an architecture tag"},
      {{"choose", "--kernel", "k", "--key", "x"}, "--candidates is required"},
      {{"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "x",
        "--chaos", "--rank", "-1"},
       "a rank is 0 or more"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{}, "subcommand"},
  };
  for (const auto& [args, expected] : cases) {
    const auto result = run_cli(args);
    BOOST_TEST_INFO("expected '" << expected << "' in stderr: " << result.err);
    BOOST_TEST(result.code == 2);
    BOOST_TEST(result.out.empty());
    BOOST_TEST(one_line(result.err));
    BOOST_TEST(result.err.find(expected) != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_key_that_is_not_the_kernels_is_refused_not_matched_to_the_wildcard) {
  // Commas where '|' goes name one argument "M=4096,N=4096,K=1024": no entry
  // matches it, and a '*' entry would answer without a word.
  const auto commas =
      run_cli({"choose", "--candidates", kCandidates, "--table", kTables, "--arch", "sm90",
               "--kernel", "demo.ops.matmul", "--key", "M=4096,N=4096,K=1024|bf16|bf16"});
  BOOST_TEST(commas.code == 2);
  BOOST_TEST(commas.out.empty());
  BOOST_TEST(commas.err.find("--key 'M=4096,N=4096,K=1024|bf16|bf16': part 1 should be "
                             "M=<value>: the kernel's key is M=<value>|N=<value>|K=<value>, then "
                             "the dtypes, every part separated by '|'") != std::string::npos);
  const auto other = run_cli(
      {"choose", "--candidates", kCandidates, "--kernel", "demo.ops.softmax", "--key", "M=4|f32"});
  BOOST_TEST(other.code == 2);
  BOOST_TEST(other.err.find("part 1 should be N=<value>") != std::string::npos);
  BOOST_TEST(run_cli({"choose", "--candidates", kCandidates, "--table", kTables, "--arch", "sm90",
                      "--kernel", "demo.ops.matmul", "--key", "M=4096|N=4096|K=1024|bf16|bf16"})
                 .code == 0);
}

BOOST_AUTO_TEST_CASE(help_goes_to_stdout_and_succeeds) {
  const auto result = run_cli({"choose", "--help"});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("--candidates") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(choose_nondeterministic)

// The table's "nondeterministic" list reaches `choose`: on a key the table
// has no entry for, the cheapest fallback skips the flagged config, and
// --explain says so with the rules' own words.
BOOST_AUTO_TEST_CASE(a_flagged_cheapest_is_skipped_and_explained) {
  TempDir dir;
  dir.write("sm90.json", R"({"arch": "sm90", "kernels": {},
    "nondeterministic": {"demo.ops.matmul": ["BLOCK_K=64,BLOCK_M=32,BLOCK_N=32,SPLIT_K=8;warps=2;stages=2"]}})");
  const auto plain = decision(choose("demo.ops.matmul", "M=1|N=1|K=1|bf16|bf16"));
  BOOST_TEST(plain["index"] == 3);  // without the table: the cheapest
  const auto out =
      decision(choose("demo.ops.matmul", "M=1|N=1|K=1|bf16|bf16",
                      {"--table", dir.path().string(), "--arch", "sm90", "--explain"}));
  BOOST_TEST(out["index"] == 2);  // the next cheapest
  BOOST_TEST(out["reason"] == "min_cost");
  BOOST_TEST(out.dump().find("nondeterministic: candidate(s) 3 known to change their own bits") !=
             std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
