// The timing-free decision rules: table, block sizes, on_miss; chaos; and
// reducing a list at registration.
#include <boost/test/unit_test.hpp>

#include "captured_log.hpp"
#include "tables/table_entry_json.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/selection.hpp"

using namespace tunelock;
using tunelock::testing::CapturedLog;

namespace {

// Three candidates: a fast big tile, the cheapest, and a medium one.
std::vector<Config> three() {
  return {make_config({{"BLOCK_M", 128}, {"BLOCK_N", 128}}, 8, 3),
          make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}}, 4, 2),
          make_config({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4, 3)};
}

const KernelId kKernel{"pkg.ops", "matmul"};

TableEntry entry_of(const Config& c) { return TableEntry{c}; }

// A table that answers only the required questions, so selection takes the
// base class's defaults: every name length may be held, one lookup per key.
class UnfilteredTable final : public Table {
 public:
  explicit UnfilteredTable(const Table& inner) : inner_(inner) {}
  std::string_view arch() const override { return inner_.arch(); }
  const Provenance& provenance() const override { return inner_.provenance(); }
  std::optional<TableEntry> entry(std::string_view kernel, std::string_view key) const override {
    return inner_.entry(kernel, key);
  }
  bool has_kernel(std::string_view kernel) const override { return inner_.has_kernel(kernel); }
  EntryMatch match(std::string_view kernel, std::string_view key,
                   std::span<const Config> candidates) const override {
    return inner_.match(kernel, key, candidates);
  }
  std::vector<std::string> kernels() const override { return inner_.kernels(); }
  std::vector<std::string> keys(std::string_view kernel) const override {
    return inner_.keys(kernel);
  }

 private:
  const Table& inner_;
};

