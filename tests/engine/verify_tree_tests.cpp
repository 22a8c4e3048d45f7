// Verification along the binomial tree: the same verdicts and reports as the
// all-gather path, the cost the formula promises at 1,024 ranks, and one
// error on every rank when part of the tree is missing.
#include <boost/test/unit_test.hpp>

#include <random>
#include <set>
#include <unordered_map>

#include "ranks.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "verify/binomial_tree.hpp"
#include "verify/hash_to_hash_map.hpp"
#include "verify/tree_verify.hpp"

using namespace tunelock;
using tunelock::testing::message_of;
using tunelock::testing::Rank;
using tunelock::testing::Ranks;

namespace {

const KernelId kMatmul{"pkg.ops", "matmul"};
const Config kBig = make_config({{"BLOCK_M", 128}}, 8, 3);
const Config kSmall = make_config({{"BLOCK_M", 32}}, 4, 2);

void log(Rank& r, const std::string& key, const Config& config) {
  r.runtime.log_choice("sm90", kMatmul, key, config, ChoiceOrigin::pinned);
}

// Four checks that cover each rule: agreement, a key only some ranks saw, a
// conflict within a check, one with an earlier agreed value, and the sticky
// verdict afterwards.
std::vector<std::vector<VerifyResult>> run_story(InProcessGroup::Transport transport) {
  const int n = 6;
  Ranks ranks(n);
  InProcessGroup group(n, "story", std::chrono::seconds(60), transport);
  std::vector<std::vector<VerifyResult>> results(n);
  auto errors = ranks.run([&](Rank& r) {
    auto member = group.member(r.rank);
    log(r, "M=1", kBig);
    if (r.rank % 2) log(r, "stage=odd", kSmall);
    if (r.rank == 0) log(r, "M=late", kBig);
    results[r.rank].push_back(r.runtime.verify(*member));
    log(r, "M=2", r.rank == 4 ? kSmall : kBig);
    if (r.rank == 5) log(r, "M=late", kSmall);  // differs from rank 0's earlier choice
    if (r.rank == 3) log(r, "M=late", kBig);
    results[r.rank].push_back(r.runtime.verify(*member));
    log(r, "M=3", kBig);
    results[r.rank].push_back(r.runtime.verify(*member));
    results[r.rank].push_back(r.runtime.verify(*member));
  });
  for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
  return results;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_tree)

BOOST_AUTO_TEST_CASE(binomial_tree_reaches_every_rank_once_in_log2_rounds) {
  for (int size = 1; size <= 70; ++size) {
    std::multiset<int> reached;
    for (int r = 0; r < size; ++r) {
      for (int c : tree_children(r, size)) {
        BOOST_TEST(tree_parent(c) == r);
        reached.insert(c);
      }
    }
    BOOST_TEST(reached.size() == static_cast<std::size_t>(size - 1));
    BOOST_TEST(std::set<int>(reached.begin(), reached.end()).size() == reached.size());
    int log2_ceil = 0;
    while ((1 << log2_ceil) < size) ++log2_ceil;
    BOOST_TEST(tree_depth(size) <= log2_ceil);
    if ((size & (size - 1)) == 0) BOOST_TEST(tree_depth(size) == log2_ceil);
  }
  BOOST_TEST(tree_depth(1024) == 10);
  BOOST_TEST(tree_depth(16384) == 14);
  BOOST_TEST(tree_depth(100000) <= 17);
}

BOOST_AUTO_TEST_CASE(tree_and_all_gather_give_the_same_verdicts_and_reports) {
  const auto tree = run_story(InProcessGroup::Transport::tree);
  const auto gathered = run_story(InProcessGroup::Transport::gather_only);
  for (std::size_t r = 0; r < tree.size(); ++r) {
    BOOST_TEST_REQUIRE(tree[r].size() == gathered[r].size());
    for (std::size_t check = 0; check < tree[r].size(); ++check) {
      BOOST_TEST(tree[r][check].agreed == gathered[r][check].agreed);
      BOOST_TEST(tree[r][check].compared == gathered[r][check].compared);
      BOOST_TEST((tree[r][check].conflicts == gathered[r][check].conflicts));
    }
  }
  // And what they agree on is right: the second check finds both conflicts.
  BOOST_TEST(tree[0][0].agreed);
  BOOST_TEST(!tree[0][1].agreed);
  BOOST_TEST_REQUIRE(tree[2][1].conflicts.size() == 2u);
  BOOST_TEST(tree[2][1].conflicts[0].key == "sm90|pkg.ops.matmul|M=2");
  BOOST_TEST(tree[2][1].conflicts[1].key == "sm90|pkg.ops.matmul|M=late");
  BOOST_TEST((tree[2][1].conflicts[1].ranks_by_value.at("BLOCK_M=128;warps=8;stages=3;pinned") ==
              std::set<int>{0, 3}));
  BOOST_TEST((tree[2][1].conflicts[1].ranks_by_value.at("BLOCK_M=32;warps=4;stages=2;pinned") ==
              std::set<int>{5}));
  BOOST_TEST(!tree[1][3].agreed);  // sticky
  BOOST_TEST(tree[1][3].compared == 0u);
}

BOOST_AUTO_TEST_CASE(all_reduce_slots_give_the_same_verdicts_and_reports) {
  const auto slots = run_story(InProcessGroup::Transport::all_reduce);
  const auto gathered = run_story(InProcessGroup::Transport::gather_only);
  for (std::size_t r = 0; r < slots.size(); ++r) {
    BOOST_TEST_REQUIRE(slots[r].size() == gathered[r].size());
    for (std::size_t check = 0; check < slots[r].size(); ++check) {
      BOOST_TEST(slots[r][check].agreed == gathered[r][check].agreed);
      BOOST_TEST(slots[r][check].compared == gathered[r][check].compared);
      BOOST_TEST((slots[r][check].conflicts == gathered[r][check].conflicts));
    }
  }
  BOOST_TEST_REQUIRE(slots[2][1].conflicts.size() == 2u);
  BOOST_TEST(slots[2][1].conflicts[1].key == "sm90|pkg.ops.matmul|M=late");
}

// Random logs on 5 ranks over 6 checks: many keys share slots at the first
// level (8 slots per new key), keys arrive late on some ranks and some
// values differ. The slots give exactly the all-gather's verdicts.
BOOST_AUTO_TEST_CASE(all_reduce_slots_match_the_all_gather_on_random_logs) {
  auto run = [](InProcessGroup::Transport transport) {
    const int n = 5;
    Ranks ranks(n);
    InProcessGroup group(n, "random", std::chrono::seconds(60), transport);
    std::vector<std::vector<VerifyResult>> results(n);
    auto errors = ranks.run([&](Rank& r) {
      auto member = group.member(r.rank);
      std::mt19937 random(1234 + static_cast<unsigned>(r.rank));
      for (int check = 0; check < 6; ++check) {
        for (int i = 0; i < 300; ++i) {
          const int key = static_cast<int>(random() % 2000);
          // One key in 97 has a rank-dependent choice.
          const bool differs = key % 97 == 0 && r.rank == key % n;
          log(r, "M=" + std::to_string(key), differs ? kSmall : kBig);
        }
        results[r.rank].push_back(r.runtime.verify(*member));
      }
    });
    for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
    return results;
  };
  const auto slots = run(InProcessGroup::Transport::all_reduce);
  const auto gathered = run(InProcessGroup::Transport::gather_only);
  std::size_t conflicts = 0;
  for (std::size_t r = 0; r < slots.size(); ++r) {
    for (std::size_t check = 0; check < slots[r].size(); ++check) {
      BOOST_TEST(slots[r][check].agreed == gathered[r][check].agreed);
      BOOST_TEST(slots[r][check].compared == gathered[r][check].compared);
      BOOST_TEST((slots[r][check].conflicts == gathered[r][check].conflicts));
      if (r == 0) conflicts += slots[r][check].conflicts.size();
    }
  }
  BOOST_TEST(conflicts > 5u);  // the story has conflicts to find
}

BOOST_AUTO_TEST_CASE(a_check_across_1024_ranks_costs_what_the_formula_says) {
  const int n = 1024;
  const int entries = 100;
  Ranks ranks(n);
  InProcessGroup group(n, "simulated", std::chrono::seconds(120));
  std::vector<std::unique_ptr<Collective>> members;
  for (int r = 0; r < n; ++r) members.push_back(group.member(r));
  auto check = [&](bool expect_agreed) {
    std::vector<VerifyResult> results(n);
    group.reset_traffic();
    auto errors = ranks.run([&](Rank& r) { results[r.rank] = r.runtime.verify(*members[r.rank]); });
    for (int r = 0; r < n; ++r) {
      BOOST_TEST_REQUIRE(!errors[r], message_of(errors[r]));
      BOOST_TEST(results[r].agreed == expect_agreed);
    }
    return results;
  };

  // Nothing new: a tree of empty messages, up and down.
  check(true);
  InProcessGroup::Traffic t = group.traffic();
  TreeCost cost = tree_check_cost(n, false);
  BOOST_TEST(cost.rounds == 20);
  BOOST_TEST(t.rounds == cost.rounds);
  BOOST_TEST(t.messages == cost.messages);
  BOOST_TEST(t.messages == 2 * (n - 1));
  BOOST_TEST(t.most_sent_by_a_rank == cost.most_sent_by_a_rank);
  BOOST_TEST(t.most_bytes_received < 10 * 128);  // ten children's empty partials

  // K new keys on every rank: still one message up per rank, and what a
  // rank sends is O(K) (24 bytes a key), not O(N K).
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < entries; ++k) log(ranks[r], "M=" + std::to_string(k), kBig);
  const auto agreed = check(true);
  BOOST_TEST(agreed[7].compared == static_cast<std::size_t>(n * entries));
  t = group.traffic();
  BOOST_TEST(t.rounds == cost.rounds);
  BOOST_TEST(t.messages == cost.messages);
  BOOST_TEST(t.most_bytes_sent < 10 * (entries * 24 + 256));

