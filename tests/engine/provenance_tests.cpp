// A table says where it came from (device, versions, who voted, whether the
// records differed) and a pinned run checks it against the machine it runs
// on: a warning, an error under TUNELOCK_PROVENANCE=strict, or nothing.
#include <boost/test/unit_test.hpp>

#include "captured_log.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/runtime/runtime.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::contains;
using tunelock::testing::error_of;
using tunelock::testing::TempDir;

namespace {

Provenance h200() {
  Provenance d;
  d.device_name = "NVIDIA H200";
  d.sm_count = 132;
  d.driver_version = "13.0";
  d.cuda_version = "12.8";
  d.triton = "3.6.0";
  d.packages = {{"torch", "2.11.0"}, {"triton", "3.6.0"}};
  d.recorded_at = "2026-12-01T10:00:00Z";
  return d;
}

RecordFile record(const std::string& run, int rank, Provenance device) {
  RecordFile r;
  r.origin = run + ".rank" + std::to_string(rank) + ".json";
  r.run = run;
  r.rank = rank;
  r.has_timings = true;
  r.device = std::move(device);
  r.winners[{"sm90", "pkg.mm", "M=1"}] = make_config({{"BLOCK_M", 64}}, 4, 3);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(provenance)

BOOST_AUTO_TEST_CASE(a_merge_of_two_runs_says_who_voted_and_keeps_it_through_both_formats) {
  std::vector<RecordFile> records;
  for (const std::string run : {"day1", "day2"})
    for (int rank : {0, 1}) records.push_back(record(run, rank, h200()));
  records[3].device.recorded_at = "2026-12-02T09:00:00Z";
  const MergeResult merged = merge_records(records, "", "");
  const Provenance& p = merged.table->provenance();
  BOOST_TEST(p.ranks == 4);
  BOOST_TEST(p.runs == 2);
  BOOST_TEST(p.mixed.empty());
  BOOST_TEST(p.device_name == "NVIDIA H200");
  BOOST_TEST(p.sm_count == 132);
  BOOST_TEST(p.triton == "3.6.0");
  BOOST_TEST(p.cuda_version == "12.8");
  BOOST_TEST(p.driver_version == "13.0");
  BOOST_TEST(p.packages.at("torch") == "2.11.0");
  BOOST_TEST(p.recorded_at == "2026-12-02T09:00:00Z");  // the latest recording
  BOOST_TEST(!p.tool_version.empty());
  const auto from_json = table_from_json(table_to_json(*merged.table), "t.json");
  BOOST_TEST((from_json->provenance() == p));
  const auto from_binary = table_from_binary(table_to_binary(*merged.table), "t.tlb");
  BOOST_TEST((from_binary->provenance() == p));
}

BOOST_AUTO_TEST_CASE(records_from_different_machines_merge_and_the_table_says_so) {
  Provenance other = h200();
  other.device_name = "NVIDIA H100";
  other.triton = other.packages["triton"] = "3.5.1";
  const MergeResult merged = merge_records({record("a", 0, h200()), record("a", 1, other)}, "", "");
  const Provenance& p = merged.table->provenance();
  BOOST_TEST((p.mixed == std::vector<std::string>{"device_name", "triton", "packages.triton"}));
  BOOST_TEST(p.device_name == "NVIDIA H100 | NVIDIA H200");
  const std::string text = table_to_json(*merged.table);
  BOOST_TEST(contains(text, R"("mixed": [)"));
  BOOST_TEST((table_from_json(text, "t.json")->provenance() == p));
  // Still one vote per rank of a run.
  RecordFile copy = record("a", 0, other);
  copy.origin = "copy/a.rank0.json";
  BOOST_TEST(contains(error_of([&] { tally({record("a", 0, h200()), copy}); }), "are both rank 0"));
}

BOOST_AUTO_TEST_CASE(malformed_provenance_counts_are_refused_naming_the_field) {
  const std::string base = R"({"arch": "sm90", "kernels": {}, "provenance": {)";
  BOOST_TEST(contains(error_of([&] { table_from_json(base + R"("ranks": -1}})", "t.json"); }),
                      "t.json: provenance.ranks"));
  BOOST_TEST(contains(error_of([&] { table_from_json(base + R"("runs": "two"}})", "t.json"); }),
                      "t.json: provenance.runs"));
  BOOST_TEST(contains(error_of([&] { table_from_json(base + R"("mixed": [3]}})", "t.json"); }),
                      "t.json: provenance.mixed[0]"));
}

BOOST_AUTO_TEST_CASE(differences_compare_gpu_sm_count_triton_minor_and_cuda_major) {
  Provenance device = h200();
  device.triton = "3.6.1";         // a patch release: same minor
  device.cuda_version = "12.4";    // same major
  device.driver_version = "12.9";  // drivers are not compared
  BOOST_TEST(provenance_differences(h200(), device).empty());
  device.triton = "3.5.0";
  device.cuda_version = "13.0";
  device.sm_count = 114;
  BOOST_TEST((provenance_differences(h200(), device) ==
              std::vector<std::string>{"sm_count: table 132 vs device 114",
                                       "triton: table '3.6.0' vs device '3.5.0'",
                                       "cuda_version: table '12.8' vs device '13.0'"}));
  BOOST_TEST(provenance_difference_line(h200(), device) ==
             "sm_count: table 132 vs device 114; triton: table '3.6.0' vs device '3.5.0'; "
             "cuda_version: table '12.8' vs device '13.0'");
  // A table merged from two GPUs matches either.
  Provenance merged = h200();
  merged.device_name = "NVIDIA H100 | NVIDIA H200";
  BOOST_TEST(provenance_differences(merged, h200()).empty());
}

BOOST_AUTO_TEST_CASE(a_pinned_run_on_another_machine_warns_once_fails_when_strict_or_says_nothing) {
  TempDir dir;
  InMemoryTable table("sm90", h200());
  table.set("pkg.mm", "M=1", TableEntry{make_config({{"BLOCK_M", 64}}, 4, 3)});
  write_file_atomically(dir.path() / "sm90.json", table_to_json(table));
  Provenance b200 = h200();
  b200.device_name = "NVIDIA B200";
  b200.sm_count = 148;
  const std::vector<Config> candidates{make_config({{"BLOCK_M", 64}}, 4, 3)};
  auto run = [&](ProvenanceCheck check, const Provenance& device) {
    Notices notices;
    Runtime runtime(0, notices);
    Policy p;
    p.mode = Mode::pinned;
    p.table_path = {dir.path().string()};
    p.provenance = check;
    runtime.install(p);
    runtime.set_device(device);
    for (int i = 0; i < 3; ++i)
      runtime.pinned_choice("sm90", KernelId{"pkg", "mm"}, "M=1", candidates, false);
  };
  {
    tunelock::testing::CapturedLog log;
    run(ProvenanceCheck::warn, b200);
    BOOST_TEST(log.count("the sm90 table was recorded on another machine (device_name: table "
                         "'NVIDIA H200' vs device 'NVIDIA B200'; sm_count: table 132 vs device "
                         "148); using it anyway") == 1u);
  }
  {
    tunelock::testing::CapturedLog log;
    run(ProvenanceCheck::ignore, b200);
    run(ProvenanceCheck::warn, h200());
    BOOST_TEST(log.count("another machine") == 0u);
  }
  const std::string strict = error_of([&] { run(ProvenanceCheck::strict, b200); });
  BOOST_TEST(contains(strict, "device_name: table 'NVIDIA H200' vs device 'NVIDIA B200'"));
  BOOST_TEST(contains(strict, "TUNELOCK_PROVENANCE=strict refuses it"));
  BOOST_CHECK_NO_THROW(run(ProvenanceCheck::strict, h200()));
}

BOOST_AUTO_TEST_SUITE_END()
