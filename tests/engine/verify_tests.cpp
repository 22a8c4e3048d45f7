// Cross-rank verification over the in-process collective: every rank plays
// in its own thread with its own runtime, exactly as processes would.
#include <boost/test/unit_test.hpp>

#include "captured_log.hpp"
#include "logs/watch_link.hpp"
#include "ranks.hpp"
#include "tunelock/base/error.hpp"

using namespace tunelock;
using tunelock::testing::message_of;
using tunelock::testing::Rank;
using tunelock::testing::Ranks;

namespace {

const KernelId kMatmul{"pkg.ops", "matmul"};
const Config kBig = make_config({{"BLOCK_M", 128}}, 8, 3);
const Config kSmall = make_config({{"BLOCK_M", 32}}, 4, 2);

// Remembers every payload it sent, to check what a round moved.
class Spy final : public Collective {
 public:
  explicit Spy(std::unique_ptr<Collective> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string group_id() const override { return inner_->group_id(); }
  std::vector<std::string> all_gather(std::string_view payload) override {
    sent.emplace_back(payload);
    return inner_->all_gather(payload);
  }
  std::vector<std::string> sent;

 private:
  std::unique_ptr<Collective> inner_;
};

void log(Rank& r, const std::string& key, const Config& config) {
  r.runtime.log_choice("sm90", kMatmul, key, config, ChoiceOrigin::pinned);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify)

BOOST_AUTO_TEST_CASE(ranks_with_equal_choices_agree) {
  Ranks ranks(4);
  InProcessGroup group(4);
  std::vector<VerifyResult> results(4);
  auto errors = ranks.run([&](Rank& r) {
    log(r, "M=1", kBig);
    log(r, "M=2", kSmall);
    auto member = group.member(r.rank);
    results[r.rank] = r.runtime.verify(*member);
  });
  for (int r = 0; r < 4; ++r) {
    BOOST_TEST(!errors[r]);
    BOOST_TEST(results[r].agreed);
    BOOST_TEST(results[r].conflicts.empty());
    BOOST_TEST(results[r].compared == 8u);
  }
}

BOOST_AUTO_TEST_CASE(one_conflicting_rank_fails_on_every_rank_naming_key_and_ranks) {
  Ranks ranks(4);
  InProcessGroup group(4);
  tunelock::testing::CapturedLog captured;
  std::vector<VerifyResult> results(4);
  ranks.run([&](Rank& r) {
    log(r, "M=1", r.rank == 2 ? kSmall : kBig);
    log(r, "M=2", kSmall);
    auto member = group.member(r.rank);
    results[r.rank] = r.runtime.verify(*member);
  });
  for (int r = 0; r < 4; ++r) {
    BOOST_TEST(!results[r].agreed);
    BOOST_TEST_REQUIRE(results[r].conflicts.size() == 1u);
    const Conflict& c = results[r].conflicts[0];
    BOOST_TEST(c.key == "sm90|pkg.ops.matmul|M=1");
    BOOST_TEST(
        (c.ranks_by_value.at("BLOCK_M=128;warps=8;stages=3;pinned") == std::set<int>{0, 1, 3}));
    BOOST_TEST((c.ranks_by_value.at("BLOCK_M=32;warps=4;stages=2;pinned") == std::set<int>{2}));
  }
  // All four ranks share this process's logger: the lowest rank logs the
  // full report, the three others one line each pointing to it.
  BOOST_TEST(captured.count("differ across ranks for 1 kernel/shape key(s)") == 1u);
  BOOST_TEST(captured.count(
                 "sm90|pkg.ops.matmul|M=1: 'BLOCK_M=128;warps=8;stages=3;pinned' on ranks 0,1,3; "
                 "'BLOCK_M=32;warps=4;stages=2;pinned' on rank 2") == 1u);
  BOOST_TEST(captured.count("differ across ranks for 1 new kernel/shape key(s); rank 0 logs the "
                            "full report") == 3u);
}

BOOST_AUTO_TEST_CASE(each_round_with_new_conflicts_is_reported_once_and_quiet_rounds_log_nothing) {
  Ranks ranks(3);
  InProcessGroup group(3);
  tunelock::testing::CapturedLog captured;
  ranks.run([&](Rank& r) {
    auto member = group.member(r.rank);
    log(r, "M=1", r.rank == 1 ? kSmall : kBig);  // round 1: a conflict on M=1
    r.runtime.verify(*member);
    r.runtime.verify(*member);                   // round 2: nothing new
    log(r, "M=2", r.rank == 2 ? kSmall : kBig);  // round 3: a new conflict on M=2
    r.runtime.verify(*member);
  });
  const std::string text = captured.text();
  BOOST_TEST(captured.count("differ across ranks for 1 kernel/shape key(s)") == 2u);
  BOOST_TEST(captured.count("1 new kernel/shape key(s); rank 0 logs the full report") == 4u);
  const auto first = text.find("sm90|pkg.ops.matmul|M=1:");
  const auto second = text.find("sm90|pkg.ops.matmul|M=2:");
  BOOST_TEST_REQUIRE(first != std::string::npos);
  BOOST_TEST_REQUIRE(second != std::string::npos);  // a later round's new key is reported
  BOOST_TEST(text.find("sm90|pkg.ops.matmul|M=1:", first + 1) == std::string::npos);  // once
  BOOST_TEST(second > first);
}

// TUNELOCK_WATCH_VERIFY: each check carries the launches since the last one,
// so a rank that launched differently is named at the check after it did.
BOOST_AUTO_TEST_CASE(launch_digests_join_each_check_and_a_divergent_rank_is_named) {
  Ranks ranks(3);
  InProcessGroup group(3);
  tunelock::testing::CapturedLog captured;
  std::vector<VerifyResult> first(3), second(3);
  ranks.run([&](Rank& r) {
    int check = 0;
    r.runtime.set_launch_digest_source([&r, &check] {
      // Rank 1 launched other kernels between the first and second check.
      return ++check == 2 && r.rank == 1 ? std::string("bbbb") : std::string("aaaa");
    });
    log(r, "M=1", kBig);
    auto member = group.member(r.rank);
    first[r.rank] = r.runtime.verify(*member);
    second[r.rank] = r.runtime.verify(*member);
  });
  for (int r = 0; r < 3; ++r) {
    BOOST_TEST(first[r].agreed);
    BOOST_TEST(!second[r].agreed);
    BOOST_TEST_REQUIRE(second[r].conflicts.size() == 1u);
    BOOST_TEST(second[r].conflicts[0].key == "watch|tunelock.watch.launches|check=1");
    BOOST_TEST(
        (second[r].conflicts[0].ranks_by_value.at("launches=bbbb;pinned") == std::set<int>{1}));
  }
  // Without the variable there is no source: checks carry no launches.
  BOOST_TEST(!watch_digest_source({}));
  BOOST_TEST(!watch_digest_source({{"TUNELOCK_WATCH_VERIFY", "0"}}));
  const auto unwatched = watch_digest_source({{"TUNELOCK_WATCH_VERIFY", "1"}});
  BOOST_REQUIRE(unwatched);
  BOOST_TEST(unwatched() == "unwatched");  // no watch library in this process
  BOOST_TEST(captured.count("but no launch watch runs in this process") == 1u);
  BOOST_TEST(unwatched() == "unwatched");
  BOOST_TEST(captured.count("but no launch watch runs in this process") == 1u);  // said once
}

BOOST_AUTO_TEST_CASE(disjoint_keys_of_pipeline_stages_agree) {
  Ranks ranks(4);
  InProcessGroup group(4);
  std::vector<VerifyResult> results(4);
  ranks.run([&](Rank& r) {
    log(r, "stage=" + std::to_string(r.rank / 2), r.rank < 2 ? kBig : kSmall);
    auto member = group.member(r.rank);
    results[r.rank] = r.runtime.verify(*member);
  });
  for (const auto& result : results) BOOST_TEST(result.agreed);
}

BOOST_AUTO_TEST_CASE(steady_state_sends_empty_batches) {
  Ranks ranks(3);
  InProcessGroup group(3);
  std::vector<std::unique_ptr<Spy>> spies;
  for (int r = 0; r < 3; ++r) spies.push_back(std::make_unique<Spy>(group.member(r)));
  ranks.run([&](Rank& r) {
    log(r, "M=1", kBig);
    r.runtime.verify(*spies[r.rank]);
    r.runtime.verify(*spies[r.rank]);  // nothing new since
    log(r, "M=2", kSmall);
    r.runtime.verify(*spies[r.rank]);
    r.runtime.verify(*spies[r.rank]);
  });
  for (int r = 0; r < 3; ++r) {
    const auto& sent = spies[r]->sent;
    BOOST_TEST_REQUIRE(sent.size() == 4u);
    const std::string empty = encode_batch(r, {});
    BOOST_TEST(decode_batch(sent[0], "t").entries.size() == 1u);
    BOOST_TEST(sent[1] == empty);  // byte for byte: no entries
    BOOST_TEST(decode_batch(sent[2], "t").entries.size() == 1u);
    BOOST_TEST(decode_batch(sent[2], "t").entries[0].key == "sm90|pkg.ops.matmul|M=2");
    BOOST_TEST(sent[3] == empty);
    BOOST_TEST(empty.size() < 64u);
  }
}

BOOST_AUTO_TEST_CASE(groups_keep_separate_cursors) {
  Ranks ranks(2);
  InProcessGroup data_parallel(2, "dp"), pipeline(2, "pp");
  std::vector<std::size_t> dp_counts(2), pp_counts(2);
  ranks.run([&](Rank& r) {
    auto dp = data_parallel.member(r.rank);
    auto pp = pipeline.member(r.rank);
    log(r, "M=1", kBig);
    dp_counts[r.rank] += r.runtime.verify(*dp).compared;
    log(r, "M=2", kBig);
    dp_counts[r.rank] += r.runtime.verify(*dp).compared;
    // The pipeline group has not checked yet: it still gets both entries.
    pp_counts[r.rank] += r.runtime.verify(*pp).compared;
  });
  for (int r = 0; r < 2; ++r) {
    BOOST_TEST(dp_counts[r] == 4u);  // 1 + 1 per rank, 2 ranks
    BOOST_TEST(pp_counts[r] == 4u);  // 2 per rank at once
  }
}

BOOST_AUTO_TEST_CASE(a_conflict_with_an_earlier_agreed_entry_is_caught_and_the_verdict_sticks) {
  Ranks ranks(2);
  InProcessGroup group(2);
  std::vector<std::vector<bool>> verdicts(2);
  std::vector<std::vector<VerifyResult>> results(2);
  ranks.run([&](Rank& r) {
    auto member = group.member(r.rank);
    if (r.rank == 0) log(r, "M=1", kBig);  // rank 1 has not reached this kernel yet
    results[r.rank].push_back(r.runtime.verify(*member));
    if (r.rank == 1) log(r, "M=1", kSmall);  // ...and later chooses differently
    results[r.rank].push_back(r.runtime.verify(*member));
    log(r, "M=2", kBig);  // agreed, but the group already failed
    results[r.rank].push_back(r.runtime.verify(*member));
  });
  for (int r = 0; r < 2; ++r) {
    BOOST_TEST(results[r][0].agreed);
    BOOST_TEST(!results[r][1].agreed);
    BOOST_TEST_REQUIRE(results[r][1].conflicts.size() == 1u);
    BOOST_TEST((results[r][1].conflicts[0].ranks_by_value.at(
                    "BLOCK_M=128;warps=8;stages=3;pinned") == std::set<int>{0}));
    BOOST_TEST(!results[r][2].agreed);  // sticky
    BOOST_TEST(results[r][2].conflicts.empty());
  }
}

BOOST_AUTO_TEST_CASE(strict_mode_raises_on_every_rank_and_prints_the_report_once) {
  Policy strict;
  strict.verify_strict = true;
  Ranks ranks(3, strict);
  InProcessGroup group(3);
  tunelock::testing::CapturedLog captured;
  auto errors = ranks.run([&](Rank& r) {
    log(r, "M=1", r.rank == 0 ? kSmall : kBig);
    auto member = group.member(r.rank);
    r.runtime.verify(*member);
  });
  for (int r = 0; r < 3; ++r) {
    BOOST_TEST_REQUIRE(static_cast<bool>(errors[r]));
    // Each rank's exception points to the one report instead of repeating it.
    BOOST_TEST(message_of(errors[r]) ==
               "verify_strict: autotune choices differ across ranks for 1 new kernel/shape "
               "key(s); rank 0 logs the full report");
  }
  BOOST_TEST(captured.count("sm90|pkg.ops.matmul|M=1") == 1u);
}

BOOST_AUTO_TEST_CASE(maybe_verify_follows_the_cadence_and_says_not_checked) {
  Policy every3;
  every3.verify_every = 3;
  Ranks ranks(2, every3);
  InProcessGroup group(2);
  std::vector<std::vector<std::optional<bool>>> outcomes(2);
  ranks.run([&](Rank& r) {
    auto member = group.member(r.rank);
    log(r, "M=1", kBig);
    for (int it = 1; it <= 6; ++it) outcomes[r.rank].push_back(r.runtime.maybe_verify(it, *member));
  });
  for (int r = 0; r < 2; ++r) {
    const std::vector<std::optional<bool>> expected{std::nullopt, std::nullopt, true,
                                                    std::nullopt, std::nullopt, true};
    BOOST_TEST((outcomes[r] == expected));
  }
  // Verification off: never checked, and no collective call happens (a
  // single endpoint of a 2-rank group would otherwise time out).
  Notices notices;
  Runtime off(0, notices);
  InProcessGroup lonely(2, "lonely", std::chrono::milliseconds(50));
  auto member = lonely.member(0);
  BOOST_TEST(!off.maybe_verify(0, *member).has_value());
}

BOOST_AUTO_TEST_CASE(a_missing_rank_gives_a_clear_error_not_a_hang) {
  Notices notices;
  Runtime runtime(0, notices);
  InProcessGroup group(3, "g", std::chrono::milliseconds(100));
  auto member = group.member(0);
  try {
    runtime.verify(*member);
    BOOST_FAIL("expected a timeout");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("waiting for rank(s) 1,2") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(malformed_batches_are_rejected_with_the_rank_named) {
  BOOST_CHECK_EXCEPTION(decode_batch("garbage", "verify: rank 3"), Error, [](const Error& e) {
    return std::string(e.what()).starts_with("verify: rank 3: not a valid verify batch");
  });
  std::string batch = encode_batch(1, std::vector<ChoiceEntry>{{"k", "v"}});
  BOOST_CHECK_THROW(decode_batch(batch.substr(0, batch.size() / 2), "r"), Error);
  BOOST_TEST(decode_batch(batch, "r").rank == 1);
}

BOOST_AUTO_TEST_SUITE_END()
