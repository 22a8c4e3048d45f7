// The driver with fake ports, as XLA's autotuner tests run with fake
// backends: no Runtime, no table file, no process state. Each case checks
// what the driver asks of each port under a plan, and that it launches
// what the ports and the runner say.
#define BOOST_TEST_MODULE first_call_ports
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/base/notices.hpp"
#include "tunelock/decision/policy.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/runtime/first_call.hpp"
#include "tunelock/runtime/first_call_ports.hpp"

using namespace tunelock;

namespace {

Config config_of(int block) {
  Config c;
  c.params.push_back({"BLOCK", block});
  c.num_warps = 4;
  return c;
}

// The table says `choice`; its equivalents are `equivalent`.
struct FakeTables final : TableLookup {
  std::size_t choice = 0;
  std::vector<std::size_t> equivalent;
  int decisions = 0;
  std::vector<std::string> identities;
  Decision pinned_decision(std::string_view, const KernelId&, std::string_view,
                           std::span<const Config>, std::span<const std::string>,
                           std::optional<std::size_t>) override {
    ++decisions;
    Decision d;
    d.choice = Choice{choice, Reason::table};
    d.equivalent = equivalent;
    d.worth_timing = equivalent;
    return d;
  }
  void note_identity(std::string_view, const KernelId&, std::string_view identity) override {
    identities.emplace_back(identity);
  }
};

struct Logged {
  std::string key, config;
  ChoiceOrigin origin;
};

struct FakeOutputs final : CallOutputs {
  std::vector<Logged> logged;
  std::vector<std::vector<CandidateTiming>> records;
  std::vector<std::size_t> audits;  // the launched index of each audit entry
  std::vector<std::optional<bool>> bits_checks;
  std::vector<std::string> switches;
  bool log_choice(std::string_view, const KernelId&, std::string_view key, const Config& chosen,
                  ChoiceOrigin origin) override {
    logged.push_back({std::string(key), signature(chosen), origin});
    return true;
  }
  void record(const std::string&, const std::string&, const std::string&, const Config&,
              std::vector<CandidateTiming> timings) override {
    records.push_back(std::move(timings));
  }
  std::size_t audit_key(std::string_view, const KernelId&, std::string_view,
                        std::span<const Config>, const Decision&, std::size_t launched,
                        std::span<const CandidateTiming>, std::optional<bool>) override {
    audits.push_back(launched);
    return audits.size() - 1;
  }
  void note_bits_check(const KernelId&, std::string_view, const Config&,
                       std::optional<bool> repeated) override {
    bits_checks.push_back(repeated);
  }
  void log_consensus_switch(std::string_view, std::string_view, std::string_view,
                            std::string_view first, std::string_view winner,
                            std::uint64_t) override {
    switches.push_back(std::string(first) + " -> " + std::string(winner));
  }
};

struct FakeConsensus final : ConsensusMemory {
  std::map<RecordKey, AgreedWinner> agreed;
  std::map<RecordKey, std::string> kept;  // key -> the local winner's signature
  std::optional<AgreedWinner> winner(const RecordKey& key) const override {
    const auto at = agreed.find(key);
    return at == agreed.end() ? std::nullopt : std::optional<AgreedWinner>(at->second);
  }
  bool timed(const RecordKey& key) const override { return kept.contains(key); }
  void add_timings(const RecordKey& key, std::string, Config local_winner,
                   std::vector<CandidateTiming>) override {
    kept[key] = signature(local_winner);
  }
};

struct FakeEquivalents final : EquivalentMemory {
  std::optional<std::string> cached;
  std::vector<std::string> remembered;
  std::optional<std::string> cached_equivalent(std::string_view, std::string_view,
                                               std::string_view) override {
    return cached;
  }
  void remember_equivalent(std::string_view, std::string_view, std::string_view,
                           std::string signature) override {
    remembered.push_back(std::move(signature));
  }
};

// Scripted times; `racy` candidates give new bits on every run; `failing` ones throw.
struct FakeRunner final : CallRunner {
  std::vector<double> ms;
  std::vector<bool> racy, failing;
  bool runs = true;
  int timed = 0, bit_runs = 0;
  double time(std::size_t i) override {
    ++timed;
    if (failing[i]) throw std::runtime_error("out of registers");
    return ms[i];
  }
  bool has_outputs() const override { return true; }
  std::string run_outputs(std::size_t i) override {
    ++bit_runs;
    if (failing[i]) throw std::runtime_error("out of registers");
    return racy[i] ? std::to_string(bit_runs) : "same";
  }
  // A second input for the bits check, on until put_back; batch rows when
  // `rows` > 0, each first-rows run noting which input it saw.
  bool has_second_input = false, on_second_input = false;
  std::int64_t rows = 0;
  int row_runs = 0, row_runs_on_second_input = 0;
  bool use_second_input() override {
    on_second_input = has_second_input;
    return has_second_input;
  }
  void put_back() override { on_second_input = false; }
  std::int64_t batch_rows() const override { return rows; }
  FirstRows run_first_rows(std::size_t, std::int64_t) override {
    ++row_runs;
    if (on_second_input) ++row_runs_on_second_input;
    return {"rows", "rows"};
  }
  bool capturing() const override { return false; }
  bool runs_candidates() const override { return runs; }
};

struct Fixture {
  Policy policy;
  Notices notices;
  FakeTables tables;
  FakeOutputs outputs;
  FakeConsensus consensus;
  FakeEquivalents equivalents;
  FakeRunner runner;
  std::vector<Config> candidates{config_of(16), config_of(32), config_of(64)};
  std::vector<Config> one{config_of(16)};
  std::string batch_dim;

