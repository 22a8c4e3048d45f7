// Consensus mode on ranks played in one process: every rank launches the
// deterministic choice until a check, then the one winner merge's rule
// picks from every rank's timings; the table the root writes is the one
// `tunelock merge` writes from the ranks' record files; keys only some
// ranks saw, ranks that reach a key late, an empty check's cost, a rank
// lost during the round and a graph capture.
#include <boost/test/unit_test.hpp>

#include <atomic>

#include "forwarding_collective.hpp"
#include "ranks.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/record_store.hpp"
#include "tunelock/runtime/first_call.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::message_of;
using tunelock::testing::Rank;
using tunelock::testing::Ranks;
using tunelock::testing::TempDir;

namespace {

const KernelId kMatmul{"pkg.ops", "matmul"};
// The cheapest first: the deterministic choice without a table.
const std::vector<Config> kCandidates = {
    make_config({{"BLOCK_M", 16}}, 2, 1), make_config({{"BLOCK_M", 32}}, 4, 2),
    make_config({{"BLOCK_M", 64}}, 4, 3), make_config({{"BLOCK_M", 128}}, 8, 3)};

// A kernel whose four configs give four different results, timed by a
// clock skewed per rank: `fastest` runs in 1 ms, the others in 2-4 ms.
class SkewedRunner final : public CallRunner {
 public:
  SkewedRunner(std::size_t fastest, bool capturing = false)
      : fastest_(fastest), capturing_(capturing) {}
  double time(std::size_t i) override {
    ++times;
    return i == fastest_ ? 1.0 : 2.0 + static_cast<double>(i);
  }
  bool has_outputs() const override { return true; }
  std::string run_outputs(std::size_t i) override {
    return "sum in " + std::to_string(i) + " blocks";
  }
  bool use_second_input() override { return false; }
  void put_back() override {}
  bool capturing() const override { return capturing_; }
  int times = 0;

 private:
  std::size_t fastest_;
  bool capturing_;
};

Policy consensus_policy(const TempDir& dir) {
  return policy_from_key_values(
      {{"mode", "consensus"}, {"record_path", (dir.path() / "run").string()}}, Policy{});
}

FirstCallOutcome call(Rank& r, const std::string& key, CallRunner& runner) {
  FirstCallRequest request;
  request.arch = "host";
  request.kernel = kMatmul;
  request.key = key;
  request.candidates = kCandidates;
  return run_first_call(r.runtime, request, runner);
}

// Rank 0 is fastest with config 1, every other rank with config 2: merge's
// majority picks 2, which is not the deterministic choice (0).
std::size_t local_fastest(int rank) { return rank == 0 ? 1 : 2; }

// A member that forwards to its group's endpoint; a test overrides the
// tree round it wants to break.
class Forwarding : public testing::ForwardingCollective {
 public:
  using ForwardingCollective::ForwardingCollective;

 protected:
  int rounds_ = 0;  // tree rounds so far
};

}  // namespace

BOOST_AUTO_TEST_SUITE(consensus)

