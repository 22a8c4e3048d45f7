// The process runtime: install semantics, the choice log, digests, records,
// dumps, rank variables, and choosing from many threads at once.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <set>
#include <thread>

#include "captured_log.hpp"
#include "error_of.hpp"
#include "ranks.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/rank_environment.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/tables/table_files.hpp"

using namespace tunelock;
using tunelock::testing::CapturedLog;
using tunelock::testing::contains;
using tunelock::testing::TempDir;

namespace {

const KernelId kMatmul{"pkg.ops", "matmul"};

std::vector<Config> candidates() {
  return {make_config({{"BLOCK_M", 128}}, 8, 3), make_config({{"BLOCK_M", 32}}, 4, 2)};
}

Policy pinned() {
  Policy p;
  p.mode = Mode::pinned;
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(install_semantics)

BOOST_AUTO_TEST_CASE(runtime_starts_with_a_default_policy_that_intercepts_nothing) {
  Notices notices;
  Runtime runtime(0, notices);
  BOOST_TEST((*runtime.policy() == Policy{}));
  BOOST_TEST(!runtime.policy()->intercepts());
}

BOOST_AUTO_TEST_CASE(unwritable_record_path_fails_and_keeps_the_previous_policy) {
  TempDir dir;
  const auto blocker = dir.write("file", "not a folder");
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(pinned());
  const auto generation = runtime.generation();
  Policy record;
  record.record_path = (blocker / "sub" / "rec").string();  // parent is a file
  BOOST_CHECK_THROW(runtime.install(record), Error);
  BOOST_TEST((runtime.policy()->effective_mode() == Mode::pinned));
  BOOST_TEST(runtime.generation() == generation);
}

BOOST_AUTO_TEST_CASE(invalid_policy_fails_and_keeps_the_previous_policy) {
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(pinned());
  Policy invalid;
  invalid.mode = Mode::record;  // no record path
  BOOST_CHECK_THROW(runtime.install(invalid), Error);
  BOOST_TEST((*runtime.policy() == pinned()));
}

BOOST_AUTO_TEST_CASE(record_install_creates_the_parent_folders) {
  TempDir dir;
  Notices notices;
  Runtime runtime(0, notices);
  Policy record;
  record.record_path = (dir.path() / "a" / "b" / "rec").string();
  runtime.install(record);
  BOOST_TEST(std::filesystem::is_directory(dir.path() / "a" / "b"));
  BOOST_TEST(std::filesystem::is_empty(dir.path() / "a" / "b"));  // the probe is gone
}

BOOST_AUTO_TEST_CASE(changed_policy_resets_log_notices_and_generation) {
  Notices notices;
  CapturedLog log;
  Runtime runtime(0, notices);
  runtime.install(pinned());
  runtime.pinned_choice("sm90", kMatmul, "M=1", candidates());
  BOOST_TEST(runtime.choice_log().size() == 1u);
  BOOST_TEST(log.count("no tuned config for kernel 'pkg.ops.matmul'") == 1u);
  const auto generation = runtime.generation();

  Policy other = pinned();
  other.verify_every = 10;
  runtime.install(other);
  BOOST_TEST(runtime.generation() > generation);
  BOOST_TEST(runtime.choice_log().size() == 0u);
  runtime.pinned_choice("sm90", kMatmul, "M=1", candidates());
  BOOST_TEST(log.count("no tuned config for kernel 'pkg.ops.matmul'") == 2u);  // warned again
}

BOOST_AUTO_TEST_CASE(a_table_path_that_does_not_exist_is_named_at_install_and_at_the_fallback) {
  TempDir dir;
  const std::string missing = (dir.path() / "no-such-dir").string();
  Notices notices;
  CapturedLog log;
  Runtime runtime(0, notices);
  Policy p = pinned();
  p.table_path = {missing, dir.path().string()};
  runtime.install(p);
  BOOST_TEST(log.count("table path entry " + missing + " does not exist: no table is read") == 1u);
  runtime.install(p);  // the same policy again: nothing new to say
  BOOST_TEST(log.count("table path entry " + missing) == 1u);
  // The fallback's warning says where the table was looked for.
  runtime.pinned_choice("sm90", kMatmul, "M=1", candidates());
  BOOST_TEST(
      log.count("no sm90 table in " + missing + " (does not exist), " + dir.path().string()) == 1u);
  // Under on_miss=error or strict provenance the run is refused, keeping the policy.
  for (bool strict : {false, true}) {
    Policy refusing = p;
    refusing.verify_every = strict ? 3 : 2;  // a changed policy
    if (strict)
      refusing.provenance = ProvenanceCheck::strict;
    else
      refusing.on_miss = OnMiss::error;
    try {
      runtime.install(refusing);
      BOOST_FAIL("an unreadable table path was accepted");
    } catch (const Error& e) {
      BOOST_TEST(contains(e.what(), missing + " does not exist"));
      BOOST_TEST(
          contains(e.what(), strict ? "TUNELOCK_PROVENANCE=strict" : "TUNELOCK_ON_MISS=error"));
    }
    BOOST_TEST((*runtime.policy() == p));
  }
  // Modes that read no table say nothing of it.
  CapturedLog quiet;
  Policy automatic;
  automatic.table_path = {missing};
  runtime.install(automatic);
  BOOST_TEST(quiet.count("table path entry") == 0u);
}

BOOST_AUTO_TEST_CASE(without_a_table_path_the_fallback_says_none_is_set) {
  Notices notices;
  CapturedLog log;
  Runtime runtime(0, notices);
  runtime.install(pinned());
  runtime.pinned_choice("sm90", kMatmul, "M=1", candidates());
  const bool installed_dir = !installed_tables_dir().empty();
  BOOST_TEST(log.count(installed_dir
                           ? "no sm90 table in " + installed_tables_dir().string()
                           : std::string("no table path is set (TUNELOCK_TABLE_PATH)")) == 1u);
}

BOOST_AUTO_TEST_CASE(installing_the_same_policy_twice_changes_nothing) {
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(pinned());
  runtime.pinned_choice("sm90", kMatmul, "M=1", candidates());
  const auto generation = runtime.generation();
  runtime.install(pinned());
  BOOST_TEST(runtime.generation() == generation);
  BOOST_TEST(runtime.choice_log().size() == 1u);
}

BOOST_AUTO_TEST_CASE(changing_away_from_record_writes_pending_records_first) {
  TempDir dir;
  Notices notices;
  Runtime runtime(3, notices);
  Policy record;
  record.record_path = (dir.path() / "rec").string();
  runtime.install(record);
  runtime.record("sm90", "pkg.ops.matmul", "M=1", candidates()[0],
                 {{signature(candidates()[0]), 1.5}, {signature(candidates()[1]), std::nullopt}});
  runtime.install(pinned());
  const auto written = nlohmann::json::parse(read_file(dir.path() / "rec.rank3.json"));
  BOOST_TEST(
      written ==
      nlohmann::json::parse(
          R"({"sm90": {"pkg.ops.matmul": {"M=1": {"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 3,
                                                  "num_ctas": 1, "maxnreg": null, "ir_override": null}}}})"));
  const auto timings = nlohmann::json::parse(read_file(dir.path() / "rec.rank3.timings.json"));
  BOOST_TEST(timings["rank"] == 3);
  const auto& list = timings["timings"]["sm90"]["pkg.ops.matmul"]["M=1"];
  BOOST_TEST_REQUIRE(list.size() == 2u);
  BOOST_TEST(list[0]["median_ms"] == 1.5);
  BOOST_TEST(list[1]["median_ms"].is_null());  // failed candidate
  BOOST_TEST(list[1]["signature"] == "BLOCK_M=32;warps=4;stages=2");
}

