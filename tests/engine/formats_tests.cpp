// Table formats (canonical JSON, binary), corrupt input, record files,
// merging, choice log files and provenance checks.
#include <boost/test/unit_test.hpp>

#include "error_of.hpp"

#include <algorithm>

#include "captured_log.hpp"
#include "io/checksum_trailer.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/merge_report.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/records/record_store.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/runtime/runtime.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::TempDir;

using tunelock::testing::contains;
using tunelock::testing::error_of;

namespace {

const std::string kExampleTable = std::string(TUNELOCK_EXAMPLES_DIR) + "/tables/sm90.json";

std::unique_ptr<InMemoryTable> sample_table() {
  Provenance p;
  p.source = "formats test";
  p.device_name = "NVIDIA H200";
  p.sm_count = 132;
  p.packages = {{"mamba_ssm", "2.3.1"}};
  auto table = std::make_unique<InMemoryTable>("sm90", p);
  table->set("pkg.mm", "M=1", TableEntry{make_config({{"BLOCK_M", 64}, {"BLOCK_N", 32}}, 4, 3)});
  Config with_ir = make_config({{"BLOCK_M", 128}}, 8, 3, 2, 128);
  with_ir.ir_override = "mm.ttgir";
  table->set("pkg.mm", "*", TableEntry{with_ir});
  table->set("norm", "N=8", TableEntry{make_config({{"BLOCK_M", 64}, {"BLOCK_N", 32}}, 4, 3)});
  return table;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(table_formats)

BOOST_AUTO_TEST_CASE(binary_round_trip_keeps_every_entry_and_provenance) {
  const auto original = sample_table();
  const auto binary = table_from_binary(table_to_binary(*original), "t.tlb");
  BOOST_TEST(binary->arch() == "sm90");
  BOOST_TEST((binary->provenance() == original->provenance()));
  BOOST_TEST((binary->kernels() == original->kernels()));
  BOOST_TEST(binary->entry_count() == 3u);
  for (const std::string& kernel : original->kernels())
    for (const std::string& key : original->keys(kernel))
      BOOST_TEST((*binary->entry(kernel, key) == *original->entry(kernel, key)));
  BOOST_TEST(!binary->entry("pkg.mm", "M=2").has_value());
  BOOST_TEST(!binary->entry("zzz", "*").has_value());
}

BOOST_AUTO_TEST_CASE(binary_lookups_match_in_place_like_the_json_table) {
  const auto original = sample_table();
  const auto binary = table_from_binary(table_to_binary(*original), "t.tlb");
  // The wildcard entry is ctas=2, maxnreg=128, ir_override "mm.ttgir": only
  // the candidate equal in all of them matches, in either form.
  std::vector<Config> candidates{make_config({{"BLOCK_M", 128}}, 8, 3, 1, 128),
                                 make_config({{"BLOCK_M", 128}}, 8, 3, 2, 128),
                                 make_config({{"BLOCK_M", 128}}, 8, 3, 2, 128),
                                 make_config({{"BLOCK_M", 64}, {"BLOCK_N", 32}}, 4, 3)};
  candidates[2].ir_override = "mm.ttgir";
  for (const auto& [kernel, key] : std::vector<std::pair<std::string, std::string>>{
           {"pkg.mm", "M=1"}, {"pkg.mm", "*"}, {"norm", "N=8"}, {"norm", "N=9"}, {"a", "*"}}) {
    const EntryMatch a = original->match(kernel, key, candidates);
    const EntryMatch b = binary->match(kernel, key, candidates);
    BOOST_TEST(a.present == b.present);
    BOOST_TEST((a.index == b.index));
  }
  BOOST_TEST(*binary->match("pkg.mm", "*", candidates).index == 2u);
}

BOOST_AUTO_TEST_CASE(canonical_json_is_byte_stable_through_binary) {
  const std::string json = table_to_json(*table_from_json(read_file(kExampleTable), "example"));
  const auto binary = table_from_binary(table_to_binary(*table_from_json(json, "canonical")), "b");
  BOOST_TEST(table_to_json(*binary) == json);
  BOOST_TEST(table_to_json(*table_from_json(json, "again")) == json);  // a fixed point
  BOOST_TEST(json.back() == '\n');
  BOOST_TEST(json.find("\n \"arch\": \"sm90\",\n \"format_version\": 1,\n \"kernels\"") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(binary_is_deterministic_and_stores_configs_once) {
  InMemoryTable table("host");
  const Config shared = make_config({{"BLOCK", 64}}, 4, 2);
  for (int i = 0; i < 1000; ++i) table.set("k", "M=" + std::to_string(i), TableEntry{shared});
  const std::string once = table_to_binary(table);
  BOOST_TEST(once == table_to_binary(table));
  BOOST_TEST(once.size() < 1000u * 40);  // keys plus a 4-byte reference each, one config
}

BOOST_AUTO_TEST_CASE(newer_binary_format_is_refused_naming_the_supported_version) {
  const std::string sealed = table_to_binary(*sample_table());
  // format_version is the root table's first field; patch the known value
  // and seal again, as a newer writer would.
  const std::string bytes = sealed.substr(0, sealed.size() - 12);
  const std::string needle("\x02\x00\x00\x00", 4);
  bool refused = false;
  for (std::size_t at = bytes.find(needle); at != std::string::npos;
       at = bytes.find(needle, at + 1)) {
    std::string patched = bytes;
    patched[at] = 9;
    const std::string message =
        error_of([&] { table_from_binary(checksum_trailer::seal(patched), "new.tlb"); });
    if (message.find("format_version 9 is newer than this tunelock supports (2)") !=
        std::string::npos)
      refused = true;
  }
  BOOST_TEST(refused);
}

BOOST_AUTO_TEST_CASE(every_truncation_and_bit_flip_is_refused_naming_the_file) {
  const std::string bytes = table_to_binary(*sample_table());
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const std::string message =
        error_of([&] { table_from_binary(bytes.substr(0, length), "cut.tlb"); });
    BOOST_TEST_INFO("length " << length);
    BOOST_TEST(message.starts_with("cut.tlb: "));
  }
  // Every bit of the file: a changed table must never load as valid.
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
      BOOST_TEST_INFO("byte " << at << " bit " << bit);
      BOOST_TEST(
          error_of([&] { table_from_binary(flipped, "flip.tlb"); }).starts_with("flip.tlb: "));
    }
  }
}

BOOST_AUTO_TEST_CASE(json_bytes_are_not_a_binary_table) {
  BOOST_TEST(error_of([] {
               table_from_binary("{\"arch\": \"sm90\"}", "x.tlb");
             }).find("no TLTB identifier") != std::string::npos);
  BOOST_TEST(error_of([] { table_from_binary("", "x.tlb"); }).find("empty file") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(provenance_differences_name_each_field) {
  Provenance table, device;
  table.device_name = "NVIDIA H100";
  table.sm_count = 132;
  device.device_name = "NVIDIA H200";
  device.sm_count = 132;
  device.driver_version = "570.1";  // the table does not say: not compared
  const auto differences = provenance_differences(table, device);
  BOOST_TEST_REQUIRE(differences.size() == 1u);
  BOOST_TEST(differences[0] == "device_name: table 'NVIDIA H100' vs device 'NVIDIA H200'");
}

BOOST_AUTO_TEST_CASE(runtime_warns_when_the_table_comes_from_another_device) {
  TempDir dir;
  write_file_atomically(dir.path() / "sm90.json", table_to_json(*sample_table()));
  Notices notices;
  tunelock::testing::CapturedLog log;
  Runtime runtime(0, notices);
  Policy p;
  p.mode = Mode::pinned;
  p.table_path = {dir.path().string()};
  runtime.install(p);
  Provenance device;
  device.device_name = "NVIDIA B200";
  runtime.set_device(device);
  BOOST_TEST(runtime.table_for("sm90") != nullptr);
  BOOST_TEST(log.count("device_name: table 'NVIDIA H200' vs device 'NVIDIA B200'") == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// Four ranks' records: M=1 splits 2:2 (timings decide), M=2 is 3:1, M=3 unanimous.
struct Recording {
  std::vector<std::pair<std::string, std::string>> files;  // record, timings

  Recording() {
    const std::string fast = R"({"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 3})";
    const std::string slow = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3})";
    for (int rank = 0; rank < 4; ++rank) {
      const std::string m1 = rank < 2 ? fast : slow;
      const std::string m2 = rank == 3 ? slow : fast;
      files.emplace_back(R"({"sm90": {"pkg.mm": {"M=1": )" + m1 + R"(, "M=2": )" + m2 +
                             R"(, "M=3": )" + fast + "}}}",
                         timings(rank));
    }
  }

  static std::string timings(int rank) {
    // BLOCK_M=64 is faster on every rank for M=1 by a hair.
    const double f = 1.00 + 0.01 * rank, s = 0.99 + 0.01 * rank;
    auto entry = [](double a, double b) {
      return "[{\"signature\": \"BLOCK_M=128;warps=8;stages=3\", \"median_ms\": " +
             std::to_string(a) +
             "}, {\"signature\": \"BLOCK_M=64;warps=4;stages=3\", \"median_ms\": " +
             std::to_string(b) + "}]";
    };
    return R"({"format_version": 1, "rank": )" + std::to_string(rank) +
           R"(, "device": {"device_name": "NVIDIA H200", "sm_count": 132, "recorded_at": "2026-11-0)" +
           std::to_string(rank + 1) + R"(T10:00:00Z"}, "timings": {"sm90": {"pkg.mm": {"M=1": )" +
           entry(f, s) + ", \"M=2\": " + entry(f, s) + ", \"M=3\": " + entry(f, s) + "}}}}";
  }

  std::vector<RecordFile> load(const std::vector<int>& order, bool with_timings) const {
    std::vector<RecordFile> out;
    for (int i : order) {
      RecordFile r = record_from_json(files[i].first, "rank" + std::to_string(i));
      if (with_timings) add_timings_from_json(r, files[i].second, "timings" + std::to_string(i));
      out.push_back(std::move(r));
    }
    return out;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(merge)

BOOST_AUTO_TEST_CASE(one_ranks_file_names_share_a_stem_and_name_their_run) {
  for (const char* name :
       {"d/rec.rank12.json", "d/rec.rank12.timings.json", "d/rec.rank12.timings.tlrt"}) {
    const RankFileName parsed = parse_rank_file_name(name);
    BOOST_TEST(parsed.stem == "d/rec.rank12", name);
    BOOST_TEST(parsed.run == "d/rec", name);
    BOOST_TEST(parsed.rank == 12, name);
  }
  const RankFileName log = parse_rank_file_name("pinned.rank0.tlcl");
  BOOST_TEST(log.run == "pinned");
  BOOST_TEST(log.rank == 0);
  for (const char* name :
       {"log.json", "a.rankX.json", "a.rank.json", "a.rank1.txt", "a.rank1234567890.json"}) {
    const RankFileName parsed = parse_rank_file_name(name);
    BOOST_TEST(parsed.run.empty(), name);
    BOOST_TEST(parsed.rank == -1, name);
  }
  BOOST_TEST(parse_rank_file_name("a.rank1.txt").stem == "a.rank1.txt");  // no known ending
}

BOOST_AUTO_TEST_CASE(majority_wins_and_timing_breaks_ties) {
  const Recording recording;
  const MergeResult result = merge_records(recording.load({0, 1, 2, 3}, true), "", "");
  BOOST_TEST(signature(result.table->entry("pkg.mm", "M=2")->config) ==
             "BLOCK_M=128;warps=8;stages=3");
  BOOST_TEST(signature(result.table->entry("pkg.mm", "M=1")->config) ==
             "BLOCK_M=64;warps=4;stages=3");
  BOOST_TEST_REQUIRE(result.disagreements.size() == 2u);
  BOOST_TEST((result.disagreements[0].decided_by == DecidedBy::timing));
  BOOST_TEST((result.disagreements[1].decided_by == DecidedBy::majority));
  BOOST_TEST(result.table->provenance().device_name == "NVIDIA H200");
  BOOST_TEST(result.table->provenance().recorded_at == "2026-11-04T10:00:00Z");  // from the inputs
}

BOOST_AUTO_TEST_CASE(without_timings_ties_break_by_canonical_config_text) {
  const Recording recording;
  const MergeResult result = merge_records(recording.load({0, 1, 2, 3}, false), "", "");
  // "BLOCK_M=128..." sorts before "BLOCK_M=64...".
  BOOST_TEST(signature(result.table->entry("pkg.mm", "M=1")->config) ==
             "BLOCK_M=128;warps=8;stages=3");
  BOOST_TEST((result.disagreements[0].decided_by == DecidedBy::config_text));
}

BOOST_AUTO_TEST_CASE(output_bytes_are_the_same_for_every_file_order) {
  const Recording recording;
  for (bool timings : {true, false}) {
    std::vector<int> order{0, 1, 2, 3};
    const MergeResult first = merge_records(recording.load(order, timings), "", "t");
    const std::string json = table_to_json(*first.table);
    const std::string binary = table_to_binary(*first.table);
    const std::string report = disagreement_report(first.disagreements);
    int permutations = 0;
    while (std::next_permutation(order.begin(), order.end())) {
      const MergeResult again = merge_records(recording.load(order, timings), "", "t");
      BOOST_TEST(table_to_json(*again.table) == json);
      BOOST_TEST(table_to_binary(*again.table) == binary);
      BOOST_TEST(disagreement_report(again.disagreements) == report);
      ++permutations;
    }
    BOOST_TEST(permutations == 23);
  }
}

BOOST_AUTO_TEST_CASE(three_files_in_every_order_agree_too) {
  const Recording recording;
  std::vector<int> order{0, 2, 3};
  const std::string json = table_to_json(*merge_records(recording.load(order, true), "", "").table);
  while (std::next_permutation(order.begin(), order.end()))
    BOOST_TEST(table_to_json(*merge_records(recording.load(order, true), "", "").table) == json);
}

BOOST_AUTO_TEST_CASE(report_lists_winners_votes_and_timing_spread) {
  const Recording recording;
  const std::string report =
      disagreement_report(merge_records(recording.load({0, 1, 2, 3}, true), "", "").disagreements);
  BOOST_TEST(report.starts_with("2 key(s) where ranks chose differently:\nsm90|pkg.mm|M=1\n"));
  BOOST_TEST(report.find("  2 vote(s): BLOCK_M=64;warps=4;stages=3  timed 0.99..1.02 ms, median "
                         "1.005 ms over 4 rank(s)") != std::string::npos);
  BOOST_TEST(
      report.find(
          "-> kept BLOCK_M=64;warps=4;stages=3 (timing); the two best medians differ by 1.0%") !=
      std::string::npos);
  BOOST_TEST(report.find("sm90|pkg.mm|M=3") == std::string::npos);  // unanimous keys are not listed
}

// The report's two sections, whole: keys where ranks chose differently,
// then keys whose only problem is a candidate the audit flagged.
BOOST_AUTO_TEST_CASE(report_puts_split_votes_before_flagged_candidates) {
  const Config a = make_config({{"BLOCK", 32}}), b = make_config({{"BLOCK", 64}});
  KeyVerdict split{{"sm90", "pkg.mm", "M=1"},
                   {Vote{signature(a), a, 3, {}}, Vote{signature(b), b, 1, {}}},
                   {},
                   DecidedBy::majority};
  KeyVerdict flagged{{"sm90", "pkg.mm", "M=2"},
                     {Vote{signature(a), a, 4, {}}},
                     {signature(b)},
                     DecidedBy::unanimous};
  KeyVerdict all_flagged{{"sm90", "pkg.mm", "M=3"}, {}, {signature(b)}, DecidedBy::unanimous};
  BOOST_TEST(disagreement_report({}) == "");
  BOOST_TEST(disagreement_report({flagged, split, all_flagged}) ==
             "1 key(s) where ranks chose differently:\n"
             "sm90|pkg.mm|M=1\n"
             "  3 vote(s): BLOCK=32;warps=4;stages=3\n"
             "  1 vote(s): BLOCK=64;warps=4;stages=3\n"
             "  -> kept BLOCK=32;warps=4;stages=3 (majority)\n"
             "2 key(s) with nondeterministic candidates:\n"
             "sm90|pkg.mm|M=2\n"
             "  4 vote(s): BLOCK=32;warps=4;stages=3\n"
             "  nondeterministic (bits changed between two runs of itself), never pinned: "
             "BLOCK=64;warps=4;stages=3\n"
             "  -> kept BLOCK=32;warps=4;stages=3 (unanimous)\n"
             "sm90|pkg.mm|M=3\n"
             "  nondeterministic (bits changed between two runs of itself), never pinned: "
             "BLOCK=64;warps=4;stages=3\n"
             "  -> every winner was nondeterministic: left out of the table\n");
}

BOOST_AUTO_TEST_CASE(several_architectures_need_an_explicit_arch) {
  std::vector<RecordFile> records{
      record_from_json(R"({"sm90": {"k": {"*": {"num_warps": 4, "num_stages": 3}}},
                           "sm80": {"k": {"*": {"num_warps": 4, "num_stages": 3}}}})",
                       "r")};
  BOOST_TEST(error_of([&] {
               merge_records(records, "", "");
             }).find("several architectures (sm80, sm90)") != std::string::npos);
  BOOST_TEST(merge_records(records, "sm80", "").table->arch() == "sm80");
  BOOST_TEST(error_of([&] { merge_records(records, "sm70", ""); }).find("no entries for sm70") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(malformed_records_and_timings_name_file_and_path) {
  BOOST_TEST(error_of([] {
               record_from_json(R"({"sm90": {"k": {"M=1": {"num_warps": -2}}}})", "r.json");
             }).find("r.json: sm90.k[\"M=1\"].num_warps: -2 is out of range") != std::string::npos);
  BOOST_TEST(error_of([] {
               record_from_json(R"({"sm90": []})", "r.json");
             }).find("r.json: sm90: expected an object") != std::string::npos);
  RecordFile r;
  BOOST_TEST(error_of([&] {
               add_timings_from_json(
                   r, R"({"timings": {"a": {"k": {"*": [{"signature": "s", "median_ms": -1}]}}}})",
                   "t.json");
             }).find("median_ms: expected a non-negative number or null") != std::string::npos);
  BOOST_TEST(error_of([&] {
               add_timings_from_json(r, R"({"format_version": 2, "timings": {}})", "t.json");
             }).find("newer than this tunelock supports") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(record_files_written_by_a_run_merge_back) {
  TempDir dir;
  RecordStore store;
  store.add("host", "demo.mm", "M=1", make_config({{"BLOCK", 64}}, 4, 2),
            {{signature(make_config({{"BLOCK", 64}}, 4, 2)), 0.5},
             {signature(make_config({{"BLOCK", 32}}, 4, 2)), 0.7}});
  store.write(dir.path() / "rec", 0);
  const RecordFile loaded = load_record_file(dir.path() / "rec.rank0.json");
  BOOST_TEST(loaded.has_timings);
  BOOST_TEST(loaded.rank == 0);
  const auto merged = merge_records({loaded}, "", "");
  BOOST_TEST(signature(merged.table->entry("demo.mm", "M=1")->config) ==
             "BLOCK=64;warps=4;stages=2");
}

BOOST_AUTO_TEST_CASE(sidecars_carry_triton_and_package_versions_into_the_merged_table) {
  auto sidecar = [](int rank, const std::string& torch) {
    return R"({"format_version": 1, "rank": )" + std::to_string(rank) +
           R"(, "device": {"device_name": "H200", "sm_count": 132, "driver_version": "13.0",
             "recorded_at": "2026-12-01T10:0)" +
           std::to_string(rank) +
           R"(:00Z", "triton": "3.6.0", "packages": {"triton": "3.6.0", "torch": ")" + torch +
           R"("}}, "timings": {"sm90": {"k": {"M=1": [{"signature": "BLOCK=64;warps=4;stages=2",
             "median_ms": 0.5}]}}}})";
  };
  std::vector<RecordFile> records(2);
  for (int r = 0; r < 2; ++r) {
    add_timings(records[static_cast<std::size_t>(r)], sidecar(r, r ? "2.11.1" : "2.11.0"),
                "t.json");
    records[static_cast<std::size_t>(r)].origin = "rec.rank" + std::to_string(r) + ".json";
    records[static_cast<std::size_t>(r)].winners[{"sm90", "k", "M=1"}] =
        make_config({{"BLOCK", 64}}, 4, 2);
    // Through the binary form and back: nothing lost.
    RecordFile again;
    add_timings(again, timings_to_binary(records[static_cast<std::size_t>(r)]), "t.tlrt");
    BOOST_TEST((again.device == records[static_cast<std::size_t>(r)].device));
  }
  const Provenance merged = merge_records(records, "", "").table->provenance();
  BOOST_TEST(merged.triton == "3.6.0");
  BOOST_TEST(merged.packages.at("triton") == "3.6.0");
  BOOST_TEST(merged.packages.at("torch") == "2.11.0 | 2.11.1");  // the records differ: both named
  BOOST_TEST(merged.driver_version == "13.0");
  BOOST_TEST(merged.recorded_at == "2026-12-01T10:01:00Z");  // the latest
}

BOOST_AUTO_TEST_CASE(timing_sidecars_convert_between_json_and_binary_without_loss) {
  const Recording recording;
  RecordFile from_json;
  add_timings(from_json, recording.files[2].second, "t.json");
  const std::string binary = timings_to_binary(from_json);
  RecordFile from_binary;
  add_timings(from_binary, binary, "t.tlrt");
  BOOST_TEST(from_binary.rank == 2);
  BOOST_TEST(from_binary.device.recorded_at == "2026-11-03T10:00:00Z");
  BOOST_TEST(timings_to_json(from_binary) == timings_to_json(from_json));
  BOOST_TEST(timings_to_binary(from_binary) == binary);
  BOOST_TEST(error_of([&] {
               add_timings(from_binary, binary.substr(0, binary.size() - 9), "cut.tlrt");
             }).starts_with("cut.tlrt: "));
}

BOOST_AUTO_TEST_CASE(a_binary_sidecar_beside_a_record_is_used_by_merge) {
  TempDir dir;
  const Recording recording;
  for (int r = 0; r < 4; ++r) {
    RecordFile timings;
    add_timings(timings, recording.files[r].second, "t");
    dir.write("rec.rank" + std::to_string(r) + ".json", recording.files[r].first);
    write_file_atomically(dir.path() / ("rec.rank" + std::to_string(r) + ".timings.tlrt"),
                          timings_to_binary(timings));
  }
  std::vector<RecordFile> records;
  for (int r = 0; r < 4; ++r)
    records.push_back(load_record_file(dir.path() / ("rec.rank" + std::to_string(r) + ".json")));
  BOOST_TEST(records[0].has_timings);
  // Timings decide the 2:2 tie exactly as with the JSON sidecars.
  BOOST_TEST(signature(merge_records(records, "", "").table->entry("pkg.mm", "M=1")->config) ==
             "BLOCK_M=64;warps=4;stages=3");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(choice_log_files)

BOOST_AUTO_TEST_CASE(json_and_binary_round_trip_with_a_recomputed_digest) {
  ChoiceLogFile log{3, {{"sm90|k|M=1", "A;pinned"}, {"sm90|k|M=2", "B;timed"}}, ""};
  const ChoiceLogFile from_json = choice_log_from_bytes(choice_log_to_json(log), "l.json");
  const ChoiceLogFile from_binary = choice_log_from_bytes(choice_log_to_binary(log), "l.tlcl");
  BOOST_TEST(from_json.rank == 3);
  BOOST_TEST((from_json.entries == log.entries));
  BOOST_TEST(from_json.digest == choice_digest(log.entries));
  BOOST_TEST((from_binary == from_json));
}

BOOST_AUTO_TEST_CASE(malformed_logs_name_the_file_and_problem) {
  BOOST_TEST(error_of([] { choice_log_from_bytes(R"({"entries": {}})", "l.json"); }) ==
             "l.json: rank: missing");
  BOOST_TEST(error_of([] {
               choice_log_from_bytes(R"({"rank": 0, "entries": {"k": 3}})", "l.json");
             }).find("l.json: entries[\"k\"]: expected a string") != std::string::npos);
  BOOST_TEST(error_of([] {
               choice_log_from_bytes(R"({"rank": -1, "entries": {}})", "l.json");
             }).find("rank: -1 is out of range") != std::string::npos);
  std::string binary = choice_log_to_binary(ChoiceLogFile{0, {{"a", "b"}}, ""});
  BOOST_TEST(error_of([&] {
               choice_log_from_bytes(binary.substr(0, binary.size() - 6), "l.tlcl");
             }).find("l.tlcl: ") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
