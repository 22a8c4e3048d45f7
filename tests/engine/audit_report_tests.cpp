// Audit files (what an audit run found per rank) and `tunelock table
// audit`'s report over them: regret per key and weighted by calls, stale
// entries, changed bits, exit code; malformed files refused by name and path.
#include <boost/test/unit_test.hpp>

#include "error_of.hpp"
#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/records/audit_report.hpp"
#include "tunelock/records/record_store.hpp"

using namespace tunelock;
using tunelock::testing::contains;
using tunelock::testing::error_of;
using tunelock::testing::TempDir;

namespace {

AuditEntry entry(const std::string& key, double pinned_ms, double fastest_ms, std::int64_t calls) {
  AuditEntry e;
  e.arch = "sm90";
  e.kernel = "pkg.mm";
  e.key = key;
  e.pinned = "P";
  e.reason = "table";
  e.repeats = true;
  e.calls = calls;
  e.candidates = {{"P", pinned_ms}, {"F", fastest_ms}, {"broken", std::nullopt}};
  return e;
}

AuditFile rank(int r, std::vector<AuditEntry> entries) {
  AuditFile f;
  f.origin = "a.rank" + std::to_string(r) + ".audit.json";
  f.rank = r;
  f.device.device_name = "NVIDIA H200";
  f.entries = std::move(entries);
  return f;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(audit_files)

BOOST_AUTO_TEST_CASE(regret_per_key_and_weighted_by_calls_over_ranks) {
  // M=1: pinned 1.2 vs 1.0 on rank 0, 1.4 vs 1.0 on rank 1: medians 1.3 vs
  // 1.0, regret 30 %. M=2: the pinned config is the fastest: 0 %.
  // Weighted: (10*1.3 + 30*2.0) / (10*1.0 + 30*2.0) - 1 = 73/70 - 1 = 4.2857 %.
  AuditEntry m2 = entry("M=2", 2.0, 3.0, 15);
  const std::vector<AuditFile> files{rank(0, {entry("M=1", 1.2, 1.0, 4), m2}),
                                     rank(1, {entry("M=1", 1.4, 1.0, 6), m2})};
  const AuditReport report = audit_report(files, 5);
  BOOST_TEST_REQUIRE(report.rows.size() == 2u);
  const AuditRow& m1 = report.rows[0];
  BOOST_TEST(m1.key == "M=1");
  BOOST_TEST(*m1.pinned_ms == 1.3, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(m1.fastest == "F");
  BOOST_TEST(*m1.regret_pct == 30.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(m1.calls == 10);
  BOOST_TEST(m1.ranks == 2);
  BOOST_TEST(report.rows[1].fastest == "P");
  BOOST_TEST(*report.rows[1].regret_pct == 0.0);
  BOOST_TEST(*report.total_regret_pct == 100.0 * (73.0 / 70.0 - 1),
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(report.over_regret == 1);
  BOOST_TEST(report.exit_code() == 1);
  BOOST_TEST(audit_report(files, 31).exit_code() == 0);
  const std::string text = audit_report_text(report);
  BOOST_TEST(contains(text,
                      "sm90|pkg.mm|M=1\n  pinned P (table): 1.3 ms; fastest F: 1 ms; "
                      "regret 30.0% (over the limit); 10 call(s) on 2 rank(s)"));
  BOOST_TEST(contains(text, "table regret weighted by calls: 4.3%"));
  BOOST_TEST(audit_report_json(report)["rows"][0]["regret_pct"].get<double>() == 30.0,
             boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(stale_entries_and_changed_bits_are_named_and_fail_the_audit) {
  AuditEntry stale = entry("M=1", 1.0, 1.0, 1);
  stale.stale = true;
  stale.reason = "min_cost";
  AuditEntry changed = entry("M=2", 1.0, 1.0, 1);
  changed.repeats = false;
  AuditEntry differs = entry("M=3", 1.0, 1.0, 1);
  differs.equivalent_differs = {"E"};
  const AuditReport report = audit_report({rank(0, {stale, changed, differs})}, 5);
  BOOST_TEST(report.over_regret == 0);
  BOOST_TEST(report.bits_problems == 2);
  BOOST_TEST(report.exit_code() == 1);
  const std::string text = audit_report_text(report);
  BOOST_TEST(contains(text, "stale: the table's entry names no live candidate"));
  BOOST_TEST(contains(text, "bits changed: the pinned config gave different bits"));
  BOOST_TEST(contains(text, "equivalent config E gave other bits than the pinned config"));
}

BOOST_AUTO_TEST_CASE(audit_files_round_trip_and_malformed_ones_are_refused_by_path) {
  TempDir dir;
  RecordStore store;  // what an audit run keeps, and writes at exit
  Provenance device;
  device.device_name = "host CPU";
  store.set_device(device);
  const std::size_t id = store.add_audit(entry("M=2", 1.0, 0.5, 0));
  store.add_audit(entry("M=1", 2.0, 1.0, 0));
  store.count_audited_call(id, 7);
  store.write(dir.path() / "run", 3);
  const AuditFile read = load_audit_file(dir.path() / "run.rank3.audit.json");
  BOOST_TEST(read.rank == 3);
  BOOST_TEST(read.device.device_name == "host CPU");
  BOOST_TEST_REQUIRE(read.entries.size() == 2u);
  BOOST_TEST(read.entries[0].key == "M=1");  // sorted
  BOOST_TEST(read.entries[1].calls == 7);
  BOOST_TEST(!read.entries[1].candidates[2].median_ms);
  BOOST_TEST(*read.entries[1].pinned_ms() == 1.0);

  auto refused = [](const std::string& text) {
    return error_of([&] { audit_from_json(text, "a.json"); });
  };
  BOOST_TEST(contains(refused("[]"), "a.json"));
  BOOST_TEST(contains(refused(R"({"entries": []})"), "a.json: format_version: missing"));
  BOOST_TEST(contains(refused(R"({"format_version": 9, "entries": []})"),
                      "format_version 9 is not supported"));
  const std::string head = R"({"format_version": 1, "entries": [)";
  BOOST_TEST(
      contains(refused(head + R"({"arch": "sm90"}]})"), "a.json: entries[0].kernel: missing"));
  const std::string good =
      R"({"arch": "a", "kernel": "k", "key": "M=1", "pinned": "P", "reason": "table", "calls": 1, )";
  BOOST_TEST(contains(
      refused(head + good + R"("candidates": [{"signature": "P", "median_ms": -1}]}]})"),
      "a.json: entries[0].candidates[0].median_ms: expected a non-negative number or null"));
  BOOST_TEST(contains(refused(head + good + R"("candidates": [{"signature": "P"}]}]})"),
                      "a.json: entries[0].candidates[0].median_ms: missing"));
  BOOST_TEST(contains(
      refused(
          head +
          R"({"arch": "a", "kernel": "k", "key": "M=1", "pinned": "P", "reason": "table", "calls": -2, "candidates": []}]})"),
      "a.json: entries[0].calls"));
  BOOST_TEST(contains(refused(R"({"format_version": 1, "entries": [)"), "a.json"));
  BOOST_TEST(contains(error_of([&] {
                        audit_report({rank(0, {}), rank(0, {})}, 5);
                      }),
                      "are both rank 0; give one audit file per rank"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(audit_files)

BOOST_AUTO_TEST_CASE(a_config_that_changes_its_own_bits_is_never_the_fastest) {
  // F is faster but racy (float atomics): the regret is against the fastest
  // config a table could pin, here the pinned one itself.
  AuditEntry e = entry("M=1", 2.0, 1.0, 1);
  e.candidates[1].nondeterministic = true;
  const AuditReport report = audit_report({rank(0, {e})}, 5);
  BOOST_TEST(report.rows.at(0).fastest == "P");
  BOOST_TEST(*report.rows.at(0).regret_pct == 0.0);
  BOOST_TEST(report.exit_code() == 0);
  const AuditFile read = audit_from_json(audit_to_json(rank(0, {e})), "a.json");
  BOOST_TEST(read.entries.at(0).candidates.at(1).nondeterministic);
}

// A gate must not pass what it did not measure: an entry whose pinned
// config is not among its candidates, or that has none, has no regret.
BOOST_AUTO_TEST_CASE(an_entry_whose_pinned_config_was_never_measured_fails_the_gate) {
  AuditEntry absent = entry("M=1", 2.0, 1.0, 1);
  absent.pinned = "not-a-candidate";
  AuditEntry empty = entry("M=2", 2.0, 1.0, 1);
  empty.candidates.clear();
  const AuditReport report = audit_report({rank(0, {absent, empty})}, 5);
  BOOST_TEST(report.unmeasured == 2);
  BOOST_TEST(report.exit_code() == 1);
  BOOST_TEST(audit_report({rank(0, {absent})}, 1000).exit_code() == 1);  // no limit passes it
  const std::string text = audit_report_text(report);
  BOOST_TEST(contains(text, "sm90|pkg.mm|M=1\n  pinned not-a-candidate (table): not run"));
  BOOST_TEST(contains(text, "  regret unknown: the pinned config was not measured\n"));
  BOOST_TEST(contains(text, "2 with regret unknown"));
  BOOST_TEST(audit_report_json(report)["unmeasured"] == 2);
  BOOST_TEST(audit_report_json(report)["exit_code"] == 1);
}

BOOST_AUTO_TEST_SUITE_END()
