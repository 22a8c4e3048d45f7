// What tunelock knows about configs' bits, in the table and the policy:
// the fallback rules skip known-nondeterministic configs for every key, the
// lists survive both table forms, and malformed lists are clear errors.
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "captured_log.hpp"
#include "error_of.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_contradictions.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::CapturedLog;
using tunelock::testing::error_of;

namespace {

// The cheapest (index 1) is the one flagged; index 2 is next cheapest.
std::vector<Config> three() {
  return {make_config({{"BLOCK_M", 128}, {"BLOCK_N", 128}}, 8, 3),
          make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"SPLIT_K", 4}}, 4, 2),
          make_config({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4, 3)};
}

const KernelId kKernel{"pkg.ops", "matmul"};

InMemoryTable flagging(const std::string& kernel_name, const Config& racy) {
  InMemoryTable table("sm90");
  table.set("pkg.ops.other", "M=1", TableEntry{racy});
  table.set_nondeterministic({{kernel_name, {signature(racy)}}});
  return table;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(numerics)

BOOST_AUTO_TEST_CASE(the_cheapest_fallback_skips_what_the_table_flags_under_either_name) {
  const auto candidates = three();
  for (const std::string name : {"pkg.ops.matmul", "matmul"}) {
    const InMemoryTable table = flagging(name, candidates[1]);
    Notices notices;
    std::vector<std::string> explanation, warnings;
    const SelectionRules rules{"sm90",   &table,       {},       OnMiss::min_cost,
                               &notices, &explanation, &warnings};
    for (const char* key : {"M=1", "M=2", "*"}) {
      const Choice choice = deterministic_choice(kKernel, key, candidates, rules);
      BOOST_TEST(choice.index == 2u);
      BOOST_TEST((choice.reason == Reason::min_cost));
    }
    BOOST_TEST(std::count_if(explanation.begin(), explanation.end(), [](const std::string& line) {
                 return contains(line, "nondeterministic: candidate(s) 1 known to change");
               }) == 3);  // once per decision
    BOOST_TEST(contains(warnings.at(0), "1 config(s) known to be nondeterministic skipped"));
    BOOST_TEST(!contains(warnings.at(0), "which is deterministic"));
  }
}

BOOST_AUTO_TEST_CASE(block_sizes_skip_a_flagged_match_and_take_the_next) {
  auto candidates = three();
  candidates[2] = make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}}, 8, 2);  // also BLOCK_M=32
  const InMemoryTable table = flagging("pkg.ops.matmul", candidates[1]);
  Notices notices;
  const std::vector<BlockSize> blocks{{"BLOCK_M", 32}};
  const SelectionRules rules{"sm90", &table, blocks, OnMiss::min_cost, &notices};
  const Choice choice = deterministic_choice(kKernel, "M=1", candidates, rules);
  BOOST_TEST(choice.index == 2u);
  BOOST_TEST((choice.reason == Reason::block_sizes));
}

// A flagged config never wins: not even the table's own entry pins it
// (DESIGN), and the flag is the kernel's only.
BOOST_AUTO_TEST_CASE(a_table_entry_the_table_flags_is_skipped_and_other_kernels_are_untouched) {
  const auto candidates = three();
  InMemoryTable table = flagging("pkg.ops.matmul", candidates[1]);
  table.set("pkg.ops.matmul", "M=1", TableEntry{candidates[1]});
  Notices notices;
  const SelectionRules rules{"sm90", &table, {}, OnMiss::min_cost, &notices};
  BOOST_TEST(deterministic_choice(kKernel, "M=1", candidates, rules).index == 2u);
  BOOST_TEST(deterministic_choice({"pkg.ops", "conv"}, "M=1", candidates, rules).index == 1u);
}