  // One rank differs: the second round gathers texts, and every rank gets
  // the report naming that rank (not logged here: 1,024 ranks would each
  // print a thousand rank numbers).
  for (int r = 0; r < n; ++r) log(ranks[r], "M=odd", r == 777 ? kSmall : kBig);
  const spdlog::level::level_enum level = logger().level();
  logger().set_level(spdlog::level::off);
  const auto failed = check(false);
  logger().set_level(level);
  t = group.traffic();
  cost = tree_check_cost(n, true);
  BOOST_TEST(t.rounds == cost.rounds);
  BOOST_TEST(t.messages == cost.messages);
  for (int r = 0; r < n; r += 100) {
    BOOST_TEST_REQUIRE(failed[r].conflicts.size() == 1u);
    BOOST_TEST((failed[r].conflicts[0].ranks_by_value.at("BLOCK_M=32;warps=4;stages=2;pinned") ==
                std::set<int>{777}));
    BOOST_TEST(
        failed[r].conflicts[0].ranks_by_value.at("BLOCK_M=128;warps=8;stages=3;pinned").size() ==
        static_cast<std::size_t>(n - 1));
  }
}

// Sums ranks up the tree; rank 0's verdict is the total.
class SumOfRanks final : public TreeReduction {
 public:
  explicit SumOfRanks(int rank) : sum_(rank) {}
  void absorb(int, std::string_view partial) override { sum_ += std::stoi(std::string(partial)); }
  std::string_view partial() override { return text_ = std::to_string(sum_); }
  std::string_view verdict() override { return text_ = "total " + std::to_string(sum_); }

