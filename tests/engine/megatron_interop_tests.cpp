// Files in the exact form Megatron-LM's tuning module writes them: the full
// config form with nulls, older entries without num_ctas/maxnreg/ir_override,
// its merge tie rule, and its path handling. Fixtures here are written for
// these tests; the expected merged tables are derived by hand in comments.
#include <boost/test/unit_test.hpp>

#include "error_of.hpp"

#include <nlohmann/json.hpp>

#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using nlohmann::json;
using tunelock::testing::TempDir;

using tunelock::testing::contains;
using tunelock::testing::error_of;

namespace {

// A record as Megatron writes it today: every field, nulls included.
const char* kFullFormRecord = R"({"sm90": {"mamba.ops.scan": {
  "L=1|bf16": {"kwargs": {"BLOCK_M": 64, "BLOCK_N": 32}, "num_warps": 4, "num_stages": 3,
               "num_ctas": 1, "maxnreg": null, "ir_override": null},
  "L=2|bf16": {"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 2,
               "num_ctas": 2, "maxnreg": 168, "ir_override": "scan.ttgir"}}}})";

std::vector<RecordFile> records_of(const std::vector<std::string>& texts) {
  std::vector<RecordFile> out;
  for (std::size_t i = 0; i < texts.size(); ++i)
    out.push_back(record_from_json(texts[i], "r" + std::to_string(i) + ".json"));
  return out;
}

std::string record_with(const std::string& config) {
  return R"({"sm90": {"k": {"M=1": )" + config + "}}}";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(megatron_forms)

BOOST_AUTO_TEST_CASE(full_form_records_with_nulls_load_with_every_field) {
  const RecordFile record = record_from_json(kFullFormRecord, "rec.rank0.json");
  const Config& plain = record.winners.at({"sm90", "mamba.ops.scan", "L=1|bf16"});
  BOOST_TEST(plain.num_ctas == 1);
  BOOST_TEST(!plain.maxnreg);
  BOOST_TEST(!plain.ir_override);
  const Config& full = record.winners.at({"sm90", "mamba.ops.scan", "L=2|bf16"});
  BOOST_TEST(signature(full) ==
             "BLOCK_M=128;warps=8;stages=2;ctas=2;maxnreg=168;ir_override=scan.ttgir");
}

BOOST_AUTO_TEST_CASE(full_form_merged_tables_load_and_old_and_new_entries_mix) {
  const char* table =
      R"({"arch": "sm90", "source": "megatron merge", "packages": {}, "triton": "3.6.0",
    "kernels": {"_scan_kernel": {
      "L=1": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3,
              "num_ctas": 1, "maxnreg": null, "ir_override": null},
      "L=2": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}}}})";
  const auto loaded = table_from_json(table, "sm90.json");
  // The old form fills num_ctas 1, maxnreg and ir_override unset: the same config.
  BOOST_TEST((loaded->entry("_scan_kernel", "L=1")->config ==
              loaded->entry("_scan_kernel", "L=2")->config));
  BOOST_TEST(
      (loaded->entry("_scan_kernel", "L=1")->config == make_config({{"BLOCK_M", 64}}, 4, 3)));
}

BOOST_AUTO_TEST_CASE(tunelock_writes_the_full_form_and_reads_it_back) {
  Config config = make_config({{"BLOCK_M", 64}}, 4, 3);
  BOOST_TEST(config_to_json(config) == json::parse(R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4,
      "num_stages": 3, "num_ctas": 1, "maxnreg": null, "ir_override": null})"));
  const auto table = table_from_json(
      R"({"arch": "sm90", "kernels": {"k": {"*": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4,
          "num_stages": 3, "num_ctas": 2, "maxnreg": 128, "ir_override": "k.ttgir"}}}})",
      "in.json");
  const std::string written = table_to_json(*table);
  BOOST_TEST(json::parse(written)["kernels"]["k"]["*"] ==
             json::parse(R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3,
                 "num_ctas": 2, "maxnreg": 128, "ir_override": "k.ttgir"})"));
  BOOST_TEST(table_to_json(*table_from_json(written, "again.json")) == written);
}

BOOST_AUTO_TEST_CASE(an_entry_without_num_warps_or_num_stages_is_malformed) {
  BOOST_TEST(
      contains(error_of([] { record_from_json(record_with(R"({"num_stages": 3})"), "r.json"); }),
               "r.json: sm90.k[\"M=1\"].num_warps: missing"));
  BOOST_TEST(
      contains(error_of([] { record_from_json(record_with(R"({"num_warps": 4})"), "r.json"); }),
               "r.json: sm90.k[\"M=1\"].num_stages: missing"));
}

