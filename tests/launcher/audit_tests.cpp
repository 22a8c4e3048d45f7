// TUNELOCK_MODE=audit: a run that launches what pinned launches (same
// bits, same choice log) and, on the first call per key, times every live
// candidate and checks the bits of the entry's configs, then writes
// <prefix>.rank<N>.audit.json for `tunelock table audit`.
#include <boost/test/unit_test.hpp>

#include "sum_family.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/records/audit_report.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using namespace tunelock::testing;

namespace {

// The merged table with the entry's config swapped for `config` (a variant's
// index) and its equivalents set to `equivalents`.
void pin(const std::filesystem::path& tables, std::size_t config,
         const std::vector<std::size_t>& equivalents) {
  const auto variants = sums(std::make_shared<Launches>());
  auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  TableEntry entry{variants.at(config).config};
  for (std::size_t i : equivalents) entry.equivalent.push_back(variants.at(i).config);
  table->set("t.ops.sum", "N=9|f32", entry);
  write_file_atomically(tables / "host.json", table_to_json(*table));
}

Policy audit(const std::filesystem::path& tables, const std::filesystem::path& prefix) {
  Policy p = pinned(tables, Equivalent::off);
  p.mode = Mode::audit;
  p.record_path = prefix.string();
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(audit_mode)

BOOST_AUTO_TEST_CASE(audit_launches_what_pinned_launches_and_reports_the_regret_of_a_slow_entry) {
  TempDir dir;
  const auto tables = record_and_merge(dir, /*second_input=*/true);
  pin(tables, 0, {1});  // the slow in-order config; the fast one is its equivalent

  Run plain(pinned(tables, Equivalent::off));
  const float plain_out = plain.call();
  Run audited(audit(tables, dir.path() / "audit"));
  for (int i = 0; i < 6; ++i) BOOST_TEST(audited.call() == plain_out);  // the same bits
  BOOST_TEST(audited.runtime.choice_digest() == plain.runtime.choice_digest());
  BOOST_TEST(audited.launches->of[1] >= 1);  // the fast config was timed...
  audited.runtime.flush();

  const AuditFile file = load_audit_file(dir.path() / "audit.rank0.audit.json");
  BOOST_TEST_REQUIRE(file.entries.size() == 1u);
  const AuditEntry& e = file.entries[0];
  BOOST_TEST(e.kernel == "t.ops.sum");
  BOOST_TEST(e.pinned == "BLOCK=1;warps=1;stages=1");
  BOOST_TEST(e.reason == "table");
  BOOST_TEST(e.calls == 6);
  BOOST_TEST(e.candidates.size() == 4u);
  BOOST_TEST((e.repeats == std::optional<bool>(true)));
  BOOST_TEST(e.equivalent_differs.empty());  // 1 has 0's bits
  BOOST_TEST(!e.stale);

  const AuditReport report = audit_report({file}, 5);
  BOOST_TEST_REQUIRE(report.rows.size() == 1u);
  BOOST_TEST(report.rows[0].fastest == "BLOCK=8;warps=4;stages=2");
  // A 3 ms sleep against none: far over any limit, on any machine.
  BOOST_TEST(*report.rows[0].regret_pct > 100);
  BOOST_TEST(report.over_regret == 1);
  BOOST_TEST(report.exit_code() == 1);
}

BOOST_AUTO_TEST_CASE(an_equivalent_with_other_bits_and_a_stale_entry_are_reported) {
  TempDir dir;
  const auto tables = record_and_merge(dir, true);
  pin(tables, 1, {2});  // the fast config, with a wrongly listed "equivalent" (adds backwards)
  {
    Run run(audit(tables, dir.path() / "a"));
    run.call();
    run.runtime.flush();
  }
  const AuditEntry e = load_audit_file(dir.path() / "a.rank0.audit.json").entries.at(0);
  BOOST_TEST(e.pinned == "BLOCK=8;warps=4;stages=2");
  BOOST_TEST((e.equivalent_differs == std::vector<std::string>{"BLOCK=16;warps=4;stages=2"}));
  const AuditReport report = audit_report({load_audit_file(dir.path() / "a.rank0.audit.json")}, 5);
  BOOST_TEST(report.bits_problems == 1);
  BOOST_TEST(report.exit_code() == 1);

  // An entry naming a config no variant has: stale, and a fallback chose.
  auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  table->set("t.ops.sum", "N=9|f32", TableEntry{make_config({{"BLOCK", 999}}, 4, 2)});
  write_file_atomically(tables / "host.json", table_to_json(*table));
  Policy p = audit(tables, dir.path() / "b");
  p.on_miss = OnMiss::min_cost;
  {
    Run run(p);
    run.call();
    run.runtime.flush();
  }
  const AuditEntry stale = load_audit_file(dir.path() / "b.rank0.audit.json").entries.at(0);
  BOOST_TEST(stale.stale);
  BOOST_TEST(stale.reason == "min_cost");
}

BOOST_AUTO_TEST_CASE(audit_needs_a_record_prefix_and_writes_nothing_in_pinned_mode) {
  TempDir dir;
  const auto tables = record_and_merge(dir, true);
  Policy p = audit(tables, "");
  p.record_path.clear();
  BOOST_CHECK_EXCEPTION(p.validate(), Error, [](const Error& e) {
    return std::string(e.what()).find("mode 'audit' needs a record path") != std::string::npos;
  });
  Policy plain = pinned(tables, Equivalent::off);
  plain.record_path = (dir.path() / "p").string();
  {
    Run run(plain);
    run.call();
    run.runtime.flush();
  }
  BOOST_TEST(!std::filesystem::exists(dir.path() / "p.rank0.audit.json"));
}

BOOST_AUTO_TEST_SUITE_END()
