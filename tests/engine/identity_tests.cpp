// Tables that know their kernels' code: the identity through every form
// (table JSON and .tlb, sidecar JSON and .tlrt, choice logs), merge's one
// identity per kernel, and the coverage gate that names what a table does
// not answer.
#include <boost/test/unit_test.hpp>

#include "error_of.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/table_coverage.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::contains;
using tunelock::testing::error_of;

namespace {

const Config kSmall = make_config({{"BLOCK", 64}}, 4, 2);
const Config kLarge = make_config({{"BLOCK", 256}}, 8, 3);

RecordFile record(int rank, const std::string& identity) {
  RecordFile r;
  r.origin = "run.rank" + std::to_string(rank) + ".json";
  r.run = "run";
  r.rank = rank;
  r.has_timings = true;
  r.winners[{"sm90", "pkg.mm", "M=1"}] = kSmall;
  r.timings[{"sm90", "pkg.mm", "M=1"}] = {{signature(kSmall), 1.0}, {signature(kLarge), 2.0}};
  if (!identity.empty()) r.identities["sm90"]["pkg.mm"] = identity;
  return r;
}

InMemoryTable table_with(const std::string& identity) {
  InMemoryTable t("sm90");
  t.set("pkg.mm", "M=1", TableEntry{kSmall});
  t.set("pkg.mm", "M=2", TableEntry{kLarge});
  if (!identity.empty()) t.set_identities({{"pkg.mm", identity}});
  return t;
}

ChoiceLogFile log_of(int rank, std::map<std::string, std::string> entries,
                     std::string identity = "") {
  ChoiceLogFile log{rank, std::move(entries), {}};
  if (!identity.empty()) log.identities["sm90|pkg.mm"] = identity;
  return log;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_identities)

BOOST_AUTO_TEST_CASE(a_tables_identities_round_trip_json_and_binary) {
  const InMemoryTable table = table_with("triton:abc");
  const std::string json = table_to_json(table);
  BOOST_TEST(contains(json, "\"identities\""));
  const auto from_json = table_from_json(json, "t.json");
  BOOST_TEST(from_json->identity("pkg.mm") == "triton:abc");
  const auto from_binary = table_from_binary(table_to_binary(*from_json), "t.tlb");
  BOOST_TEST(from_binary->identity("pkg.mm") == "triton:abc");
  BOOST_TEST(table_to_json(*from_binary) == json);
  // Without identities (Megatron's tables): no member, none read.
  const std::string plain = table_to_json(table_with(""));
  BOOST_TEST(!contains(plain, "identities"));
  BOOST_TEST(table_from_json(plain, "t.json")->identities().empty());
  BOOST_TEST(table_from_binary(table_to_binary(table_with("")), "t.tlb")->identities().empty());
}

BOOST_AUTO_TEST_CASE(a_bad_identity_is_named_where_it_is) {
  const std::string base = R"({"arch": "sm90", "kernels": {}, "identities": )";
  BOOST_TEST(contains(error_of([&] { table_from_json(base + R"({"k": 3}})", "t.json"); }),
                      "t.json: identities.k"));
  BOOST_TEST(contains(error_of([&] { table_from_json(base + R"({"k": ""}})", "t.json"); }),
                      "identities.k: empty"));
  BOOST_TEST(
      contains(error_of([&] { table_from_json(base + "[]}", "t.json"); }), "t.json: identities"));
  RecordFile r;
  const std::string sidecar = R"({"timings": {}, "identities": {"sm90": {"pkg.mm": 1}}})";
  BOOST_TEST(
      contains(error_of([&] { add_timings_from_json(r, sidecar, "s.json"); }), "identities.sm90"));
}

BOOST_AUTO_TEST_CASE(every_identity_reader_names_the_file_and_member) {
  RecordFile r;
  BOOST_TEST(contains(error_of([&] {
                        add_timings_from_json(
                            r, R"({"timings": {}, "identities": {"sm90": {"pkg.mm": 1}}})",
                            "run.rank0.timings.json");
                      }),
                      "run.rank0.timings.json: identities.sm90.pkg.mm: expected a string"));
  // The binary sidecar: an identity no writer leaves empty.
  RecordFile empty = record(0, "");
  empty.identities["sm90"]["pkg.mm"] = "";
  BOOST_TEST(contains(
      error_of([&] { add_timings(r, timings_to_binary(empty), "run.rank0.timings.tlrt"); }),
      "run.rank0.timings.tlrt: identities[0].identity: empty"));
  const std::string log = R"({"rank": 0, "entries": {}, "identities": )";
  BOOST_TEST(contains(
      error_of([&] { choice_log_from_bytes(log + R"({"sm90|pkg.mm": 3}})", "c.rank0.json"); }),
      "c.rank0.json: identities[\"sm90|pkg.mm\"]: expected a string"));
  BOOST_TEST(contains(error_of([&] { choice_log_from_bytes(log + "[]}", "c.rank0.json"); }),
                      "c.rank0.json: identities: expected an object"));
}

BOOST_AUTO_TEST_CASE(sidecar_identities_round_trip_json_and_binary) {
  RecordFile r = record(0, "version:7");
  RecordFile from_json, from_binary;
  add_timings(from_json, timings_to_json(r), "s.json");
  add_timings(from_binary, timings_to_binary(r), "s.tlrt");
  BOOST_TEST(from_json.identities.at("sm90").at("pkg.mm") == "version:7");
  BOOST_TEST(from_binary.identities.at("sm90").at("pkg.mm") == "version:7");
  BOOST_TEST(timings_to_json(from_binary) == timings_to_json(r));
}

BOOST_AUTO_TEST_CASE(merge_keeps_the_majoritys_identity_and_names_the_records_that_differ) {
  const MergeResult merged = merge_records(
      {record(0, "triton:new"), record(1, "triton:old"), record(2, "triton:new"), record(3, "")},
      "", "");
  BOOST_TEST(merged.table->identity("pkg.mm") == "triton:new");
  BOOST_REQUIRE(merged.identity_conflicts.size() == 1u);
  BOOST_TEST(contains(merged.identity_conflicts[0], "pkg.mm: records disagree"));
  BOOST_TEST(contains(merged.identity_conflicts[0], "kept triton:new (2 record(s))"));
  BOOST_TEST(contains(merged.identity_conflicts[0], "run.rank1.json (triton:old)"));
  // It survives the table's forms.
  const auto back = table_from_binary(table_to_binary(*merged.table), "t.tlb");
  BOOST_TEST(back->identity("pkg.mm") == "triton:new");
  // Records without identities merge as before: none in the table.
  BOOST_TEST(merge_records({record(0, "")}, "", "").table->identities().empty());
}

BOOST_AUTO_TEST_CASE(a_choice_logs_identities_round_trip_and_stay_out_of_the_digest) {
  ChoiceLogFile log = log_of(0, {{"sm90|pkg.mm|M=1", signature(kSmall) + ";pinned"}}, "triton:x");
  const ChoiceLogFile from_json = choice_log_from_bytes(choice_log_to_json(log), "c.json");
  const ChoiceLogFile from_binary = choice_log_from_bytes(choice_log_to_binary(log), "c.tlcl");
  BOOST_TEST(from_json.identities.at("sm90|pkg.mm") == "triton:x");
  BOOST_TEST(from_binary.identities.at("sm90|pkg.mm") == "triton:x");
  BOOST_TEST(from_json.digest == choice_digest(log.entries));
}

BOOST_AUTO_TEST_CASE(coverage_names_each_fallback_stale_entry_and_identity_mismatch) {
  const InMemoryTable table = table_with("triton:new");
  const std::string small = signature(kSmall) + ";pinned";
  const std::vector<ChoiceLogFile> logs{
      log_of(0,
             {{"sm90|pkg.mm|M=1", small},                              // answered
              {"sm90|pkg.mm|M=2", small},                              // stale: entry names kLarge
              {"sm90|pkg.mm|M=3", small},                              // no entry
              {"sm90|pkg.one|*", small},                               // one candidate
              {"consensus|pkg.mm|sm90|M=1 from x at check 0", small},  // a switch
              {"h100|pkg.mm|M=9", small}},                             // another arch
             "triton:new"),
      log_of(1, {{"sm90|pkg.mm|M=1", small}, {"sm90|pkg.mm|M=3", small}}, "triton:old")};
  const CoverageReport report = table_coverage(table, logs, {"c.rank0.json", "c.rank1.json"});
  BOOST_TEST(report.needed == 3u);
  BOOST_TEST(report.answered == 0u);  // M=1 answered, but rank 1 ran other code
  BOOST_TEST(report.exit_code() == 1);
  BOOST_REQUIRE(report.misses.size() == 3u);
  BOOST_TEST(report.misses[0].key == "M=1");
  BOOST_TEST((report.misses[0].gap == CoverageGap::identity));
  BOOST_TEST(report.misses[0].run_identity == "triton:old");
  BOOST_TEST((report.misses[0].ranks == std::vector<int>{1}));
  BOOST_TEST((report.misses[1].gap == CoverageGap::stale));
  BOOST_TEST(report.misses[1].entry == signature(kLarge));
  BOOST_TEST((report.misses[2].gap == CoverageGap::fallback));
  BOOST_TEST((report.misses[2].ranks == std::vector<int>{0, 1}));
  const std::string text = coverage_text(report);
  BOOST_TEST(contains(text, "3 key(s) needed by 2 log(s), 0 answered by an entry, 3 not"));
  BOOST_TEST(contains(text, "[M=3] no entry: fell back to block sizes or the cheapest"));
  BOOST_TEST(contains(text, "[M=2] stale: the entry names " + signature(kLarge)));
  BOOST_TEST(coverage_json(report)["covered"] == false);
}

BOOST_AUTO_TEST_CASE(a_full_table_covers_a_run_and_timed_choices_need_only_an_entry) {
  const InMemoryTable table = table_with("triton:new");
  const std::vector<ChoiceLogFile> logs{
      log_of(0,
             {{"sm90|pkg.mm|M=1", signature(kSmall) + ";pinned"},
              {"sm90|pkg.mm|M=2", signature(kSmall) + ";timed"}},  // won on a clock
             "triton:new")};
  const CoverageReport report = table_coverage(table, logs, {"c.json"});
  BOOST_TEST(report.needed == 2u);
  BOOST_TEST(report.answered == 2u);
  BOOST_TEST(report.exit_code() == 0);
  BOOST_TEST(coverage_json(report)["covered"] == true);
}

// A kernel filed under its bare name (Megatron's tables, Inductor's
// generated kernels) is compared by the identity filed under that name.
// The name the table answered under was once a view into a KernelId gone
// when the lookup returned (fuzz/regressions/table_coverage/).
BOOST_AUTO_TEST_CASE(a_kernel_filed_under_its_bare_name_is_compared_by_identity) {
  const std::string bare = "triton_red_fused_native_layer_norm_0";
  InMemoryTable table("sm90");
  table.set(bare, "x=1", TableEntry{kSmall});
  table.set_identities({{bare, "triton:new"}});
  ChoiceLogFile log{
      0, {{"sm90|inductor.generated." + bare + "|x=1", signature(kSmall) + ";pinned"}}, {}};
  log.identities["sm90|inductor.generated." + bare] = "triton:old";
  const CoverageReport report = table_coverage(table, {log}, {"c.rank0.json"});
  BOOST_REQUIRE(report.misses.size() == 1u);
  BOOST_TEST((report.misses[0].gap == CoverageGap::identity));
  BOOST_TEST(report.misses[0].table_identity == "triton:new");
  BOOST_TEST(report.misses[0].run_identity == "triton:old");
}

BOOST_AUTO_TEST_CASE(a_log_whose_key_is_malformed_is_named_with_its_entry) {
  const std::vector<ChoiceLogFile> logs{
      log_of(0, {{"sm90|pkg.mm|M=1", signature(kSmall) + ";pinned"}}),
      log_of(1, {{"sm90|pkg.mm", signature(kSmall) + ";pinned"}})};
  BOOST_TEST(error_of([&] {
               table_coverage(table_with(""), logs, {"c.rank0.json", "c.rank1.json"});
             }) == "c.rank1.json: entry 'sm90|pkg.mm' is not arch|kernel|key");
}

BOOST_AUTO_TEST_CASE(logs_of_another_arch_are_an_error_naming_it) {
  const std::vector<ChoiceLogFile> logs{log_of(0, {{"h100|pkg.mm|M=1", "x;pinned"}})};
  const std::string error = error_of([&] { table_coverage(table_with(""), logs, {"c.json"}); });
  BOOST_TEST(contains(error, "no choices for sm90 (they hold h100)"));
}

BOOST_AUTO_TEST_SUITE_END()