BOOST_AUTO_TEST_CASE(every_rank_launches_the_group_winner_after_a_check_on_every_transport) {
  for (auto transport : {InProcessGroup::Transport::tree, InProcessGroup::Transport::gather_only,
                         InProcessGroup::Transport::all_reduce}) {
    TempDir dir;
    Ranks ranks(4, consensus_policy(dir));
    InProcessGroup group(4, "world", std::chrono::seconds(60), transport);
    std::vector<std::size_t> before(4), after(4), again(4);
    std::vector<std::uint64_t> generations(4);
    std::vector<std::string> digests(4);
    // Boost.Test's checks are not thread-safe: the rank threads only record.
    std::vector<int> times_first(4), times_after(4), agreed(4);
    auto errors = ranks.run([&](Rank& r) {
      auto member = group.member(r.rank);
      SkewedRunner runner(local_fastest(r.rank));
      before[r.rank] = call(r, "M=64", runner).launched;
      times_first[r.rank] = runner.times;  // every candidate timed once
      const std::uint64_t generation = r.runtime.generation();
      agreed[r.rank] = r.runtime.verify(*member).agreed;
      generations[r.rank] = r.runtime.generation() - generation;
      after[r.rank] = call(r, "M=64", runner).launched;  // the face asks again
      times_after[r.rank] = runner.times;                // and nothing is timed again
      agreed[r.rank] = agreed[r.rank] && r.runtime.verify(*member).agreed;  // the switches too
      again[r.rank] = call(r, "M=64", runner).launched;
      digests[r.rank] = r.runtime.choice_digest();
      r.runtime.flush();
    });
    for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
    for (int r = 0; r < 4; ++r) {
      BOOST_TEST(before[r] == 0u);  // the deterministic choice, on every rank
      BOOST_TEST(after[r] == 2u);   // the majority's winner
      BOOST_TEST(again[r] == 2u);
      BOOST_TEST(generations[r] == 1u);  // the faces' caches are dropped once
      BOOST_TEST(times_first[r] == 4);
      BOOST_TEST(times_after[r] == 4);
      BOOST_TEST(agreed[r] == 1);
      BOOST_TEST(digests[r] == digests[0]);
    }
    const auto log = ranks[1].runtime.choice_log().snapshot();
    const std::string switched =
        "consensus|pkg.ops.matmul|host|M=64 from " + signature(kCandidates[0]) + " at check 0";
    BOOST_TEST_REQUIRE(log.count(switched) == 1u);
    BOOST_TEST(log.at(switched) == signature(kCandidates[2]) + ";consensus");

    // The table equals merge's over the record files every rank wrote.
    std::vector<std::filesystem::path> files;
    for (int r = 0; r < 4; ++r) files.push_back(RecordStore::record_file(dir.path() / "run", r));
    const MergeResult merged = merge_records(load_record_files(files), "host", "");
    const auto table_file = Runtime::consensus_table_file(dir.path() / "run", "host");
    BOOST_TEST(read_file(table_file) == table_to_json(*merged.table));
    BOOST_TEST(table_to_json(*merged.table).find("\"ranks\": 4") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_pinned_run_with_the_written_table_launches_the_winners) {
  TempDir dir;
  {
    Ranks ranks(2, consensus_policy(dir));
    InProcessGroup group(2, "world");
    auto errors = ranks.run([&](Rank& r) {
      auto member = group.member(r.rank);
      SkewedRunner runner(3);
      call(r, "M=64", runner);
      r.runtime.verify(*member);
      r.runtime.flush();
    });
    for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
  }
  Notices notices;
  Runtime pinned(0, notices);
  pinned.install(policy_from_key_values(
      {{"mode", "pinned"},
       {"table_path",
        Runtime::consensus_table_file(dir.path() / "run", "host").parent_path().string()}},
      Policy{}));
  SkewedRunner runner(0);
  FirstCallRequest request;
  request.arch = "host";
  request.kernel = kMatmul;
  request.key = "M=64";
  request.candidates = kCandidates;
  BOOST_TEST(run_first_call(pinned, request, runner).launched == 3u);
}

BOOST_AUTO_TEST_CASE(keys_only_some_ranks_see_are_decided_by_those_ranks_without_conflict) {
  TempDir dir;
  Ranks ranks(4, consensus_policy(dir));
  InProcessGroup group(4, "pipeline");
  std::vector<std::size_t> after(4);
  std::vector<int> agreed(4);  // not vector<bool>: each rank thread writes its own element
  auto errors = ranks.run([&](Rank& r) {
    auto member = group.member(r.rank);
    // Stages 0-1 run key A, where both are fastest with 1; stages 2-3 run B, fastest with 3.
    const std::string key = r.rank < 2 ? "stage=A" : "stage=B";
    SkewedRunner runner(r.rank < 2 ? 1 : 3);
    call(r, key, runner);
    agreed[r.rank] = r.runtime.verify(*member).agreed;
    after[r.rank] = call(r, key, runner).launched;
    agreed[r.rank] = agreed[r.rank] && r.runtime.verify(*member).agreed;
    r.runtime.flush();
  });
  for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
  for (int r = 0; r < 4; ++r) {
    BOOST_TEST(agreed[r]);
    BOOST_TEST(after[r] == (r < 2 ? 1u : 3u));
  }
  const auto table = table_from_json(
      read_file(Runtime::consensus_table_file(dir.path() / "run", "host")), "table");
  BOOST_TEST(table->entry_count() == 2u);
}

BOOST_AUTO_TEST_CASE(a_rank_that_reaches_a_key_after_the_check_launches_the_winner_untimed) {
  TempDir dir;
  Ranks ranks(3, consensus_policy(dir));
  InProcessGroup group(3, "world");
  std::vector<std::string> digests(3);
  int late_times = -1;
  std::size_t late_launched = 99;
  auto errors = ranks.run([&](Rank& r) {
    auto member = group.member(r.rank);
    SkewedRunner runner(2);
    if (r.rank != 2) call(r, "M=64", runner);
    r.runtime.verify(*member);
    if (r.rank == 2) {
      late_launched = call(r, "M=64", runner).launched;
      late_times = runner.times;
    } else {
      call(r, "M=64", runner);
    }
    r.runtime.verify(*member);
    digests[r.rank] = r.runtime.choice_digest();
  });
  for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
  BOOST_TEST(late_launched == 2u);
  BOOST_TEST(late_times == 0);  // nothing timed: the group already decided
  BOOST_TEST(digests[2] == digests[0]);
  BOOST_TEST(digests[1] == digests[0]);
}

BOOST_AUTO_TEST_CASE(a_check_with_nothing_new_costs_what_a_pinned_check_costs) {
  auto empty_check_messages = [](const Policy& policy) {
    Ranks ranks(8, policy);
    InProcessGroup group(8, "world");
    auto errors = ranks.run([&](Rank& r) {
      auto member = group.member(r.rank);
      SkewedRunner runner(1);
      call(r, "M=64", runner);
      r.runtime.verify(*member);
      r.runtime.verify(*member);  // the consensus' switches, checked
    });
    for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
    group.reset_traffic();
    errors = ranks.run([&](Rank& r) { r.runtime.verify(*group.member(r.rank)); });
    for (const auto& e : errors) BOOST_TEST_REQUIRE(!e, message_of(e));
    return group.traffic().messages;
  };
  TempDir dir;
  const std::int64_t consensus = empty_check_messages(consensus_policy(dir));
  const std::int64_t pinned =
      empty_check_messages(policy_from_key_values({{"mode", "pinned"}}, Policy{}));
  BOOST_TEST(consensus == pinned);
  BOOST_TEST(pinned > 0);
}

// A rank that takes part in the check's comparison and is gone before the
// timings' round: the others name it within the group's timeout.
BOOST_AUTO_TEST_CASE(a_rank_lost_during_the_timings_round_is_named) {
  class DiesInSecondRound final : public Forwarding {
   public:
    using Forwarding::Forwarding;
    std::string tree_round(TreeReduction& reduction) override {
      if (++rounds_ == 2) throw Error("rank 2 died");
      return inner_->tree_round(reduction);
    }
  };
  TempDir dir;
  Ranks ranks(3, consensus_policy(dir));
  InProcessGroup group(3, "world", std::chrono::seconds(4));
  auto errors = ranks.run([&](Rank& r) {
    std::unique_ptr<Collective> member = group.member(r.rank);
    if (r.rank == 2) member = std::make_unique<DiesInSecondRound>(std::move(member));
    SkewedRunner runner(1);
    call(r, "M=64", runner);
    r.runtime.verify(*member);
  });
  BOOST_TEST(message_of(errors[2]) == "rank 2 died");
  for (int r = 0; r < 2; ++r) {
    BOOST_TEST_REQUIRE(static_cast<bool>(errors[r]));
    BOOST_TEST(message_of(errors[r]).find("2") != std::string::npos, message_of(errors[r]));
  }
}

// A rank whose timings arrive garbled: every rank raises the root's error,
// naming the rank it came from, instead of the others waiting for a verdict.
BOOST_AUTO_TEST_CASE(a_garbled_batch_is_named_on_every_rank) {
  class Garbled final : public TreeReduction {
   public:
    explicit Garbled(TreeReduction& inner) : inner_(inner) {}
    void absorb(int from, std::string_view partial) override { inner_.absorb(from, partial); }
    std::string_view partial() override { return "{not json"; }
    std::string_view verdict() override { return inner_.verdict(); }

   private:
    TreeReduction& inner_;
  };
  class GarblesSecondRound final : public Forwarding {
   public:
    using Forwarding::Forwarding;
    std::string tree_round(TreeReduction& reduction) override {
      // Over a tree the check's comparison is the first tree round; over an
      // all-gather alone the timings' round is the first.
      if (++rounds_ != (inner_->has_tree() ? 2 : 1)) return inner_->tree_round(reduction);
      Garbled garbled(reduction);
      return inner_->tree_round(garbled);
    }
  };
  for (auto transport : {InProcessGroup::Transport::tree, InProcessGroup::Transport::gather_only}) {
    TempDir dir;
    Ranks ranks(3, consensus_policy(dir));
    InProcessGroup group(3, "world", std::chrono::seconds(60), transport);
    auto errors = ranks.run([&](Rank& r) {
      std::unique_ptr<Collective> member = group.member(r.rank);
      if (r.rank == 2) member = std::make_unique<GarblesSecondRound>(std::move(member));
      SkewedRunner runner(1);
      call(r, "M=64", runner);
      r.runtime.verify(*member);
    });
    for (int r = 0; r < 3; ++r)
      BOOST_TEST(message_of(errors[r]).starts_with(
                     "consensus check: group rank 2 sent a partial that is not a JSON array of "
                     "batches (partial: not valid JSON at byte"),
                 message_of(errors[r]));
  }
}

BOOST_AUTO_TEST_CASE(inside_a_graph_capture_nothing_is_timed_and_nothing_switches) {
  TempDir dir;
  Ranks ranks(1, consensus_policy(dir));
  Rank& r = ranks[0];
  SoloCollective solo;
  SkewedRunner capturing(2, /*capturing=*/true), eager(2);
  FirstCallOutcome captured = call(r, "M=64", capturing);
  BOOST_TEST(captured.provisional);
  BOOST_TEST(captured.launched == 0u);
  BOOST_TEST(capturing.times == 0);
  BOOST_TEST(!call(r, "M=64", eager).provisional);  // after the capture: timed now
  BOOST_TEST(eager.times == 4);
  r.runtime.verify(solo);
  captured = call(r, "M=64", capturing);  // agreed, but a capture does not switch
  BOOST_TEST(captured.provisional);
  BOOST_TEST(captured.launched == 0u);
  BOOST_TEST(call(r, "M=64", eager).launched == 2u);
}

BOOST_AUTO_TEST_CASE(the_policy_names_the_mode_and_refuses_what_cannot_work) {
  TempDir dir;
  BOOST_TEST(to_string(consensus_policy(dir).effective_mode()) == "consensus");
  BOOST_TEST(consensus_policy(dir).pins());
  BOOST_CHECK_EXCEPTION(policy_from_key_values({{"mode", "consensus"}}, Policy{}).validate(), Error,
                        [](const Error& e) {
                          return std::string(e.what()).find("needs a record path") !=
                                 std::string::npos;
                        });
  Policy chaos = consensus_policy(dir);
  chaos.chaos = true;
  BOOST_CHECK_EXCEPTION(chaos.validate(), Error, [](const Error& e) {
    return std::string(e.what()).find("chaos cannot be combined with mode 'consensus'") !=
           std::string::npos;
  });
}

BOOST_AUTO_TEST_SUITE_END()
