// `tunelock table audit` (what audit runs' files say a table costs),
// `table show`'s provenance lines and the provenance policy field, as a user
// runs them: output, exit codes (0 within the limit, 1 over it or on changed
// bits, 2 on bad input) and one-line errors naming the file.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "temp_dir.hpp"

using tunelock::testing::run_cli;
using tunelock::testing::TempDir;

namespace {

std::string path(const TempDir& dir, const std::string& name) {
  return (dir.path() / name).string();
}

// One rank's audit: M=1 pinned at 1.2 ms where 1.0 ms was possible (20 %).
std::string audit_file(int rank, double pinned_ms, bool repeats = true) {
  return R"({"format_version": 1, "rank": )" + std::to_string(rank) + R"(, "device": {},
    "entries": [{"arch": "sm90", "kernel": "pkg.mm", "key": "M=1", "pinned": "P",
                 "reason": "table", "stale": false, "repeats": )" +
         (repeats ? "true" : "false") + R"(, "equivalent_differs": [], "calls": 5,
                 "candidates": [{"signature": "P", "median_ms": )" +
         std::to_string(pinned_ms) + R"(}, {"signature": "F", "median_ms": 1.0}]}]})";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(audit_command)

BOOST_AUTO_TEST_CASE(regret_over_the_limit_exits_1_and_within_it_0) {
  TempDir dir;
  dir.write("a.rank0.audit.json", audit_file(0, 1.2));
  dir.write("a.rank1.audit.json", audit_file(1, 1.2));
  const auto over =
      run_cli({"table", "audit", path(dir, "a.rank0.audit.json"), path(dir, "a.rank1.audit.json")});
  BOOST_TEST(over.code == 1);
  BOOST_TEST(
      over.out.find("regret 20.0% (over the limit); 10 call(s) on 2 rank(s)") != std::string::npos,
      over.out);
  const auto within =
      run_cli({"table", "audit", "--max-regret", "25", path(dir, "a.rank0.audit.json")});
  BOOST_TEST(within.code == 0);
  const auto json = run_cli({"table", "audit", "--json", path(dir, "a.rank0.audit.json")});
  BOOST_TEST(json.code == 1);
  const auto report = nlohmann::json::parse(json.out);
  BOOST_TEST(report["rows"][0]["fastest"] == "F");
  BOOST_TEST(report["exit_code"] == 1);
}

BOOST_AUTO_TEST_CASE(changed_bits_exit_1_bad_files_and_values_exit_2) {
  TempDir dir;
  dir.write("bits.audit.json", audit_file(0, 1.0, /*repeats=*/false));
  const auto bits = run_cli({"table", "audit", path(dir, "bits.audit.json")});
  BOOST_TEST(bits.code == 1);
  BOOST_TEST(bits.out.find("bits changed") != std::string::npos);

  dir.write("bad.audit.json", R"({"format_version": 1, "entries": [{"arch": "sm90"}]})");
  const auto bad = run_cli({"table", "audit", path(dir, "bad.audit.json")});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err.find("bad.audit.json: entries[0].kernel: missing") != std::string::npos,
             bad.err);
  const auto missing = run_cli({"table", "audit", path(dir, "none.audit.json")});
  BOOST_TEST(missing.code == 2);
  BOOST_TEST(missing.err.find("none.audit.json") != std::string::npos);
  const auto negative =
      run_cli({"table", "audit", "--max-regret", "-1", path(dir, "bits.audit.json")});
  BOOST_TEST(negative.code == 2);
  dir.write("a.audit.json", audit_file(0, 1.0));
  dir.write("b.audit.json", audit_file(0, 1.0));
  const auto twice =
      run_cli({"table", "audit", path(dir, "a.audit.json"), path(dir, "b.audit.json")});
  BOOST_TEST(twice.code == 2);
  BOOST_TEST(twice.err.find("are both rank 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(show_prints_who_voted_and_the_policy_knows_the_provenance_check) {
  TempDir dir;
  dir.write("t.json", R"({"arch": "sm90", "kernels": {}, "triton": "3.6.0",
    "provenance": {"device_name": "NVIDIA H100 | NVIDIA H200", "ranks": 8, "runs": 2,
                   "mixed": ["device_name"]}})");
  const auto shown = run_cli({"table", "show", path(dir, "t.json")});
  BOOST_TEST(shown.code == 0);
  BOOST_TEST(shown.out.find("voted:    8 rank(s) of 2 run(s)") != std::string::npos, shown.out);
  BOOST_TEST(shown.out.find("mixed:    the records differed in device_name") != std::string::npos);
  BOOST_TEST(shown.out.find("triton:   3.6.0") != std::string::npos);
  const auto policy = run_cli({"policy", "--provenance", "strict"});
  BOOST_TEST(policy.code == 0);
  BOOST_TEST(policy.out.find("provenance:       strict") != std::string::npos);
  const auto identity = run_cli({"policy"}, {{"TUNELOCK_IDENTITY", "ignore"}});
  BOOST_TEST(identity.out.find("identity:         ignore\n") != std::string::npos, identity.out);
  const auto bad = run_cli({"policy"}, {{"TUNELOCK_PROVENANCE", "sometimes"}});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err.find("warn, strict, ignore") != std::string::npos, bad.err);
}

BOOST_AUTO_TEST_SUITE_END()