BOOST_AUTO_TEST_CASE(canonical_config_text_is_pythons_sort_keys_layout) {
  // Written by hand as Python prints json.dumps(config, sort_keys=True).
  BOOST_TEST(canonical_config_text(make_config({{"BLOCK_N", 32}, {"BLOCK_M", 64}}, 4, 3)) ==
             R"({"ir_override": null, "kwargs": {"BLOCK_M": 64, "BLOCK_N": 32}, "maxnreg": null, )"
             R"("num_ctas": 1, "num_stages": 3, "num_warps": 4})");
  Config full = make_config({}, 8, 2, 2, 255);
  full.ir_override = "caf\xc3\xa9\".ttgir";  // non-ASCII and a quote: ASCII escapes, as Python
  BOOST_TEST(canonical_config_text(full) ==
             R"({"ir_override": "caf\u00e9\".ttgir", "kwargs": {}, "maxnreg": 255, )"
             R"("num_ctas": 2, "num_stages": 2, "num_warps": 8})");
}

BOOST_AUTO_TEST_CASE(numbers_beyond_a_double_are_errors_naming_file_and_path) {
  BOOST_TEST(
      error_of([] {
        record_from_json(R"({"sm90": {"k": {"M=1": {"kwargs": {"BLOCK_M": 1e400}}}}})", "r.json");
      }) == "r.json: sm90.k.M=1.kwargs.BLOCK_M: number out of range (beyond a 64-bit float)");
  RecordFile r;
  BOOST_TEST(
      error_of([&] {
        add_timings_from_json(
            r, R"({"timings": {"sm90": {"k": {"*": [{"signature": "s", "median_ms": -1e400}]}}}})",
            "t.json");
      }) == "t.json: timings.sm90.k.*[0].median_ms: number out of range (beyond a 64-bit float)");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(megatron_merge)

// Ties without timings, derived by hand from Megatron's rule: the smallest
// json.dumps(sort_keys=True) text of the full form wins. Each pair is chosen
// so the signature order would pick the other one.
//   M=1: A {"ir_override": null, "kwargs": {"BLOCK_M": 64}, "maxnreg": null, "num_ctas": 1,
//           "num_stages": 3, "num_warps": 8}
//        B ... "num_stages": 4, "num_warps": 4}            '3' < '4': A wins (signature: B)
//   M=2: C ... "maxnreg": 128 ...   D ... "maxnreg": null    '1' < 'n': C wins (signature: D)
//   M=3: E {"ir_override": "a.ttgir" ...  F {"ir_override": null  '"' < 'n': E wins
// Ranks 0 and 1 write A in the old and the new form: one config, two votes.
BOOST_AUTO_TEST_CASE(ties_without_timings_break_as_megatrons_merge_does) {
  const std::string a_old = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 8, "num_stages": 3})";
  const std::string a_new = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 8, "num_stages": 3,
                                "num_ctas": 1, "maxnreg": null, "ir_override": null})";
  const std::string b = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 4})";
  const std::string c =
      R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3, "maxnreg": 128})";
  const std::string d =
      R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3, "maxnreg": null})";
  const std::string e =
      R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3, "ir_override": "a.ttgir"})";
  const std::string f = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3})";
  auto rank = [](const std::string& m1, const std::string& m2, const std::string& m3) {
    return R"({"sm90": {"pkg.scan": {"M=1": )" + m1 + R"(, "M=2": )" + m2 + R"(, "M=3": )" + m3 +
           "}}}";
  };
  const MergeResult result = merge_records(
      records_of({rank(a_old, c, e), rank(a_new, d, f), rank(b, c, e), rank(b, d, f)}), "",
      "hand-derived");
  const json expected = json::parse(R"({
    "M=1": {"kwargs": {"BLOCK_M": 64}, "num_warps": 8, "num_stages": 3, "num_ctas": 1,
            "maxnreg": null, "ir_override": null},
    "M=2": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3, "num_ctas": 1,
            "maxnreg": 128, "ir_override": null},
    "M=3": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3, "num_ctas": 1,
            "maxnreg": null, "ir_override": "a.ttgir"}})");
  BOOST_TEST(json::parse(table_to_json(*result.table))["kernels"]["pkg.scan"] == expected);
  BOOST_TEST_REQUIRE(result.disagreements.size() == 3u);
  for (const KeyVerdict& v : result.disagreements)
    BOOST_TEST((v.decided_by == DecidedBy::config_text));
}

BOOST_AUTO_TEST_CASE(ties_with_timings_go_to_the_best_median_first) {
  // A would win the text rule; B is faster on both ranks that timed it.
  const std::string a = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 8, "num_stages": 3})";
  const std::string b = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 4})";
  std::vector<RecordFile> records = records_of({record_with(a), record_with(b)});
  for (int r = 0; r < 2; ++r) {
    add_timings_from_json(
        records[r], R"({"rank": )" + std::to_string(r) + R"(, "timings": {"sm90": {"k": {"M=1": [
                              {"signature": "BLOCK_M=64;warps=8;stages=3", "median_ms": 2.0},
                              {"signature": "BLOCK_M=64;warps=4;stages=4", "median_ms": 1.5}]}}}})",
        "t" + std::to_string(r) + ".json");
  }
  const MergeResult result = merge_records(records, "", "");
  BOOST_TEST(signature(result.table->entry("k", "M=1")->config) == "BLOCK_M=64;warps=4;stages=4");
  BOOST_TEST((result.disagreements.at(0).decided_by == DecidedBy::timing));
}