BOOST_AUTO_TEST_CASE(declarations_in_the_policy_and_on_variants_count_alike) {
  const auto candidates = three();
  Notices notices;
  const std::vector<DeclaredConfig> declared{{"pkg.ops.matmul", signature(candidates[1])}};
  SelectionRules by_policy{"sm90", nullptr, {}, OnMiss::min_cost, &notices};
  by_policy.declared_nondeterministic = declared;
  BOOST_TEST(deterministic_choice(kKernel, "k", candidates, by_policy).index == 2u);
  const std::vector<std::string> variants{signature(candidates[1])};
  SelectionRules by_variant{"sm90", nullptr, {}, OnMiss::min_cost, &notices};
  by_variant.nondeterministic_variants = variants;
  BOOST_TEST(deterministic_choice(kKernel, "k", candidates, by_variant).index == 2u);
  const std::vector<DeclaredConfig> elsewhere{{"pkg.ops.conv", signature(candidates[1])}};
  SelectionRules other{"sm90", nullptr, {}, OnMiss::min_cost, &notices};
  other.declared_nondeterministic = elsewhere;
  BOOST_TEST(deterministic_choice(kKernel, "k", candidates, other).index == 1u);
}

BOOST_AUTO_TEST_CASE(every_candidate_flagged_takes_the_cheapest_and_says_so) {
  const auto candidates = three();
  std::vector<std::string> all;
  for (const Config& c : candidates) all.push_back(signature(c));
  Notices notices;
  std::vector<std::string> warnings;
  SelectionRules rules{"sm90", nullptr, {}, OnMiss::min_cost, &notices, nullptr, &warnings};
  rules.nondeterministic_variants = all;
  BOOST_TEST(deterministic_choice(kKernel, "k", candidates, rules).index == 1u);
  BOOST_TEST(contains(warnings.back(), "every candidate of kernel 'pkg.ops.matmul' is known"));
}

BOOST_AUTO_TEST_CASE(the_lists_round_trip_through_json_and_binary_tables) {
  const auto candidates = three();
  InMemoryTable table = flagging("pkg.ops.matmul", candidates[1]);
  table.set_nondeterministic(
      {{"pkg.ops.matmul", {signature(candidates[1]), signature(candidates[1])}},
       {"b", {"X=1;warps=4;stages=3"}},
       {"empty", {}}});
  const std::string json = table_to_json(table);
  BOOST_TEST(contains(json, "\"nondeterministic\""));
  const auto from_json = table_from_json(json, "t.json");
  const auto from_binary = table_from_binary(table_to_binary(*from_json), "t.tlb");
  for (const Table* read : std::vector<const Table*>{from_json.get(), from_binary.get()}) {
    BOOST_TEST(read->nondeterministic().size() == 2u);                  // the empty list dropped
    BOOST_TEST(read->nondeterministic("pkg.ops.matmul").size() == 1u);  // de-duplicated
    BOOST_TEST(read->nondeterministic("b")[0] == "X=1;warps=4;stages=3");
  }
  // A table without lists writes no member: files from before stay byte-identical.
  InMemoryTable plain("sm90");
  plain.set("k", "*", TableEntry{candidates[0]});
  BOOST_TEST(!contains(table_to_json(plain), "nondeterministic"));
}

BOOST_AUTO_TEST_CASE(malformed_lists_name_the_file_and_path) {
  const std::string head = R"({"arch": "sm90", "kernels": {}, "nondeterministic": )";
  BOOST_TEST(error_of([&] { table_from_json(head + "[]}", "t.json"); }) ==
             "t.json: nondeterministic: expected an object, got array []");
  BOOST_TEST(contains(error_of([&] { table_from_json(head + R"({"k": "x"}})", "t.json"); }),
                      "t.json: nondeterministic.k"));
  BOOST_TEST(contains(error_of([&] { table_from_json(head + R"({"k": [""]}})", "t.json"); }),
                      "t.json: nondeterministic.k[0]: empty"));
  BOOST_TEST(contains(error_of([&] { table_from_json(head + R"({"k": [3]}})", "t.json"); }),
                      "t.json: nondeterministic.k[0]"));
}

// A hand-edited table: its entry pins config 0 and lists config 2 as
// equivalent, and its own nondeterministic list names both.
InMemoryTable contradicting(const std::vector<Config>& candidates) {
  InMemoryTable table("sm90");
  TableEntry entry{candidates[0]};
  entry.equivalent = {candidates[2]};
  table.set("pkg.ops.matmul", "M=1", entry);
  table.set_nondeterministic(
      {{"pkg.ops.matmul", {signature(candidates[0]), signature(candidates[2])}}});
  return table;
}

