// Batch invariance in the engine: the key's batch dim, a record's row
// audits and a table's invariance read and written (JSON and binary), every
// malformed or contradictory piece refused by name, merge choosing a class
// by the ranks' timings over the sizes, and the pinned choice at a size
// never recorded staying in the class.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "tunelock/base/error.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/class_entry.hpp"
#include "tunelock/model/batch_rows.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/timing_json.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_invariance.hpp"
#include "tunelock/tables/table_json.hpp"
#include "tunelock/verify/verify.hpp"

using namespace tunelock;
using nlohmann::json;

namespace {

const std::string kA = "BLOCK_M=16,SPLIT_K=1;warps=4;stages=2";  // class 1
const std::string kB = "BLOCK_M=64,SPLIT_K=1;warps=4;stages=2";  // class 1
const std::string kC = "BLOCK_M=16,SPLIT_K=2;warps=4;stages=2";  // class 2
const std::string kV = "BLOCK_M=16,SPLIT_K=0;warps=4;stages=2";  // batch-variant

bool message_has(const Error& e, const std::string& text) {
  const bool found = std::string(e.what()).find(text) != std::string::npos;
  if (!found) BOOST_TEST_MESSAGE("message: " << e.what());
  return found;
}

CandidateTiming timed(const std::string& sig, double ms, std::optional<int> row_class,
                      std::vector<std::int64_t> sizes,
                      std::optional<std::int64_t> variant_at = {}) {
  CandidateTiming t{sig, ms};
  t.rows = RowAudit{"M", std::move(sizes), row_class, variant_at};
  return t;
}

std::vector<std::int64_t> ladder(std::int64_t m) { return row_ladder(m); }

std::string key(std::int64_t m) { return "M=" + std::to_string(m) + "|N=8|f32"; }

// One rank's record at M = 1, 8 and 64: A and B one class, C another, V
// variant. Times per size: {A, B, C, V}.
RecordFile record(const std::string& origin,
                  const std::map<std::int64_t, std::array<double, 4>>& times) {
  RecordFile r;
  r.origin = origin;
  r.has_timings = true;
  r.batch_invariant = true;
  for (const auto& [m, ms] : times) {
    const RecordKey k{"host", "t.mm", key(m)};
    r.winners[k] = config_from_signature(kV, "winner");
    r.timings[k] = {timed(kA, ms[0], 0, ladder(m)), timed(kB, ms[1], 0, ladder(m)),
                    timed(kC, ms[2], 1, ladder(m)), timed(kV, ms[3], std::nullopt, ladder(m), 1)};
  }
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_invariance)

BOOST_AUTO_TEST_CASE(the_key_splits_into_its_batch_size_and_its_group) {
  BOOST_TEST(*batch_size_of("M=128|N=64|f16", "M") == 128);
  BOOST_TEST(!batch_size_of("MM=128|N=64", "M"));
  BOOST_TEST(!batch_size_of("M=0|N=64", "M"));
  BOOST_TEST(!batch_size_of("M=x|N=64", "M"));
  BOOST_TEST(group_key_of("N=64|M=128|f16", "M") == "N=64|f16");
  BOOST_TEST(group_key_of("M=128", "M") == "");
  BOOST_TEST(key_at_size("N=64|M=128|f16", "M", 4) == "N=64|M=4|f16");
  BOOST_TEST(row_ladder(6, {3, 9}) == (std::vector<std::int64_t>{1, 2, 3, 4, 6}),
             boost::test_tools::per_element());
  BOOST_TEST(row_ladder(1) == (std::vector<std::int64_t>{1}), boost::test_tools::per_element());
  BOOST_CHECK_EXCEPTION(check_batch_dim_name("M N", "where"), Error,
                        [](const Error& e) { return message_has(e, "where: 'M N' is not"); });
}

BOOST_AUTO_TEST_CASE(a_row_audit_round_trips_and_bad_ones_are_refused_by_name) {
  const RowAudit audit{"M", {1, 2, 4}, 3, std::nullopt};
  BOOST_TEST((row_audit_from_json(row_audit_to_json(audit), "rows") == audit));
  const std::vector<std::pair<std::string, std::string>> bad{
      {R"({"dim": "M", "sizes": [1, 2]})", "rows: expected exactly one of \"class\""},
      {R"({"dim": "M", "sizes": [1, 2], "class": 0, "variant_at": 2})", "exactly one of"},
      {R"({"dim": "M", "sizes": [2, 1], "class": 0})", "rows.sizes: not sorted and unique"},
      {R"({"dim": "M", "sizes": [1, 2], "variant_at": 4})", "rows.variant_at: 4 is not one of"},
      {R"({"dim": "M N", "sizes": [1], "class": 0})", "rows.dim: 'M N' is not"},
      {R"({"dim": "M", "sizes": [], "class": 0})", "rows.sizes: empty"},
      {R"({"dim": "M", "sizes": [1], "class": 0, "colour": 1})", "rows.colour: unknown field"},
      {R"({"sizes": [1], "class": 0})", "rows.dim: missing"},
      {R"([1])", "rows: expected {"},
  };
  for (const auto& [text, expected] : bad)
    BOOST_CHECK_EXCEPTION(row_audit_from_json(json::parse(text), "rows"), Error,
                          [&](const Error& e) { return message_has(e, expected); });
}

BOOST_AUTO_TEST_CASE(merge_picks_the_class_fastest_over_every_size_then_its_fastest_member) {
  // C is fastest at M = 1, but A/B win over the sizes; V (variant) is the
  // fastest of all and never pinned.
  const std::vector<RecordFile> records{
      record("r0",
             {{1, {1.0, 1.2, 0.8, 0.1}}, {8, {2.0, 1.5, 3.0, 0.1}}, {64, {9.0, 5.0, 9.0, 0.1}}}),
      record("r1",
             {{1, {1.1, 1.3, 0.9, 0.1}}, {8, {2.1, 1.6, 3.1, 0.1}}, {64, {9.1, 5.1, 9.1, 0.1}}})};
  const MergeResult merged = merge_records(records, "", "");
  const KernelInvariance& inv = *merged.table->invariance("t.mm");
  BOOST_TEST(inv.variant == std::vector<std::string>{kV}, boost::test_tools::per_element());
  const InvariantGroup& group = inv.groups.at("N=8|f32");
  BOOST_TEST(group.class_configs == (std::vector<std::string>{kA, kB}),
             boost::test_tools::per_element());
  BOOST_TEST(group.recorded == (std::vector<std::int64_t>{1, 8, 64}),
             boost::test_tools::per_element());
  BOOST_TEST(group.proven == ladder(64), boost::test_tools::per_element());
  BOOST_TEST(signature(merged.table->entry("t.mm", key(1))->config) == kA);
  BOOST_TEST(signature(merged.table->entry("t.mm", key(8))->config) == kB);
  BOOST_TEST(signature(merged.table->entry("t.mm", key(64))->config) == kB);

  // The table says so in JSON and binary alike, and the gate passes.
  const auto json_table = table_from_json(table_to_json(*merged.table), "t.json");
  BOOST_TEST((json_table->invariance() == merged.table->invariance()));
  const auto binary = table_from_binary(table_to_binary(*merged.table), "t.tlb");
  BOOST_TEST((binary->invariance() == merged.table->invariance()));
  BOOST_TEST(invariance_passes(invariance_report(*binary)));

  // A size never recorded: the nearest recorded size's class config.
  const std::vector<Config> candidates{
      config_from_signature(kV, "v"), config_from_signature(kC, "c"),
      config_from_signature(kA, "a"), config_from_signature(kB, "b")};
  SelectionRules rules;
  rules.arch = "host";
  rules.table = binary.get();
  rules.on_miss = OnMiss::error;
  const Choice at_6 = deterministic_choice({"t", "mm"}, key(6), candidates, rules);
  BOOST_TEST(signature(candidates[at_6.index]) == kB);  // 8 is nearer than 1
  BOOST_TEST(to_string(at_6.reason) == "table_class");
  BOOST_TEST(
      signature(candidates[deterministic_choice({"t", "mm"}, key(2), candidates, rules).index]) ==
      kA);
  // Another shape: no group; the fallback never takes the variant config.
  rules.on_miss = OnMiss::min_cost;
  const Choice other = deterministic_choice({"t", "mm"}, "M=2|N=16|f32", candidates, rules);
  BOOST_TEST(signature(candidates[other.index]) != kV);
}

BOOST_AUTO_TEST_CASE(configs_one_audit_sees_apart_stay_apart_and_contradictory_dims_are_refused) {
  // r0 classes A with B; r1 at the same key sees B apart from A (with C).
  // B is fastest at M = 8, but it is not A's class any more: A, B and C
  // are three classes, and the fastest of them pins alone.
  RecordFile apart = record("r1", {{8, {2.0, 1.5, 3.0, 0.1}}});
  apart.timings.begin()->second[1].rows->row_class = 1;
  std::vector<RecordFile> records{record("r0", {{8, {2.0, 1.5, 3.0, 0.1}}}), apart};
  const MergeResult merged = merge_records(records, "", "");
  const InvariantGroup& group = merged.table->invariance("t.mm")->groups.at("N=8|f32");
  BOOST_TEST(group.class_configs == std::vector<std::string>{kB}, boost::test_tools::per_element());
  BOOST_TEST(signature(merged.table->entry("t.mm", key(8))->config) == kB);
  // The same split seen at one size of two: apart at every size.
  RecordFile at_eight = record("r0", {{1, {1.0, 1.2, 0.8, 0.1}}, {8, {2.0, 1.5, 3.0, 0.1}}});
  for (auto& [k, candidates] : at_eight.timings)
    if (k.key == key(8)) candidates[1].rows->row_class = 1;
  const MergeResult split = merge_records({at_eight}, "", "");
  for (const auto& [group_key, g] : split.table->invariance("t.mm")->groups)
    BOOST_TEST(g.class_configs.size() == 1u,
               group_key << ": one member, not " << g.class_configs.size());
  RecordFile other_dim = record("r1", {{8, {2.0, 1.5, 3.0, 0.1}}});
  for (auto& t : other_dim.timings.begin()->second) t.rows->dim = "N";
  records = {record("r0", {{8, {2.0, 1.5, 3.0, 0.1}}}), other_dim};
  BOOST_CHECK_EXCEPTION(merge_records(records, "", ""), Error, [](const Error& e) {
    return message_has(e, "contradictory batch dims for t.mm: r0 audits M, r1 audits N");
  });
}

BOOST_AUTO_TEST_CASE(a_table_whose_invariance_contradicts_itself_is_refused_by_name) {
  const MergeResult merged =
      merge_records({record("r0", {{1, {1.0, 1.2, 0.8, 0.1}}, {8, {2.0, 1.5, 3.0, 0.1}}})}, "", "");
  const json good = json::parse(table_to_json(*merged.table));
  auto refused = [&](auto edit, const std::string& expected) {
    json bad = good;
    edit(bad);
    BOOST_CHECK_EXCEPTION(table_from_json(bad.dump(), "t.json"), Error,
                          [&](const Error& e) { return message_has(e, expected); });
  };
  refused([](json& t) { t["kernels"]["t.mm"][key(1)]["kwargs"]["SPLIT_K"] = 2; },
          "invariance of t.mm [" + key(1) + "]: the entry pins " + kC +
              ", outside its invariance class");
  refused(
      [](json& t) {
        t["invariance"]["t.mm"]["groups"]["N=8|f32"]["class"] = {kV, kA, kB};
      },
      "is both in the class and batch-variant");
  refused(
      [](json& t) {
        t["invariance"]["t.mm"]["groups"]["N=8|f32"]["proven"] = {4, 2};
      },
      "proven: not sorted and unique");
  refused([](json& t) { t["invariance"]["t.mm"]["groups"]["N=8|f32"]["recorded"] = {1}; },
          "a size its group does not list as recorded");
  refused(
      [](json& t) {
        t["invariance"]["t.mm"]["groups"]["N=8|f32"]["recorded"] = {1, 8, 64};
      },
      "recorded size 64 has no entry");
  refused([](json& t) { t["invariance"]["t.mm"]["dim"] = 5; },
          "t.json: invariance.t.mm.dim: expected a key argument's name or null");
  refused([](json& t) { t["invariance"]["t.mm"]["groups"]["N=8|f32"]["class"] = {"not a sig"}; },
          "[N=8|f32]: class");
  refused([](json& t) { t["invariance"]["t.mm"].erase("dim"); }, "invariance.t.mm.dim: missing");
  refused([](json& t) { t["invariance"]["t.mm"]["colour"] = 1; }, "unknown field; known: dim");
}

BOOST_AUTO_TEST_CASE(the_gate_fails_a_table_without_audits_and_one_that_proves_nothing) {
  InMemoryTable plain("host");
  plain.set("t.mm", key(8), TableEntry{config_from_signature(kA, "a")});
  const auto reports = invariance_report(plain);
  BOOST_TEST(!invariance_passes(reports));
  BOOST_TEST(invariance_report_text(reports).find("t.mm: unproven") == 0);
  InMemoryTable only_reductions("host");
  only_reductions.set("t.sum", "N=8", TableEntry{config_from_signature(kA, "a")});
  only_reductions.set_invariance({{"t.sum", KernelInvariance{}}});
  BOOST_TEST(!invariance_passes(invariance_report(only_reductions)));  // nothing proven
  BOOST_TEST(!invariance_passes(invariance_report(InMemoryTable("host"))));
}

BOOST_AUTO_TEST_CASE(ranks_at_other_sizes_agree_by_class_and_another_class_is_named) {
  const MergeResult merged =
      merge_records({record("r0", {{1, {1.0, 1.2, 0.8, 0.1}}, {8, {2.0, 1.5, 3.0, 0.1}}})}, "", "");
  const Table& table = *merged.table;
  const KernelId kernel = KernelId::parse("t.mm");
  BOOST_TEST(key_at_every_size(key(8), "M") == "M=*|N=8|f32");
  // M = 1 pins A, M = 8 pins B: one class, one class entry.
  const auto at_one = class_choice_entry(table, "host", kernel, key(1), kA);
  const auto at_eight = class_choice_entry(table, "host", kernel, key(8), kB);
  BOOST_REQUIRE(at_one && at_eight);
  BOOST_TEST(at_one->key == "class|t.mm|host|M=*|N=8|f32");
  BOOST_TEST(at_one->value == "class{" + kA + " | " + kB + "};pinned");
  BOOST_TEST((*at_one == *at_eight));
  // Nothing to add: a config outside the class, a kernel or group the
  // table does not hold invariant.
  BOOST_TEST(!class_choice_entry(table, "host", kernel, key(8), kC));
  BOOST_TEST(!class_choice_entry(table, "host", KernelId::parse("t.other"), key(8), kA));
  BOOST_TEST(!class_choice_entry(table, "host", kernel, "M=8|N=9|f32", kA));

  // Two ranks at M = 1 and M = 8 share no key but the class entry: agreed.
  using Entries = std::map<std::string, std::string>;
  const ChoiceLogFile rank0{0,
                            Entries{{choice_log_key("host", "t.mm", key(1)), kA + ";pinned"},
                                    {at_one->key, at_one->value}},
                            {}};
  const ChoiceLogFile rank1{1,
                            Entries{{choice_log_key("host", "t.mm", key(8)), kB + ";pinned"},
                                    {at_eight->key, at_eight->value}},
                            {}};
  const std::vector<NamedLog> agreeing{{"r0", &rank0}, {"r1", &rank1}};
  const ChoiceLogCheck agreed = check_choice_logs(agreeing);
  BOOST_TEST(agreed.result.agreed);
  BOOST_TEST(agreed.result.compared == 4u);
  // A rank pinned on a table whose class is another: the class entry names it.
  const ChoiceLogFile other{1,
                            Entries{{choice_log_key("host", "t.mm", key(8)), kC + ";pinned"},
                                    {at_one->key, "class{" + kC + "};pinned"}},
                            {}};
  const std::vector<NamedLog> differing{{"r0", &rank0}, {"r1", &other}};
  const ChoiceLogCheck conflict = check_choice_logs(differing);
  BOOST_TEST(!conflict.result.agreed);
  BOOST_REQUIRE(conflict.result.conflicts.size() == 1u);
  BOOST_TEST(conflict_report(conflict.result.conflicts)
                 .find("class|t.mm|host|M=*|N=8|f32: 'class{" + kA) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