BOOST_AUTO_TEST_CASE(the_same_file_or_two_files_of_one_rank_are_errors_not_two_votes) {
  TempDir dir;
  const std::string config = R"({"kwargs": {}, "num_warps": 4, "num_stages": 3})";
  dir.write("rec.rank0.json", record_with(config));
  dir.write("old/rec.rank0.json", record_with(config));
  dir.write("rec.rank1.json", record_with(config));
  const auto same = error_of([&] {
    load_record_files({dir.path() / "rec.rank0.json", dir.path() / "." / "rec.rank0.json"});
  });
  BOOST_TEST(contains(same, "rec.rank0.json: the same file as"));
  const auto one_rank = error_of([&] {
    tally(load_record_files({dir.path() / "rec.rank0.json", dir.path() / "old/rec.rank0.json"}));
  });
  BOOST_TEST(contains(one_rank, "are both rank 0"));
  // Distinct ranks merge as before.
  BOOST_TEST(
      tally(load_record_files({dir.path() / "rec.rank0.json", dir.path() / "rec.rank1.json"}))
          .at(0)
          .votes.at(0)
          .count == 2);
  // Records read from text, as the page does: one origin twice is one file twice.
  const RecordFile read = record_from_json(record_with(config), "rec.rank0.json");
  BOOST_TEST(error_of([&] {
               tally({read, read});
             }) == "rec.rank0.json: given twice; each record file is one rank's vote");
}

BOOST_AUTO_TEST_CASE(merge_refuses_names_the_table_readers_refuse) {
  const std::string config = R"({"num_warps": 4, "num_stages": 3})";
  BOOST_TEST(contains(
      error_of([&] { record_from_json(R"({"sm 90": {"k": {"*": )" + config + "}}}", "r.json"); }),
      "r.json: sm 90: 'sm 90' is not an architecture tag"));
  BOOST_TEST(contains(
      error_of([&] { record_from_json(R"({"sm90": {"": {"*": )" + config + "}}}", "r.json"); }),
      "r.json: sm90: empty kernel name"));
  BOOST_TEST(contains(
      error_of([&] { record_from_json(R"({"sm90": {"k": {"": )" + config + "}}}", "r.json"); }),
      "r.json: sm90.k: empty key"));
  const auto records = records_of({R"({"sm90": {"k": {"*": )" + config + "}}}"});
  BOOST_TEST(contains(error_of([&] { merge_records(records, "../sm90", ""); }),
                      "--arch: '../sm90' is not an architecture tag"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(megatron_paths)

BOOST_AUTO_TEST_CASE(a_table_found_by_name_for_another_arch_is_an_error_naming_both) {
  TempDir dir;
  dir.write("sm90.json", R"({"arch": "sm100", "kernels": {}})");
  const std::vector<std::string> path{dir.path().string()};
  const std::string message = error_of([&] { load_table_for_arch("sm90", path, false); });
  BOOST_TEST(contains(message, (dir.path() / "sm90.json").string()));
  BOOST_TEST(contains(message, "found as the table for sm90, but its arch field says sm100"));
}

BOOST_AUTO_TEST_CASE(tilde_expands_in_table_path_and_record_path) {
  const Policy policy = policy_from_environment({{"HOME", "/home/u"},
                                                 {"TUNELOCK_TABLE_PATH", "~/tables:/abs:~"},
                                                 {"TUNELOCK_RECORD", "~/runs/rec"}});
  BOOST_TEST((policy.table_path == std::vector<std::string>{"/home/u/tables", "/abs", "/home/u"}));
  BOOST_TEST(policy.record_path == "/home/u/runs/rec");
  // Megatron's alias gets the same treatment.
  BOOST_TEST(
      policy_from_environment({{"HOME", "/h"}, {"MCORE_AUTOTUNE_RECORD", "~/r"}}).record_path ==
      "/h/r");
}

BOOST_AUTO_TEST_CASE(a_record_path_ending_in_a_slash_is_an_error) {
  const std::string message = error_of([] {
    policy_from_environment({{"TUNELOCK_RECORD", "runs/"}});
  });
  BOOST_TEST(contains(message, "record path 'runs/' ends in '/'"));
  BOOST_TEST(contains(error_of([] {
                        policy_from_key_values({{"record_path", "/tmp/x/"}});
                      }),
                      "ends in '/'"));
}

BOOST_AUTO_TEST_SUITE_END()
