// Consensus mode's payloads as a peer may send them: a malformed batch in a
// child's partial, or a malformed verdict from the root, is an Error on
// every rank naming where it came from and the member that is wrong, never
// a JSON library's exception. Two ranks play Consensus::exchange in one
// process; one of them replaces what it sends.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "forwarding_collective.hpp"
#include "ranks.hpp"
#include "runtime/consensus.hpp"
#include "tunelock/base/error.hpp"

using namespace tunelock;
using tunelock::testing::message_of;

namespace {

enum class Side { partial, verdict };

// The round's reduction, with `text` in place of rank 1's partial or of the
// root's verdict.
class Replaced final : public TreeReduction {
 public:
  Replaced(TreeReduction& inner, Side side, std::string text)
      : inner_(inner), side_(side), text_(std::move(text)) {}
  void absorb(int from, std::string_view partial) override { inner_.absorb(from, partial); }
  std::string_view partial() override { return side_ == Side::partial ? text_ : inner_.partial(); }
  std::string_view verdict() override { return side_ == Side::verdict ? text_ : inner_.verdict(); }

 private:
  TreeReduction& inner_;
  Side side_;
  std::string text_;
};

class Replacing final : public testing::ForwardingCollective {
 public:
  Replacing(std::unique_ptr<Collective> inner, Side side, std::string text)
      : ForwardingCollective(std::move(inner)), side_(side), text_(std::move(text)) {}
  std::string tree_round(TreeReduction& reduction) override {
    Replaced replaced(reduction, side_, text_);
    return inner_->tree_round(replaced);
  }

 private:
  Side side_;
  std::string text_;
};

// Each rank's error from check 1's round, where rank 1 sends `text` as its
// partial or the root sends it as the verdict.
std::vector<std::string> round_errors(Side side, const std::string& text) {
  InProcessGroup group(2, "world", std::chrono::seconds(20));
  std::vector<std::exception_ptr> errors(2);
  auto run = [&](int rank) {
    try {
      std::unique_ptr<Collective> member = group.member(rank);
      if (rank == (side == Side::partial ? 1 : 0))
        member = std::make_unique<Replacing>(std::move(member), side, text);
      detail::Consensus consensus;
      const Config config = make_config({{"BLOCK_M", 64}}, 4, 3);
      consensus.add_timings({"sm90", "pkg.ops.mm", "M=1"}, signature(config), config,
                            {{signature(config), 1.0}});
      detail::ConsensusSender me;
      me.world_rank = rank;
      me.run = "run";
      me.origin = "run.rank" + std::to_string(rank) + ".json";
      (void)consensus.exchange(*member, me, 1);
    } catch (...) {
      errors[rank] = std::current_exception();
    }
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  return {message_of(errors[0]), message_of(errors[1])};
}

// A batch as rank 1 sends it, with `members` in place of its own.
std::string batch(const std::string& members) { return "[{" + members + "}]"; }

const std::string kRecord =
    R"("record": "{\"sm90\": {\"pkg.ops.mm\": {\"M=1\": {\"kwargs\": {\"BLOCK_M\": 64}, )"
    R"(\"num_warps\": 4, \"num_stages\": 3}}}}")";

}  // namespace

BOOST_AUTO_TEST_SUITE(consensus_payloads)

BOOST_AUTO_TEST_CASE(a_malformed_verdict_is_refused_on_every_rank_naming_the_member) {
  const std::string at = "consensus check 1: the root's verdict";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"check": 1, "winners": [)", at + ": not valid JSON at byte"},  // truncated
      {R"([1])", at + ": expected an object, got array"},
      {R"({"check": 1, "winners": )" + std::string(100'000, '[') + std::string(100'000, ']') + "}",
       at + ": winners" /* [0][0]...: nested deeper than 64 levels */},
      {R"({"check": 1})", at + ": winners: missing"},
      {R"({"check": 1, "winners": {}})", at + ": winners: expected an array, got object"},
      {R"({"winners": []})", at + ": check: missing"},
      {R"({"check": "1", "winners": []})", at + ": check: expected an integer, got string"},
      {R"({"check": 1, "winners": [["sm90", "pkg.ops.mm", "M=1"]]})",
       at + ": winners[0]: expected [arch, kernel, key, signature]"},
      {R"({"check": 1, "winners": [["sm90", "pkg.ops.mm", "M=1", 7]]})",
       at + ": winners[0][3]: expected a string, got number"},
      {R"({"check": 1, "error": 5})", at + ": error: expected a string, got number"},
  };
  for (const auto& [text, expected] : cases) {
    const std::vector<std::string> errors = round_errors(Side::verdict, text);
    for (const std::string& error : errors)
      BOOST_TEST(error.starts_with(expected), text.substr(0, 200)
                                                  << " -> " << error.substr(0, 400));
  }
}

BOOST_AUTO_TEST_CASE(a_malformed_batch_is_named_with_its_rank_and_member_on_every_rank) {
  const std::string from = "consensus check: the timings from group rank 1";
  const std::string names = R"("origin": "run.rank1.json", "run": "run", )";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([{"rank": 1, "origin": "run.rank1.json")",
       "consensus check: group rank 1 sent a partial that is not a JSON array of batches "
       "(partial: not valid JSON at byte"},
      {std::string(100'000, '[') + std::string(100'000, ']'),
       "consensus check: group rank 1 sent a partial that is not a JSON array of batches "
       "(partial: [0][0]"},
      {"[7]", from + " are not a consensus batch (rank, origin, run, record, timings)"},
      {batch(names + kRecord + R"(, "timings": "{}")"), from + ": rank: missing"},
      {batch(R"("rank": "1", )" + names + kRecord + R"(, "timings": "{}")"),
       from + ": rank: expected an integer, got string"},
      {batch(R"("rank": -2, )" + names + kRecord + R"(, "timings": "{}")"),
       from + ": rank: -2 is out of range"},
      {batch(R"("rank": 1, )" + names + kRecord), from + ": timings: missing"},
      {batch(R"("rank": 1, "origin": 3, "run": "run", )" + kRecord + R"(, "timings": "{}")"),
       from + ": origin: expected a string, got number"},
      {batch(R"("rank": 1, )" + names + R"("record": "{\"sm90\": {", "timings": "{}")"),
       from + " (run.rank1.json): "},
      {batch(R"("rank": 1, )" + names +
             R"("record": "{\"sm90\": {\"pkg.ops.mm\": {\"M=1\": {\"kwargs\": {}, )"
             R"(\"num_warps\": \"4\", \"num_stages\": 3}}}}", "timings": "{}")"),
       from + " (run.rank1.json): sm90.pkg.ops.mm"},
  };
  for (const auto& [text, expected] : cases) {
    const std::vector<std::string> errors = round_errors(Side::partial, text);
    for (const std::string& error : errors)
      BOOST_TEST(error.starts_with(expected), text.substr(0, 200)
                                                  << " -> " << error.substr(0, 400));
  }
  // The last one names the member too.
  const std::vector<std::string> errors = round_errors(Side::partial, std::get<0>(cases.back()));
  BOOST_TEST(errors[0].find("num_warps") != std::string::npos, errors[0]);
}

BOOST_AUTO_TEST_SUITE_END()