BOOST_AUTO_TEST_CASE(an_entry_its_own_table_flags_is_skipped_with_a_warning_and_named) {
  const auto candidates = three();
  for (bool binary : {false, true}) {
    const InMemoryTable written = contradicting(candidates);
    const auto table = binary ? table_from_binary(table_to_binary(written), "t.tlb")
                              : table_from_json(table_to_json(written), "t.json");
    Notices notices;
    std::vector<std::string> explanation, warnings;
    const SelectionRules rules{"sm90",   table.get(),  {},       OnMiss::min_cost,
                               &notices, &explanation, &warnings};
    const Choice choice = deterministic_choice(kKernel, "M=1", candidates, rules);
    // Skipped as a stale entry is; the cheapest unflagged config decides.
    BOOST_TEST((choice.reason == Reason::min_cost));
    BOOST_TEST(choice.index == 1u);
    BOOST_TEST(contains(explanation.at(0),
                        "entry matches candidate 0, which the same table lists as "
                        "nondeterministic: contradictory, skipped"));
    BOOST_TEST(
        contains(warnings.at(0), "table entry for kernel 'pkg.ops.matmul' key 'M=1' on sm90 pins " +
                                     signature(candidates[0]) +
                                     ", which the same table lists as nondeterministic; skipped"));
    const std::vector<Contradiction> found = table_contradictions(*table);
    BOOST_TEST(found.size() == 2u);
    BOOST_TEST(found.at(0).text() == "kernel pkg.ops.matmul [M=1]: pinned config " +
                                         signature(candidates[0]) +
                                         " is also listed as nondeterministic for that kernel");
    BOOST_TEST(found.at(1).role == "equivalent");
  }
}

BOOST_AUTO_TEST_CASE(an_equivalent_its_own_table_flags_is_never_worth_timing) {
  const auto candidates = three();
  InMemoryTable table("sm90");
  TableEntry entry{candidates[0]};
  entry.equivalent = {candidates[2], candidates[1]};
  entry.faster_equivalents = 2;
  table.set("pkg.ops.matmul", "M=1", entry);
  table.set_nondeterministic({{"pkg.ops.matmul", {signature(candidates[2])}}});
  const Choice choice{0, Reason::table};
  BOOST_TEST((equivalents_worth_timing(table, kKernel, "M=1", candidates, choice) ==
              std::vector<std::size_t>{1}));
  BOOST_TEST((equivalent_candidates(table, kKernel, "M=1", candidates, choice) ==
              std::vector<std::size_t>{1}));
  BOOST_TEST(table_contradictions(table).at(0).role == "equivalent");
}

BOOST_AUTO_TEST_CASE(the_policy_reads_declarations_and_the_check_switch) {
  const Policy p = policy_from_environment(
      {{"TUNELOCK_NONDETERMINISTIC",
        "pkg.mv@BLOCK_K=64,SPLIT=4;warps=4;stages=2 | mv@X=1;warps=1;stages=1"},
       {"TUNELOCK_CHECK_BITS", "off"}});
  BOOST_TEST(p.nondeterministic.size() == 2u);
  BOOST_TEST(p.nondeterministic[0].kernel == "pkg.mv");
  BOOST_TEST(p.nondeterministic[0].signature == "BLOCK_K=64,SPLIT=4;warps=4;stages=2");
  BOOST_TEST(!p.check_bits);
  BOOST_TEST(policy_from_environment({}).check_bits);
  BOOST_TEST(contains(error_of([] {
                        policy_from_environment({{"TUNELOCK_NONDETERMINISTIC", "no-at-sign"}});
                      }),
                      "TUNELOCK_NONDETERMINISTIC: 'no-at-sign' is not KERNEL@SIGNATURE"));
  BOOST_TEST(contains(error_of([] {
                        policy_from_environment({{"TUNELOCK_CHECK_BITS", "maybe"}});
                      }),
                      "TUNELOCK_CHECK_BITS"));
}

BOOST_AUTO_TEST_SUITE_END()