  Fixture() {
    runner.ms = {3.0, 1.0, 2.0};
    runner.racy = {false, false, false};
    runner.failing = {false, false, false};
  }
  FirstCallOutcome call(Mode mode, std::span<const Config> configs = {}) {
    policy.mode = mode;
    if (mode == Mode::record || mode == Mode::audit || mode == Mode::consensus)
      policy.record_path = "unused";
    FirstCallRequest request;
    request.arch = "host";
    request.kernel = KernelId{"fake", "mm"};
    request.key = "M=8";
    request.candidates = configs.empty() ? std::span<const Config>(candidates) : configs;
    request.identity = "version:1";
    request.batch_dim = batch_dim;
    const FirstCallPorts ports{policy, notices, tables, outputs, consensus, equivalents};
    return run_first_call(ports, request, runner);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(pinned_asks_the_tables_logs_pinned_and_checks_the_bits_once, Fixture) {
  tables.choice = 2;
  const FirstCallOutcome outcome = call(Mode::pinned);
  BOOST_TEST(outcome.launched == 2u);
  BOOST_TEST(tables.decisions == 1);
  BOOST_TEST(tables.identities == std::vector<std::string>{"version:1"});
  BOOST_REQUIRE(outputs.logged.size() == 1u);
  BOOST_TEST(outputs.logged[0].config == signature(candidates[2]));
  BOOST_TEST((outputs.logged[0].origin == ChoiceOrigin::pinned));
  BOOST_TEST(runner.timed == 0);
  BOOST_TEST(runner.bit_runs == 2);
  BOOST_REQUIRE(outputs.bits_checks.size() == 1u);
  BOOST_TEST(*outputs.bits_checks[0] == true);
  BOOST_TEST(outputs.records.empty());
}

BOOST_FIXTURE_TEST_CASE(a_racy_pinned_config_is_reported_and_still_launched, Fixture) {
  tables.choice = 1;
  runner.racy[1] = true;
  BOOST_TEST(call(Mode::pinned).launched == 1u);
  BOOST_REQUIRE(outputs.bits_checks.size() == 1u);
  BOOST_TEST(*outputs.bits_checks[0] == false);
}

BOOST_FIXTURE_TEST_CASE(record_times_every_candidate_and_records_the_fastest, Fixture) {
  const FirstCallOutcome outcome = call(Mode::record);
  BOOST_TEST(outcome.launched == 1u);
  BOOST_TEST(outcome.timed);
  BOOST_TEST(tables.decisions == 0);
  BOOST_REQUIRE(outputs.records.size() == 1u);
  BOOST_TEST(outputs.records[0].size() == 3u);
  BOOST_REQUIRE(outputs.logged.size() == 1u);
  BOOST_TEST((outputs.logged[0].origin == ChoiceOrigin::timed));
}

BOOST_FIXTURE_TEST_CASE(a_candidate_that_throws_is_timed_as_infinite, Fixture) {
  runner.failing[1] = true;
  const FirstCallOutcome outcome = call(Mode::record);
  BOOST_TEST(outcome.launched == 2u);
  BOOST_REQUIRE(outputs.records.size() == 1u);
  BOOST_TEST(!outputs.records[0][1].median_ms.has_value());
}

BOOST_FIXTURE_TEST_CASE(audit_files_an_entry_for_what_pinned_launches, Fixture) {
  tables.choice = 0;
  const FirstCallOutcome outcome = call(Mode::audit);
  BOOST_TEST(outcome.launched == 0u);
  BOOST_TEST(outputs.audits == std::vector<std::size_t>{0});
  BOOST_TEST(outcome.audit_id.value() == 0u);
  BOOST_TEST(runner.timed >= 3);
}

BOOST_FIXTURE_TEST_CASE(consensus_keeps_the_timings_then_launches_the_agreed_winner, Fixture) {
  tables.choice = 0;
  BOOST_TEST(call(Mode::consensus).launched == 0u);
  const RecordKey key{"host", "fake.mm", "M=8"};
  BOOST_TEST(consensus.kept.at(key) == signature(candidates[1]));
  BOOST_TEST(outputs.records.size() == 1u);
  consensus.agreed[key] = AgreedWinner{signature(candidates[1]), 3};
  BOOST_TEST(call(Mode::consensus).launched == 1u);
  BOOST_TEST(outputs.switches == std::vector<std::string>{signature(candidates[0]) + " -> " +
                                                          signature(candidates[1])});
}

BOOST_FIXTURE_TEST_CASE(timed_equivalents_are_remembered_and_the_memory_answers_next_time,
                        Fixture) {
  tables.choice = 2;
  tables.equivalent = {1, 0};
  policy.equivalent = Equivalent::timed;
  BOOST_TEST(call(Mode::pinned).launched == 1u);  // the fastest of the entry and its equivalents
  BOOST_TEST(equivalents.remembered == std::vector<std::string>{signature(candidates[1])});
  BOOST_TEST(outputs.logged.at(0).config == signature(candidates[2]));  // the log names the entry
  equivalents.cached = signature(candidates[0]);
  runner.timed = 0;
  BOOST_TEST(call(Mode::pinned).launched == 0u);
  BOOST_TEST(runner.timed == 0);
}

BOOST_FIXTURE_TEST_CASE(chaos_at_compile_time_keeps_the_kernels_own_default, Fixture) {
  policy.chaos = true;
  runner.runs = false;
  policy.mode = Mode::pinned;
  FirstCallRequest request;
  request.arch = "host";
  request.kernel = KernelId{"fake", "mm"};
  request.key = "M=8";
  request.candidates = candidates;
  request.own_default = 2;
  const FirstCallPorts ports{policy, notices, tables, outputs, consensus, equivalents};
  BOOST_TEST(run_first_call(ports, request, runner).launched == 2u);
  BOOST_TEST(tables.decisions == 0);
  BOOST_REQUIRE(outputs.logged.size() == 1u);
  BOOST_TEST((outputs.logged[0].origin == ChoiceOrigin::pinned));
}

BOOST_FIXTURE_TEST_CASE(one_config_is_logged_under_the_wildcard_and_nothing_runs, Fixture) {
  const FirstCallOutcome outcome = call(Mode::pinned, one);
  BOOST_TEST((outcome.plan == FirstCall::single_logged));
  BOOST_REQUIRE(outputs.logged.size() == 1u);
  BOOST_TEST(outputs.logged[0].key == "*");
  BOOST_TEST(runner.timed + runner.bit_runs == 0);
}

BOOST_FIXTURE_TEST_CASE(no_candidates_is_refused_by_name, Fixture) {
  policy.mode = Mode::pinned;
  FirstCallRequest request;
  request.kernel = KernelId{"fake", "mm"};
  request.key = "M=8";
  const FirstCallPorts ports{policy, notices, tables, outputs, consensus, equivalents};
  BOOST_CHECK_EXCEPTION(run_first_call(ports, request, runner), Error, [](const Error& e) {
    return std::string(e.what()).find("'fake.mm' [M=8] has no candidates") != std::string::npos;
  });
}

// The invariance audit compares the rows the call's own inputs give, as a
// pinned run will see them: the trials put the bits check's second input
// back before it runs (its wide exponents make a log-softmax's configs
// round alike).
BOOST_FIXTURE_TEST_CASE(the_rows_audit_runs_on_the_calls_own_inputs, Fixture) {
  policy.batch_invariant = true;
  batch_dim = "M";
  runner.rows = 8;
  runner.has_second_input = true;
  call(Mode::record);
  BOOST_TEST(runner.row_runs == 3 * 4);  // 3 candidates at M = 1, 2, 4, 8
  BOOST_TEST(runner.row_runs_on_second_input == 0);
}