BOOST_AUTO_TEST_CASE(tables_load_from_the_policy_table_path_once_per_policy) {
  TempDir dir;
  dir.write(
      "sm90.json",
      R"({"arch": "sm90", "kernels": {"matmul": {"M=1": {"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 3}}}})");
  Notices notices;
  Runtime runtime(0, notices);
  Policy p = pinned();
  p.table_path = {dir.path().string()};
  runtime.install(p);
  const Choice choice = runtime.pinned_choice("sm90", kMatmul, "M=1", candidates());
  BOOST_TEST(choice.index == 0u);
  BOOST_TEST((choice.reason == Reason::table));
  BOOST_TEST(runtime.table_for("sm90") == runtime.table_for("sm90"));  // cached, same object
  BOOST_TEST(runtime.table_for("sm80") == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(choice_log)

BOOST_AUTO_TEST_CASE(each_key_is_logged_once_with_the_first_choice) {
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(pinned());
  BOOST_TEST(runtime.log_choice("sm90", kMatmul, "M=1", candidates()[0], ChoiceOrigin::pinned));
  BOOST_TEST(!runtime.log_choice("sm90", kMatmul, "M=1", candidates()[1], ChoiceOrigin::timed));
  BOOST_TEST(runtime.log_choice("sm90", kMatmul, "M=2", candidates()[1], ChoiceOrigin::timed));
  const auto entries = runtime.choice_log().snapshot();
  BOOST_TEST(entries.size() == 2u);
  BOOST_TEST(entries.at("sm90|pkg.ops.matmul|M=1") == "BLOCK_M=128;warps=8;stages=3;pinned");
  BOOST_TEST(entries.at("sm90|pkg.ops.matmul|M=2") == "BLOCK_M=32;warps=4;stages=2;timed");
}

BOOST_AUTO_TEST_CASE(single_variant_families_log_the_wildcard_key_once) {
  Notices notices;
  Runtime runtime(0, notices);
  const Config only = make_config({{"BLOCK", 64}}, 4, 2);
  BOOST_TEST(runtime.log_choice("host", KernelId{"demo", "norm"}, "*", only, ChoiceOrigin::pinned));
  BOOST_TEST(
      !runtime.log_choice("host", KernelId{"demo", "norm"}, "*", only, ChoiceOrigin::pinned));
  BOOST_TEST(runtime.choice_log().snapshot().count("host|demo.norm|*") == 1u);
}

BOOST_AUTO_TEST_CASE(out_of_scope_and_config_invariant_kernels_are_not_logged) {
  Notices notices;
  Runtime runtime(0, notices);
  Policy p = pinned();
  p.modules = {"pkg"};
  p.config_invariant = {"layernorm"};
  runtime.install(p);
  BOOST_TEST(!runtime.log_choice("sm90", KernelId{"other", "matmul"}, "M=1", candidates()[0],
                                 ChoiceOrigin::timed));
  BOOST_TEST(!runtime.log_choice("sm90", KernelId{"pkg.ops", "layernorm"}, "M=1", candidates()[0],
                                 ChoiceOrigin::timed));
  BOOST_TEST(runtime.log_choice("sm90", kMatmul, "M=1", candidates()[0], ChoiceOrigin::pinned));
  BOOST_TEST(runtime.choice_log().size() == 1u);
}

BOOST_AUTO_TEST_CASE(dump_writes_rank_entries_and_digest_atomically) {
  TempDir dir;
  Notices notices;
  Runtime runtime(2, notices);
  runtime.log_choice("sm90", kMatmul, "M=1", candidates()[0], ChoiceOrigin::pinned);
  runtime.flush(dir.path() / "choices");
  const auto dumped = nlohmann::json::parse(read_file(dir.path() / "choices.rank2.json"));
  BOOST_TEST(dumped["rank"] == 2);
  BOOST_TEST(dumped["entries"]["sm90|pkg.ops.matmul|M=1"] == "BLOCK_M=128;warps=8;stages=3;pinned");
  BOOST_TEST(dumped["digest"] == runtime.choice_digest());
  // No temp file is left beside it.
  BOOST_TEST(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(digest)

// Fixed values, not the hash recomputed the way the code computes it: the
// digest is compared across ranks, runs and platforms. The first is
// XXH3-128 of "a|k|1=x;pinned\nb|k|2=y;timed", the second of "".
BOOST_AUTO_TEST_CASE(digest_is_xxh3_128_of_sorted_lines_in_canonical_hex) {
  const std::map<std::string, std::string> entries{{"b|k|2", "y;timed"}, {"a|k|1", "x;pinned"}};
  BOOST_TEST(choice_digest(entries) == "cd0cd83f0b70587580144680727c6264");
  BOOST_TEST(choice_digest({}) == "99aa06d3014798d86001c324468d497f");
}

BOOST_AUTO_TEST_CASE(digest_ignores_insertion_order_and_sees_every_value) {
  ChoiceLog forward, backward;
  for (int i = 0; i < 100; ++i) forward.add("k" + std::to_string(i), "v" + std::to_string(i));
  for (int i = 99; i >= 0; --i) backward.add("k" + std::to_string(i), "v" + std::to_string(i));
  BOOST_TEST(choice_digest(forward.snapshot()) == choice_digest(backward.snapshot()));
  auto changed = forward.snapshot();
  changed["k50"] = "v51";
  BOOST_TEST(choice_digest(changed) != choice_digest(forward.snapshot()));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rank_environment)

BOOST_AUTO_TEST_CASE(launcher_variables_are_read_in_documented_order) {
  BOOST_TEST((rank_from_environment({}) == RankInfo{0, 1, ""}));
  BOOST_TEST((rank_from_environment({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "8"}}) ==
              RankInfo{3, 8, "SLURM_PROCID"}));
  BOOST_TEST(
      (rank_from_environment(
           {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "8"}}) ==
       RankInfo{1, 2, "PMI_RANK"}));
  BOOST_TEST(
      (rank_from_environment({{"OMPI_COMM_WORLD_RANK", "2"},
                              {"OMPI_COMM_WORLD_SIZE", "4"},
                              {"PMI_RANK", "1"},
                              {"PMI_SIZE", "2"}}) == RankInfo{2, 4, "OMPI_COMM_WORLD_RANK"}));
  BOOST_TEST((rank_from_environment({{"RANK", "5"},
                                     {"WORLD_SIZE", "6"},
                                     {"OMPI_COMM_WORLD_RANK", "2"},
                                     {"OMPI_COMM_WORLD_SIZE", "4"}}) == RankInfo{5, 6, "RANK"}));
}

BOOST_AUTO_TEST_CASE(bad_rank_variables_are_errors_naming_them) {
  auto message = [](const Environment& env) {
    try {
      rank_from_environment(env);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  BOOST_TEST(message({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).starts_with("RANK: invalid value 'x'"));
  BOOST_TEST(message({{"RANK", "1"}}).starts_with("RANK is set but WORLD_SIZE is not"));
  BOOST_TEST(message({{"RANK", "2"}, {"WORLD_SIZE", "2"}})
                 .starts_with("RANK=2 is not below WORLD_SIZE=2"));
  BOOST_TEST(
      message({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).starts_with("WORLD_SIZE: invalid value '0'"));
  // A world of several without a rank would run every process as rank 0.
  BOOST_TEST(message({{"WORLD_SIZE", "4"}}).starts_with("WORLD_SIZE=4 is set but RANK is not"));
  BOOST_TEST(
      message({{"SLURM_NTASKS", "8"}}).starts_with("SLURM_NTASKS=8 is set but SLURM_PROCID"));
  BOOST_TEST(message({{"WORLD_SIZE", "1"}}).empty());  // a world of one needs no rank
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(concurrency)

// Under the chaos control each key picks a different candidate, so a
// thread that got another key's answer (or a torn cache entry) shows.
BOOST_AUTO_TEST_CASE(eight_threads_choosing_at_once_agree_and_log_each_key_once) {
  Notices notices;
  Runtime runtime(0, notices);
  Policy policy = pinned();
  policy.chaos = true;
  runtime.install(policy);
  const auto list = candidates();
  constexpr int kThreads = 8, kKeys = 200;
  std::vector<std::vector<std::size_t>> seen(kThreads, std::vector<std::size_t>(kKeys));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kKeys; ++k) {
        const int key = (k * 7 + t * 13) % kKeys;  // each thread in its own order
        seen[t][key] =
            runtime.pinned_choice("sm90", kMatmul, "M=" + std::to_string(key), list).index;
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::size_t> expected(kKeys);
  for (int k = 0; k < kKeys; ++k)
    expected[k] = chaos_choice(kMatmul, "M=" + std::to_string(k), list, 0).index;
  BOOST_TEST_REQUIRE(std::set<std::size_t>(expected.begin(), expected.end()).size() > 1u);
  for (int t = 0; t < kThreads; ++t) BOOST_TEST((seen[t] == expected));
  BOOST_TEST(runtime.choice_log().size() == static_cast<std::size_t>(kKeys));
}

BOOST_AUTO_TEST_SUITE_END()
