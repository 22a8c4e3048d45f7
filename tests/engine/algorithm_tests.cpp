// Candidates that are different kernels (Inductor's templates and ATen
// calls): a config's algorithm in every form a table takes, and a kernel's
// own untimed default as the on_miss choice.
#include <boost/test/unit_test.hpp>

#include "captured_log.hpp"
#include "error_of.hpp"
#include "inductor_choices.hpp"
#include "tables/table_json_fast.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::CapturedLog;
using tunelock::testing::contains;
using tunelock::testing::error_of;
using tunelock::testing::mm_choices;
using tunelock::testing::with_algorithm;

namespace {

const KernelId kMm{"inductor", "mm"};

std::string table_text(const std::string& config_json) {
  return R"({"arch": "sm90", "format_version": 1, "kernels": {"inductor.mm": {"k": )" +
         config_json + "}}}\n";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(algorithms)

BOOST_AUTO_TEST_CASE(the_signature_names_the_algorithm_and_reads_back) {
  const std::vector<Config> choices = mm_choices();
  BOOST_TEST(signature(choices[0]) == ";warps=0;stages=0;algorithm=aten_mm");
  BOOST_TEST(signature(choices[1]) ==
             "BLOCK_K=32,BLOCK_M=64,BLOCK_N=64;warps=4;stages=3;algorithm=triton_mm");
  for (const Config& c : choices) BOOST_TEST((config_from_signature(signature(c), "s") == c));
  // Same parameters, another algorithm: another config.
  BOOST_TEST(!(with_algorithm(choices[1], "triton_bmm") == choices[1]));
  BOOST_TEST(!(make_config({}, 0, 0) == choices[0]));
  BOOST_TEST(error_of([] {
               config_from_signature(";warps=0;stages=0;algorithm=", "s.txt");
             }).find("s.txt: unknown option 'algorithm='") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(json_writes_the_algorithm_only_when_set_and_refuses_a_bad_one) {
  const Config aten = mm_choices()[0];
  BOOST_TEST(config_to_json(aten).at("algorithm") == "aten_mm");
  BOOST_TEST(!config_to_json(make_config({{"BLOCK", 8}})).contains("algorithm"));
  BOOST_TEST((config_from_json(config_to_json(aten), "c") == aten));
  nlohmann::json bad = config_to_json(aten);
  bad["algorithm"] = "aten mm";
  BOOST_TEST(error_of([&] {
               config_from_json(bad, "t.json: kernels.k");
             }).find("t.json: kernels.k.algorithm: 'aten mm' is not an algorithm name") !=
             std::string::npos);
  bad["algorithm"] = 3;
  BOOST_TEST(error_of([&] {
               config_from_json(bad, "t.json: kernels.k");
             }).find("t.json: kernels.k.algorithm: expected a string") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_table_form_keeps_the_algorithm_and_matches_by_it) {
  InMemoryTable table("sm90");
  const std::vector<Config> choices = mm_choices();
  table.set("inductor.mm", "k1", TableEntry{choices[2]});
  table.set("inductor.mm", "k2", TableEntry{choices[0]});
  const std::string json = table_to_json(table);
  const auto full = table_from_json(json, "t.json");
  const auto binary = table_from_binary(table_to_binary(table), "t.tlb");
  const auto fast = detail::fast_table_from_json(json, "t.json");
  BOOST_REQUIRE(full);
  BOOST_TEST(table_to_json(*binary) == json);
  if (fast) BOOST_TEST(table_to_json(*fast) == json);
  for (const Table* t :
       {static_cast<const Table*>(full.get()), static_cast<const Table*>(binary.get())}) {
    BOOST_TEST(*t->match("inductor.mm", "k1", choices).index == 2u);
    BOOST_TEST(*t->match("inductor.mm", "k2", choices).index == 0u);
    // The same tile under another template is not the entry.
    std::vector<Config> other = choices;
    other[2].algorithm = "triton_mm_persistent";
    BOOST_TEST(!t->match("inductor.mm", "k1", other).index.has_value());
  }
}

BOOST_AUTO_TEST_CASE(a_table_with_a_bad_algorithm_is_refused_by_name) {
  const std::string bad =
      table_text(R"({"kwargs": {}, "num_warps": 0, "num_stages": 0, "algorithm": "a;b"})");
  BOOST_TEST(error_of([&] {
               table_from_json(bad, "tables/sm90.json");
             }).find("tables/sm90.json: kernels.inductor.mm") != std::string::npos);
  BOOST_TEST(error_of([&] {
               table_from_json(bad, "tables/sm90.json");
             }).find("'a;b' is not an algorithm name") != std::string::npos);
  BOOST_TEST(!detail::fast_table_from_json(bad, "tables/sm90.json"));  // the full one says why
}

BOOST_AUTO_TEST_CASE(every_form_names_the_file_and_member_of_a_bad_algorithm) {
  const std::string aten = R"("kwargs": {}, "num_warps": 0, "num_stages": 0, "algorithm": )";
  const std::string equivalent =
      table_text("{" + aten + R"("aten_mm", "equivalent": [{)" + aten + R"("aten mm"}]})");
  const std::string error = error_of([&] { table_from_json(equivalent, "tables/sm90.json"); });
  BOOST_TEST(
      contains(error,
               "tables/sm90.json: kernels.inductor.mm[\"k\"].equivalent[0].algorithm: 'aten mm' "
               "is not an algorithm name"),
      error);
  // The binary table: a name no writer of this tunelock stores.
  InMemoryTable table("sm90");
  table.set("inductor.mm", "k", TableEntry{with_algorithm(make_config({}, 0, 0), "a;b")});
  BOOST_TEST(
      contains(error_of([&] { table_from_binary(table_to_binary(table), "tables/sm90.tlb"); }),
               "tables/sm90.tlb: configs[0]: algorithm 'a;b' is not an algorithm name"));
  // torch.compile's candidates, as the C ABI names them, and a manifest's.
  BOOST_TEST(contains(error_of([&] {
                        config_from_json(nlohmann::json::parse("{" + aten + "3}"), "candidates[1]");
                      }),
                      "candidates[1].algorithm: expected a string"));
  BOOST_TEST(contains(error_of([&] {
                        candidates_from_json(R"({"kernels": {"inductor.mm": {"key": ["M"], )"
                                             R"("configs": [{)" +
                                                 aten + R"("a=b"}]}}})",
                                             "c.json");
                      }),
                      "c.json: kernels.inductor.mm.configs[0].algorithm: 'a=b' is not an "
                      "algorithm name"));
}

BOOST_AUTO_TEST_CASE(on_miss_takes_the_kernels_own_default_and_says_so) {
  Notices notices;
  CapturedLog log;
  const std::vector<Config> choices = mm_choices();
  std::vector<std::string> explanation;
  SelectionRules rules{"sm90", nullptr, {}, OnMiss::min_cost, &notices};
  rules.explanation = &explanation;
  // Without it: the cheapest (the ATen call has no tile), as before.
  BOOST_TEST(deterministic_choice(kMm, "k", choices, rules).index == 0u);
  rules.own_default = 2;
  explanation.clear();
  const Choice choice = deterministic_choice(kMm, "k", choices, rules);
  BOOST_TEST(choice.index == 2u);
  BOOST_TEST((choice.reason == Reason::min_cost));
  BOOST_TEST(explanation.back() ==
             "on_miss min_cost: candidate 2 is the kernel's own untimed default, decides");
  notices.reset();
  deterministic_choice(kMm, "k", choices, rules);
  BOOST_TEST(log.count("no tuned config for kernel 'inductor.mm' on sm90; using its own untimed "
                       "default") == 1u);
  // A table entry still decides first; on_miss error still refuses.
  InMemoryTable table("sm90");
  table.set("inductor.mm", "k", TableEntry{choices[1]});
  rules.table = &table;
  BOOST_TEST(deterministic_choice(kMm, "k", choices, rules).index == 1u);
  rules.table = nullptr;
  rules.on_miss = OnMiss::error;
  BOOST_CHECK_THROW(deterministic_choice(kMm, "k", choices, rules), TableMissError);
}

BOOST_AUTO_TEST_CASE(an_own_default_known_to_change_its_bits_gives_way_to_the_cheapest) {
  Notices notices;
  CapturedLog log;
  const std::vector<Config> choices = mm_choices();
  const std::vector<DeclaredConfig> racy{{"inductor.mm", signature(choices[2])}};
  SelectionRules rules{"sm90", nullptr, {}, OnMiss::min_cost, &notices};
  rules.declared_nondeterministic = racy;
  rules.own_default = 2;
  BOOST_TEST(deterministic_choice(kMm, "k", choices, rules).index == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