SelectionRules rules_with(const Table* table, Notices& notices, OnMiss on_miss = OnMiss::min_cost,
                          std::span<const BlockSize> blocks = {}) {
  return SelectionRules{"sm90", table, blocks, on_miss, &notices};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(selection)

BOOST_AUTO_TEST_CASE(untuned_kernel_falls_back_to_cheapest_and_warns_once) {
  Notices notices;
  CapturedLog log;
  const auto candidates = three();
  for (int call = 0; call < 3; ++call) {
    const Choice choice =
        deterministic_choice(kKernel, "M=1", candidates, rules_with(nullptr, notices));
    BOOST_TEST(choice.index == 1u);
    BOOST_TEST((choice.reason == Reason::min_cost));
  }
  BOOST_TEST(log.count("no tuned config for kernel 'pkg.ops.matmul' on sm90") == 1u);
  notices.reset();  // a new policy reports again
  deterministic_choice(kKernel, "M=1", candidates, rules_with(nullptr, notices));
  BOOST_TEST(log.count("no tuned config for kernel 'pkg.ops.matmul' on sm90") == 2u);
}

BOOST_AUTO_TEST_CASE(cost_ties_go_to_the_earlier_candidate) {
  Notices notices;
  const std::vector<Config> tied{make_config({{"BLOCK_M", 64}}, 4, 2),
                                 make_config({{"BLOCK_M", 32}}, 4, 4),
                                 make_config({{"BLOCK_M", 128}}, 4, 1)};
  BOOST_TEST(cheapest(tied) == 0u);
  BOOST_TEST(deterministic_choice(kKernel, "k", tied, rules_with(nullptr, notices)).index == 0u);
}

BOOST_AUTO_TEST_CASE(table_hit_returns_the_live_candidate) {
  Notices notices;
  // The choice is an index into the live list, never a config rebuilt from the table.
  std::vector<Config> candidates = three();
  candidates[2].maxnreg = 168;
  InMemoryTable table("sm90");
  table.set("pkg.ops.matmul", "M=1",
            entry_of(make_config({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4, 3, 1, 168)));
  const Choice choice =
      deterministic_choice(kKernel, "M=1", candidates, rules_with(&table, notices));
  BOOST_TEST(choice.index == 2u);
  BOOST_TEST((choice.reason == Reason::table));
  BOOST_TEST(signature(candidates[choice.index]) ==
             "BLOCK_M=64,BLOCK_N=64;warps=4;stages=3;maxnreg=168");
}

BOOST_AUTO_TEST_CASE(entry_naming_maxnreg_or_ctas_must_match_them) {
  Notices notices;
  std::vector<Config> candidates = three();
  InMemoryTable table("sm90");
  TableEntry with_maxnreg = entry_of(candidates[0]);
  with_maxnreg.config.maxnreg = 128;  // no live candidate has it
  table.set("matmul", "M=1", with_maxnreg);
  table.set("matmul", "*", entry_of(candidates[2]));  // num_ctas=1, as candidate 2 has
  const Choice choice =
      deterministic_choice(kKernel, "M=1", candidates, rules_with(&table, notices));
  BOOST_TEST(choice.index == 2u);
  BOOST_TEST((choice.reason == Reason::table_wildcard));
}

// Megatron fills what an entry leaves out (num_ctas 1, maxnreg and
// ir_override unset) and then compares every field.
BOOST_AUTO_TEST_CASE(
    an_entry_leaving_out_ctas_maxnreg_or_ir_override_never_pins_a_candidate_that_sets_them) {
  const auto entry = table_entry_from_json(
      nlohmann::json::parse(R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3})"),
      "e");
  Config plain = make_config({{"BLOCK_M", 64}}, 4, 3);
  Config two_ctas = plain, with_maxnreg = plain, with_ir = plain;
  two_ctas.num_ctas = 2;
  with_maxnreg.maxnreg = 128;
  with_ir.ir_override = "k.ttgir";
  BOOST_TEST(entry.matches(plain));
  BOOST_TEST(!entry.matches(two_ctas));
  BOOST_TEST(!entry.matches(with_maxnreg));
  BOOST_TEST(!entry.matches(with_ir));

  // Through the rules: the ctas=2 candidate comes first yet is never pinned.
  Notices notices;
  InMemoryTable table("sm90");
  table.set("matmul", "M=1", entry);
  const std::vector<Config> candidates{two_ctas, plain};
  const Choice choice =
      deterministic_choice(kKernel, "M=1", candidates, rules_with(&table, notices));
  BOOST_TEST(choice.index == 1u);
  BOOST_TEST((choice.reason == Reason::table));
}

BOOST_AUTO_TEST_CASE(stale_exact_entry_falls_through_to_wildcard) {
  Notices notices;
  CapturedLog log;
  const auto candidates = three();
  InMemoryTable table("sm90");
  table.set("matmul", "M=1", entry_of(make_config({{"BLOCK_M", 256}, {"BLOCK_N", 256}}, 8, 3)));
  table.set("matmul", "*", entry_of(candidates[0]));
  const Choice choice =
      deterministic_choice(kKernel, "M=1", candidates, rules_with(&table, notices));
  BOOST_TEST(choice.index == 0u);
  BOOST_TEST((choice.reason == Reason::table_wildcard));
  BOOST_TEST(log.count("matches none of the 3 live candidates") == 1u);
}

BOOST_AUTO_TEST_CASE(stale_entries_everywhere_fall_to_on_miss_and_are_never_fabricated) {
  Notices notices;
  const auto candidates = three();
  InMemoryTable table("sm90");
  table.set("matmul", "M=1", entry_of(make_config({{"BLOCK_M", 256}}, 8, 3)));
  table.set("matmul", "*", entry_of(make_config({{"BLOCK_M", 512}}, 8, 3)));
  const Choice choice =
      deterministic_choice(kKernel, "M=1", candidates, rules_with(&table, notices));
  BOOST_TEST(choice.index == 1u);
  BOOST_TEST((choice.reason == Reason::min_cost));
  BOOST_CHECK_THROW(
      deterministic_choice(kKernel, "M=1", candidates, rules_with(&table, notices, OnMiss::error)),
      TableMissError);
}

BOOST_AUTO_TEST_CASE(qualified_name_is_tried_before_bare_name) {
  Notices notices;
  const auto candidates = three();
  InMemoryTable table("sm90");
  table.set("matmul", "M=1", entry_of(candidates[0]));
  table.set("pkg.ops.matmul", "*", entry_of(candidates[2]));
  // The qualified name's "*" entry wins over the bare name's exact entry.
  const Choice choice =
      deterministic_choice(kKernel, "M=1", candidates, rules_with(&table, notices));
  BOOST_TEST(choice.index == 2u);
  BOOST_TEST((choice.reason == Reason::table_wildcard));
  // A kernel of another module only sees the bare entry.
  const Choice other = deterministic_choice(KernelId{"other", "matmul"}, "M=1", candidates,
                                            rules_with(&table, notices));
  BOOST_TEST(other.index == 0u);
  BOOST_TEST((other.reason == Reason::table));
}

// Selection skips a name whose length the table holds no name of, without
// building it. Every way of filing a kernel (qualified, bare, both, names of
// the same length or 64 longer that are not it, no module) must decide as a
// table without that filter does, and as an explained decision, which asks
// about every name.
BOOST_AUTO_TEST_CASE(skipping_names_by_length_never_changes_a_decision) {
  const auto candidates = three();
  const std::vector<std::string> pool{"matmul",         "pkg.ops.matmul", "pkg.ops.matmuX",
                                      "matmuX",         "other.matmul",   std::string(70, 'm'),
                                      "pkg.ops.matmul2"};
  const std::vector<KernelId> kernels{kKernel, KernelId{"", "matmul"}, KernelId{"other", "matmul"},
                                      KernelId{"pkg.ops", "matmuX"},
                                      KernelId{"", std::string(6, 'm')}};
  int decided_by_table = 0;
  for (unsigned subset = 0; subset < (1u << pool.size()); ++subset) {
    InMemoryTable table("sm90");
    for (std::size_t i = 0; i < pool.size(); ++i) {
      if (subset & (1u << i)) table.set(pool[i], i % 2 ? "*" : "M=1", entry_of(candidates[i % 3]));
    }
    const UnfilteredTable unfiltered(table);
    for (const KernelId& kernel : kernels) {
      for (const char* key : {"M=1", "M=2"}) {
        Notices notices;
        std::vector<std::string> explanation;
        SelectionRules explained = rules_with(&table, notices);
        explained.explanation = &explanation;
        const Choice filtered =
            deterministic_choice(kernel, key, candidates, rules_with(&table, notices));
        BOOST_TEST((filtered == deterministic_choice(kernel, key, candidates,
                                                     rules_with(&unfiltered, notices))));
        BOOST_TEST((filtered == deterministic_choice(kernel, key, candidates, explained)));
        decided_by_table += filtered.reason != Reason::min_cost;
      }
    }
  }
  BOOST_TEST(decided_by_table > 400);  // the table decided often, not just the fallback
}

BOOST_AUTO_TEST_CASE(block_override_beats_on_miss_error) {
  Notices notices;
  const auto candidates = three();
  const std::vector<BlockSize> blocks{{"BLOCK_M", 64}, {"BLOCK_N", 64}};
  const Choice choice = deterministic_choice(kKernel, "M=1", candidates,
                                             rules_with(nullptr, notices, OnMiss::error, blocks));
  BOOST_TEST(choice.index == 2u);
  BOOST_TEST((choice.reason == Reason::block_sizes));
}

BOOST_AUTO_TEST_CASE(block_override_needs_every_named_param) {
  const auto candidates = three();
  const std::vector<BlockSize> partial{{"BLOCK_M", 64}, {"BLOCK_K", 16}};
  BOOST_TEST(!match_block_sizes(candidates, partial).has_value());
  const std::vector<BlockSize> m32{{"BLOCK_M", 32}};
  BOOST_TEST(*match_block_sizes(candidates, m32) == 1u);
  BOOST_TEST(!match_block_sizes(candidates, {}).has_value());
}

BOOST_AUTO_TEST_CASE(table_beats_block_override) {
  Notices notices;
  const auto candidates = three();
  InMemoryTable table("sm90");
  table.set("matmul", "M=1", entry_of(candidates[0]));
  const std::vector<BlockSize> blocks{{"BLOCK_M", 64}};
  const Choice choice = deterministic_choice(kKernel, "M=1", candidates,
                                             rules_with(&table, notices, OnMiss::min_cost, blocks));
  BOOST_TEST(choice.index == 0u);
  BOOST_TEST((choice.reason == Reason::table));
}

BOOST_AUTO_TEST_CASE(on_miss_error_names_kernel_key_arch_and_the_fix) {
  Notices notices;
  const auto candidates = three();
  try {
    deterministic_choice(kKernel, "M=7|f16", candidates,
                         rules_with(nullptr, notices, OnMiss::error));
    BOOST_FAIL("expected TableMissError");
  } catch (const TableMissError& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find("'pkg.ops.matmul'") != std::string::npos);
    BOOST_TEST(message.find("'M=7|f16'") != std::string::npos);
    BOOST_TEST(message.find("sm90") != std::string::npos);
    BOOST_TEST(message.find("TUNELOCK_RECORD") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(rules_apply_to_a_single_candidate_too) {
  Notices notices;
  const std::vector<Config> one{make_config({{"BLOCK_M", 64}}, 4, 3)};
  BOOST_CHECK_THROW(
      deterministic_choice(kKernel, "k", one, rules_with(nullptr, notices, OnMiss::error)),
      TableMissError);
  InMemoryTable table("sm90");
  table.set("matmul", "k", entry_of(one[0]));
  BOOST_TEST((deterministic_choice(kKernel, "k", one, rules_with(&table, notices)).reason ==
              Reason::table));
}

BOOST_AUTO_TEST_CASE(empty_candidate_list_is_an_error) {
  Notices notices;
  BOOST_CHECK_THROW(deterministic_choice(kKernel, "k", {}, rules_with(nullptr, notices)), Error);
  BOOST_CHECK_THROW(chaos_choice(kKernel, "k", {}, 0), Error);
}

BOOST_AUTO_TEST_CASE(reason_names_match_the_log_vocabulary) {
  BOOST_TEST(to_string(Reason::table) == "table");
  BOOST_TEST(to_string(Reason::table_wildcard) == "table*");
  BOOST_TEST(to_string(Reason::block_sizes) == "block_sizes");
  BOOST_TEST(to_string(Reason::min_cost) == "min_cost");
  BOOST_TEST(to_string(Reason::chaos) == "chaos");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(chaos)

// Fixed values, not the formula recomputed: every platform (native, wasm,
// Python) must pick the same. XXH3-64("pkg.ops.matmul|M=1") is
// 2582914777605386604, which is 0 mod 3, so rank r picks r mod 3.
BOOST_AUTO_TEST_CASE(index_is_the_documented_hash_plus_rank) {
  const auto candidates = three();
  const std::size_t expected[8] = {0, 1, 2, 0, 1, 2, 0, 1};
  for (std::uint64_t rank = 0; rank < 8; ++rank) {
    const Choice choice = chaos_choice(kKernel, "M=1", candidates, rank);
    BOOST_TEST(choice.index == expected[rank]);
    BOOST_TEST((choice.reason == Reason::chaos));
  }
}

BOOST_AUTO_TEST_CASE(stable_per_rank_and_neighbouring_ranks_differ) {
  const auto candidates = three();
  const std::vector<Config> two(candidates.begin(), candidates.begin() + 2);
  for (const std::string key : {"M=1", "M=2", "M=4096|f16", "*"}) {
    for (std::uint64_t rank = 0; rank < 16; ++rank) {
      for (const auto& list : {candidates, two}) {
        BOOST_TEST(chaos_choice(kKernel, key, list, rank).index !=
                   chaos_choice(kKernel, key, list, rank + 1).index);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(autotune_configs)

BOOST_AUTO_TEST_CASE(pinned_policy_reduces_to_cheapest_or_block_match) {
  Policy pinned;
  pinned.mode = Mode::pinned;
  auto reduced = tunelock::autotune_configs(three(), pinned);
  BOOST_TEST_REQUIRE(reduced.size() == 1u);
  BOOST_TEST((reduced[0] == three()[1]));
  pinned.block_sizes = {{"BLOCK_M", 128}};
  reduced = tunelock::autotune_configs(three(), pinned);
  BOOST_TEST_REQUIRE(reduced.size() == 1u);
  BOOST_TEST((reduced[0] == three()[0]));
}

BOOST_AUTO_TEST_CASE(deterministic_flag_reduces_but_auto_and_record_keep_the_list) {
  Policy deterministic;
  deterministic.deterministic = true;
  BOOST_TEST(tunelock::autotune_configs(three(), deterministic).size() == 1u);
  Policy automatic;
  BOOST_TEST((tunelock::autotune_configs(three(), automatic) == three()));
  Policy record;
  record.record_path = "/tmp/rec";
  record.deterministic = true;  // the record path wins: timing stays
  BOOST_TEST((tunelock::autotune_configs(three(), record) == three()));
}

// Which equivalents TUNELOCK_EQUIVALENT=timed times: the tie set, and of
// those the record timed faster than the entry's config the two first.
BOOST_AUTO_TEST_CASE(equivalents_worth_timing_are_the_tie_set_and_the_two_first_faster) {
  std::vector<Config> candidates;
  for (int block : {8, 16, 32, 64, 128})
    candidates.push_back(make_config({{"BLOCK", block}}, 4, 2));
  const KernelId kernel{"pkg", "k"};
  const Choice choice{0, Reason::table};
  auto worth = [&](std::optional<std::size_t> faster, std::vector<Config> ties) {
    InMemoryTable table("sm90");
    TableEntry entry{candidates[0]};
    entry.equivalent = {candidates[1], candidates[2], candidates[3], candidates[4]};
    entry.faster_equivalents = faster;
    entry.ties = std::move(ties);
    table.set("pkg.k", "M=1", entry);
    return equivalents_worth_timing(table, kernel, "M=1", candidates, choice);
  };
  using List = std::vector<std::size_t>;
  BOOST_TEST((worth(0, {}) == List{}));                   // the entry was the fastest: none
  BOOST_TEST((worth(1, {}) == List{1}));                  // the one faster
  BOOST_TEST((worth(4, {}) == List{1, 2}));               // at most two of the faster
  BOOST_TEST((worth(0, {candidates[4]}) == List{4}));     // a tie, even if recorded slower
  BOOST_TEST((worth(1, {candidates[3]}) == List{1, 3}));  // in the entry's order
  BOOST_TEST((worth(std::nullopt, {}) == List{1, 2}));    // a table that does not say: two first
}

BOOST_AUTO_TEST_SUITE_END()