 private:
  int sum_;
  std::string text_;
};

BOOST_AUTO_TEST_CASE(a_transport_with_all_gather_only_still_runs_the_tree_round) {
  for (auto transport : {InProcessGroup::Transport::tree, InProcessGroup::Transport::gather_only}) {
    const int n = 7;
    Ranks ranks(n);
    InProcessGroup group(n, "sum", std::chrono::seconds(60), transport);
    std::vector<std::string> verdicts(n);
    auto errors = ranks.run([&](Rank& r) {
      auto member = group.member(r.rank);
      SumOfRanks sum(r.rank);
      verdicts[r.rank] = member->tree_round(sum);
    });
    for (int r = 0; r < n; ++r) {
      BOOST_TEST(!errors[r], message_of(errors[r]));
      BOOST_TEST(verdicts[r] == "total 21");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_rank_that_never_comes_fails_every_rank_with_the_same_error) {
  const int n = 4;
  Ranks ranks(n);
  InProcessGroup group(n, "g", std::chrono::seconds(3));
  auto errors = ranks.run([&](Rank& r) {
    if (r.rank == 3) return;  // never checks
    auto member = group.member(r.rank);
    r.runtime.verify(*member);
  });
  for (int r = 0; r < 3; ++r) {
    BOOST_TEST_REQUIRE(static_cast<bool>(errors[r]));
    BOOST_TEST(message_of(errors[r]).find("waiting for rank(s) 3") != std::string::npos,
               message_of(errors[r]));
  }
}

// The root's agreed set: every insert, lookup and erase agrees with a
// std::unordered_map over 200,000 random operations, with keys drawn from a
// small range so that probes collide, wrap around the array and are erased
// from the middle of a run, and key 0 (the empty marker) among them.
BOOST_AUTO_TEST_CASE(the_agreed_set_behaves_as_a_map_under_inserts_and_erases) {
  detail::HashToHashMap map;
  std::unordered_map<std::uint64_t, std::uint64_t> expected;
  std::mt19937_64 random(7);
  for (int op = 0; op < 200000; ++op) {
    const std::uint64_t key = random() % 5000;
    const std::uint64_t value = random();
    switch (random() % 3) {
      case 0: {
        const auto [stored, inserted] = map.emplace(key, value);
        const auto [it, expected_inserted] = expected.emplace(key, value);
        BOOST_REQUIRE_EQUAL(inserted, expected_inserted);
        BOOST_REQUIRE_EQUAL(stored, it->second);
        break;
      }
      case 1:
        BOOST_REQUIRE_EQUAL(map.erase(key), expected.erase(key) == 1);
        break;
      default: {
        const auto found = map.find(key);
        const auto it = expected.find(key);
        BOOST_REQUIRE_EQUAL(found.has_value(), it != expected.end());
        if (found) BOOST_REQUIRE_EQUAL(*found, it->second);
      }
    }
    BOOST_REQUIRE_EQUAL(map.size(), expected.size());
  }
  for (const auto& [key, value] : expected) BOOST_REQUIRE_EQUAL(map.find(key).value(), value);
}

// The leaves' sort against a comparison sort, for small and large batches,
// with uniform keys and with keys that all share their top bits (one bucket:
// the std::sort fallback), duplicates included.
BOOST_AUTO_TEST_CASE(the_leaves_sort_orders_keys_as_a_comparison_sort_does) {
  std::mt19937_64 random(11);
  for (std::size_t n : {0, 1, 2, 3, 17, 1000, 5000}) {
    for (bool crowded : {false, true}) {
      std::vector<fb::KeyRange> ranges, spare;
      std::vector<std::uint32_t> starts;
      std::vector<std::uint64_t> expected;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t key = crowded ? random() >> 52 : random();
        ranges.emplace_back(key, i, i);
        expected.push_back(key);
      }
      std::sort(expected.begin(), expected.end());
      detail::sort_by_key(ranges, spare, starts);
      std::vector<std::uint64_t> got;
      for (const fb::KeyRange& r : ranges) got.push_back(r.key());
      BOOST_TEST(got == expected, "n=" << n << (crowded ? " crowded" : ""));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
