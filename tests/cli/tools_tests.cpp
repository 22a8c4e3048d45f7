// The offline tools as a user runs them on a laptop: table show/convert/
// validate/diff, merge, report, verify, digest, and bad input to each.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"

using tunelock::read_file;
using tunelock::testing::run_cli;
using tunelock::testing::TempDir;

namespace {

const std::string kExamples = TUNELOCK_EXAMPLES_DIR;
const std::string kTable = kExamples + "/tables/sm90.json";
const std::string kCandidates = kExamples + "/candidates.json";

std::string path(const TempDir& dir, const std::string& name) {
  return (dir.path() / name).string();
}

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

// Two ranks' record files: they disagree on M=1.
void write_records(const TempDir& dir) {
  dir.write(
      "rec.rank0.json",
      R"({"sm90": {"pkg.mm": {"M=1": {"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 3},
                                                 "M=2": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}}}})");
  dir.write(
      "rec.rank1.json",
      R"({"sm90": {"pkg.mm": {"M=1": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3},
                                                 "M=2": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}}}})");
  dir.write("rec.rank0.timings.json",
            R"({"format_version": 1, "rank": 0, "device": {"device_name": "H200"},
      "timings": {"sm90": {"pkg.mm": {"M=1": [{"signature": "BLOCK_M=128;warps=8;stages=3", "median_ms": 2.0},
                                              {"signature": "BLOCK_M=64;warps=4;stages=3", "median_ms": 2.1}]}}}})");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(table_commands)

BOOST_AUTO_TEST_CASE(convert_to_binary_and_back_is_byte_stable) {
  TempDir dir;
  BOOST_TEST(run_cli({"table", "convert", kTable, path(dir, "t.tlb")}).code == 0);
  BOOST_TEST(run_cli({"table", "convert", path(dir, "t.tlb"), path(dir, "back.json")}).code == 0);
  BOOST_TEST(run_cli({"table", "convert", kTable, path(dir, "direct.json")}).code == 0);
  BOOST_TEST(read_file(path(dir, "back.json")) == read_file(path(dir, "direct.json")));
  const auto shown = run_cli({"table", "show", path(dir, "t.tlb"), "--json"});
  BOOST_TEST(shown.out == read_file(path(dir, "direct.json")));
}

BOOST_AUTO_TEST_CASE(show_lists_provenance_and_entries) {
  const auto result = run_cli({"table", "show", kTable});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("arch:     sm90\n") != std::string::npos);
  BOOST_TEST(result.out.find("entries:  4\n") != std::string::npos);
  BOOST_TEST(result.out.find("rmsnorm [N=8192|bf16] -> BLOCK_SIZE=1024;warps=8;stages=1\n") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(validate_with_a_manifest_finds_the_stale_entry) {
  const auto plain = run_cli({"table", "validate", kTable});
  BOOST_TEST(plain.code == 0);
  const auto checked = run_cli({"table", "validate", kTable, "--candidates", kCandidates});
  BOOST_TEST(checked.code == 1);
  BOOST_TEST(checked.out.find("stale: demo.ops.matmul [M=8192|N=1024|K=8192|bf16|bf16] -> "
                              "BLOCK_K=64,BLOCK_M=256,BLOCK_N=128,SPLIT_K=1;warps=8;stages=3") !=
             std::string::npos);
  BOOST_TEST(checked.out.find("1 stale entry\n") != std::string::npos);
}

// A hand-edited table whose entry pins a config, and lists an equivalent,
// that its own nondeterministic list also names.
BOOST_AUTO_TEST_CASE(a_table_that_contradicts_itself_is_named_by_validate_and_skipped_by_choose) {
  TempDir dir;
  const std::string pinned = "BLOCK_K=32,BLOCK_M=128,BLOCK_N=128,SPLIT_K=1;warps=8;stages=3";
  const std::string other = "BLOCK_K=32,BLOCK_M=128,BLOCK_N=64,SPLIT_K=1;warps=4;stages=4";
  dir.write("tables/sm90.json",
            R"({"arch": "sm90", "kernels": {"demo.ops.matmul": {"M=1|N=1|K=1|f32|f32":
      {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 1}, "num_warps": 8, "num_stages": 3,
       "equivalent": [{"kwargs": {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "SPLIT_K": 1}, "num_warps": 4, "num_stages": 4}]}}},
      "nondeterministic": {"demo.ops.matmul": [")" +
                pinned + R"(", ")" + other + R"("]}})");
  const std::string file = path(dir, "tables/sm90.json");
  const auto validated = run_cli({"table", "validate", file});
  BOOST_TEST(validated.code == 1);
  BOOST_TEST(validated.out.find("contradiction: " + file +
                                ": kernel demo.ops.matmul [M=1|N=1|K=1|f32|f32]: pinned config " +
                                pinned + " is also listed as nondeterministic") !=
             std::string::npos);
  BOOST_TEST(validated.out.find("equivalent config " + other) != std::string::npos);
  BOOST_TEST(validated.out.find("2 contradiction(s)") != std::string::npos);
  const auto chosen =
      run_cli({"choose", "--candidates", kCandidates, "--table", path(dir, "tables"), "--arch",
               "sm90", "--kernel", "demo.ops.matmul", "--key", "M=1|N=1|K=1|f32|f32", "--explain"});
  BOOST_TEST(chosen.code == 0);
  BOOST_TEST(chosen.out.find("entry matches candidate 0, which the same table lists as "
                             "nondeterministic: contradictory, skipped") != std::string::npos);
  BOOST_TEST(chosen.out.find("(table)") == std::string::npos);  // the fallback rules decided
  const auto json = nlohmann::json::parse(
      run_cli({"choose", "--candidates", kCandidates, "--table", path(dir, "tables"), "--arch",
               "sm90", "--kernel", "demo.ops.matmul", "--key", "M=1|N=1|K=1|f32|f32", "--json"})
          .out);
  BOOST_TEST(json["reason"] == "min_cost");
  BOOST_TEST(json["signature"] != pinned);
}

BOOST_AUTO_TEST_CASE(diff_reports_added_removed_changed_and_exits_1) {
  TempDir dir;
  dir.write("a.json",
            R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3},
                                            "M=2": {"num_warps": 4, "num_stages": 3}}}})");
  dir.write("b.json",
            R"({"arch": "sm90", "kernels": {"k": {"M=2": {"num_warps": 8, "num_stages": 3},
                                            "M=3": {"num_warps": 4, "num_stages": 3}}}})");
  const auto result = run_cli({"table", "diff", path(dir, "a.json"), path(dir, "b.json")});
  BOOST_TEST(result.code == 1);
  BOOST_TEST(result.out ==
             "removed: k [M=1] ;warps=4;stages=3\n"
             "changed: k [M=2] ;warps=4;stages=3 -> ;warps=8;stages=3\n"
             "added:   k [M=3] ;warps=4;stages=3\n"
             "3 difference(s)\n");
  BOOST_TEST(run_cli({"table", "diff", path(dir, "a.json"), path(dir, "a.json")}).code == 0);
  const auto json = run_cli({"table", "diff", "--json", path(dir, "a.json"), path(dir, "b.json")});
  BOOST_TEST(json.code == 1);
  BOOST_TEST(nlohmann::json::parse(json.out) ==
             nlohmann::json::parse(
                 R"({"added": [{"kernel": "k", "key": "M=3", "after": ";warps=4;stages=3"}],
      "removed": [{"kernel": "k", "key": "M=1", "before": ";warps=4;stages=3"}],
      "changed": [{"kernel": "k", "key": "M=2", "before": ";warps=4;stages=3", "after": ";warps=8;stages=3",
                   "changed_fields": ["config"], "same_config": false}]})"));
}

BOOST_AUTO_TEST_CASE(diff_reports_newly_flagged_pinned_configs_and_changed_identities) {
  // Same entries, but B flags the config A pins and names other code: the two
  // tables launch different configs, so they are not "identical entries".
  TempDir dir;
  dir.write("a.json", R"({"arch": "sm90", "identities": {"k": "triton:aaa"},
      "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3}}}})");
  dir.write("b.json", R"({"arch": "sm90", "identities": {"k": "triton:bbb"},
      "nondeterministic": {"k": [";warps=4;stages=3"]},
      "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3}}}})");
  const auto result = run_cli({"table", "diff", path(dir, "a.json"), path(dir, "b.json")});
  BOOST_TEST(result.code == 1);
  BOOST_TEST(result.out.find("nondeterministic: k +;warps=4;stages=3  (the second table skips "
                             "what the first pins at [M=1]: they launch different configs)") !=
                 std::string::npos,
             result.out);
  BOOST_TEST(result.out.find("identity: k triton:aaa -> triton:bbb") != std::string::npos);
  BOOST_TEST(result.out.find("2 difference(s)") != std::string::npos);
  const auto json = nlohmann::json::parse(
      run_cli({"table", "diff", "--json", path(dir, "a.json"), path(dir, "b.json")}).out);
  BOOST_TEST(json["nondeterministic"][0]["pinned_now_flagged"] ==
             nlohmann::json::parse(R"(["M=1"])"));
  BOOST_TEST(json["identities"][0]["after"] == "triton:bbb");
  // The reverse drops the flag: still a difference, nothing newly skipped.
  const auto back = run_cli({"table", "diff", path(dir, "b.json"), path(dir, "a.json")});
  BOOST_TEST(back.code == 1);
  BOOST_TEST(back.out.find("nondeterministic: k -;warps=4;stages=3\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(diff_says_when_a_changed_entry_launches_the_same_config) {
  TempDir dir;
  dir.write("a.json",
            R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3}}}})");
  dir.write("b.json", R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3,
                          "ties": [{"num_warps": 8, "num_stages": 3}]}}}})");
  const auto result = run_cli({"table", "diff", path(dir, "a.json"), path(dir, "b.json")});
  BOOST_TEST(result.code == 1);
  BOOST_TEST(result.out.find("(same config, launches alike; only ties changed)") !=
             std::string::npos);
  const auto json = run_cli({"table", "diff", "--json", path(dir, "a.json"), path(dir, "b.json")});
  const auto changed = nlohmann::json::parse(json.out)["changed"].at(0);
  BOOST_TEST(changed["same_config"] == true);
  BOOST_TEST(changed["changed_fields"] == nlohmann::json::parse(R"(["ties"])"));
}

BOOST_AUTO_TEST_CASE(every_malformed_table_exits_2_with_one_line_and_no_output_file) {
  TempDir dir;
  const std::string binary = (run_cli({"table", "convert", kTable, path(dir, "good.tlb")}),
                              read_file(path(dir, "good.tlb")));
  std::string flipped = binary;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x40);
  dir.write("truncated.tlb", binary.substr(0, binary.size() / 2));
  dir.write("flipped.tlb", flipped);
  dir.write("shape.json", R"({"arch": "sm90", "kernels": [1]})");
  dir.write("type.json", R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": "four"}}}})");
  dir.write("float.json",
            R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": 4, "num_stages": 2.5}}}})");
  dir.write("negative.json",
            R"({"arch": "sm90", "kernels": {"k": {"*": {"kwargs": {"BLOCK_M": -64},
                                                          "num_warps": 4, "num_stages": 3}}}})");
  dir.write("range.json",
            R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": 4294967296}}}})");
  dir.write("version.json", R"({"arch": "sm90", "format_version": 7, "kernels": {}})");
  dir.write("huge.json",
            R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": 1e400, "num_stages": 3}}}})");
  dir.write("empty.json", "");
  dir.write("truncated.json", R"({"arch": "sm90", "kern)");
  std::filesystem::create_directories(dir.path() / "folder.json");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"truncated.tlb", "binary table without a checksum"},
      {"shape.json", "kernels: expected an object"},
      {"type.json", "num_warps: expected an integer"},
      {"float.json", "num_stages: expected an integer"},
      {"negative.json", "BLOCK_M: -64 is out of range"},
      {"range.json", "num_warps: 4294967296 is out of range"},
      {"version.json", "format_version 7 is newer"},
      {"huge.json", "kernels.k.*.num_warps: number out of range"},
      {"empty.json", "empty file"},
      {"truncated.json", "not valid JSON"},
      {"folder.json", "is a directory"},
      {"missing.json", "no such file"}};
  for (const auto& [name, expected] : cases) {
    for (const std::string out : {"out.json", "out.tlb"}) {
      const auto result = run_cli({"table", "convert", path(dir, name), path(dir, out)});
      BOOST_TEST_INFO(name << " -> " << result.err);
      BOOST_TEST(result.code == 2);
      BOOST_TEST(one_line(result.err));
      BOOST_TEST(result.err.find(name) != std::string::npos);
      BOOST_TEST(result.err.find(expected) != std::string::npos);
      BOOST_TEST(!std::filesystem::exists(dir.path() / out));
    }
  }
  // A bit flip is caught, or the table is still well-formed: never a crash.
  const auto flip = run_cli({"table", "show", path(dir, "flipped.tlb")});
  BOOST_TEST((flip.code == 0 || (flip.code == 2 && one_line(flip.err))));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(record_commands)

BOOST_AUTO_TEST_CASE(merge_writes_a_table_whatever_the_file_order) {
  TempDir dir;
  write_records(dir);
  const auto forward = run_cli({"merge", path(dir, "rec.rank0.json"), path(dir, "rec.rank1.json"),
                                "-o", path(dir, "a.json")});
  BOOST_TEST_INFO(forward.err);
  BOOST_TEST(forward.code == 0);
  BOOST_TEST(forward.out.find("1 key(s) where ranks disagreed") != std::string::npos);
  run_cli({"merge", path(dir, "rec.rank1.json"), path(dir, "rec.rank0.json"), "-o",
           path(dir, "b.json")});
  BOOST_TEST(read_file(path(dir, "a.json")) == read_file(path(dir, "b.json")));
  const auto table = nlohmann::json::parse(read_file(path(dir, "a.json")));
  // 1:1 on M=1; rank 0's timings favour BLOCK_M=128.
  BOOST_TEST(table["kernels"]["pkg.mm"]["M=1"]["kwargs"]["BLOCK_M"] == 128);
  BOOST_TEST(table["provenance"]["device_name"] == "H200");
  // The merged table pins the winner.
  const auto choice = run_cli({"choose", "--candidates", kCandidates, "--kernel", "pkg.mm", "--key",
                               "M=1", "--table", path(dir, "a.json"), "--json"});
  BOOST_TEST(choice.code == 2);  // pkg.mm is not in the example manifest: said clearly
  BOOST_TEST(choice.err.find("no kernel 'pkg.mm'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(merge_to_binary_and_bad_records) {
  TempDir dir;
  write_records(dir);
  BOOST_TEST(run_cli({"merge", path(dir, "rec.rank0.json"), "-o", path(dir, "t.tlb")}).code == 0);
  BOOST_TEST(run_cli({"table", "show", path(dir, "t.tlb")}).code == 0);
  dir.write("bad.rank0.json", R"({"sm90": {"k": {"*": {"num_warps": true}}}})");
  const auto bad = run_cli({"merge", path(dir, "bad.rank0.json"), "-o", path(dir, "x.json")});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(one_line(bad.err));
  BOOST_TEST(bad.err.find("bad.rank0.json: sm90.k[\"*\"].num_warps: expected an integer") !=
             std::string::npos);
  BOOST_TEST(!std::filesystem::exists(dir.path() / "x.json"));
}

BOOST_AUTO_TEST_CASE(merge_of_one_file_twice_or_two_files_of_one_rank_exits_2) {
  TempDir dir;
  write_records(dir);
  const auto twice =
      run_cli({"merge", path(dir, "rec.rank0.json"), path(dir, "rec.rank1.json"),
               dir.path().string() + "/./rec.rank0.json", "-o", path(dir, "x.json")});
  BOOST_TEST(twice.code == 2);
  BOOST_TEST(one_line(twice.err));
  BOOST_TEST(twice.err.find("the same file as") != std::string::npos);
  std::filesystem::create_directories(dir.path() / "copy");
  std::filesystem::copy_file(dir.path() / "rec.rank1.json", dir.path() / "copy/rec.rank1.json");
  const auto one_rank = run_cli({"merge", path(dir, "rec.rank1.json"),
                                 path(dir, "copy/rec.rank1.json"), "-o", path(dir, "x.json")});
  BOOST_TEST(one_rank.code == 2);
  BOOST_TEST(one_rank.err.find("are both rank 1") != std::string::npos);
  BOOST_TEST(!std::filesystem::exists(dir.path() / "x.json"));
}

BOOST_AUTO_TEST_CASE(a_json_number_beyond_a_double_exits_2_naming_file_and_path) {
  TempDir dir;
  dir.write("r.rank0.json", R"({"sm90": {"k": {"*": {"num_warps": 4, "num_stages": -1e400}}}})");
  const auto result = run_cli({"merge", path(dir, "r.rank0.json"), "-o", path(dir, "x.json")});
  BOOST_TEST(result.code == 2);
  BOOST_TEST(one_line(result.err));
  BOOST_TEST(result.err.find("r.rank0.json: sm90.k.*.num_stages: number out of range") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(report_shows_votes_and_timings_for_disagreeing_keys) {
  TempDir dir;
  write_records(dir);
  const auto result = run_cli({"report", path(dir, "rec.rank0.json"), path(dir, "rec.rank1.json")});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("1 key(s) where ranks chose differently:\nsm90|pkg.mm|M=1\n") == 0u);
  BOOST_TEST(result.out.find("1 vote(s): BLOCK_M=128;warps=8;stages=3  timed 2..2 ms") !=
             std::string::npos);
  BOOST_TEST(result.out.find("-> kept BLOCK_M=128;warps=8;stages=3 (timing)") != std::string::npos);
  const auto json = nlohmann::json::parse(
      run_cli({"report", "--json", path(dir, "rec.rank0.json"), path(dir, "rec.rank1.json")}).out);
  BOOST_TEST(json.size() == 1u);
  BOOST_TEST(json[0]["key"] == "M=1");
  const auto agreed = run_cli({"report", path(dir, "rec.rank1.json")});
  BOOST_TEST(agreed.out == "all ranks chose alike for every key\n");
}

BOOST_AUTO_TEST_CASE(timings_convert_round_trips_and_merge_reads_binary_sidecars) {
  TempDir dir;
  write_records(dir);
  BOOST_TEST(
      run_cli({"timings", "convert", path(dir, "rec.rank0.timings.json"), path(dir, "t.tlrt")})
          .code == 0);
  BOOST_TEST(run_cli({"timings", "convert", path(dir, "t.tlrt"), path(dir, "a.json")}).code == 0);
  BOOST_TEST(run_cli({"timings", "convert", path(dir, "a.json"), path(dir, "b.json")}).code == 0);
  BOOST_TEST(read_file(path(dir, "a.json")) == read_file(path(dir, "b.json")));
  // Swap the JSON sidecar for the binary one: the merge is the same.
  run_cli({"merge", path(dir, "rec.rank0.json"), path(dir, "rec.rank1.json"), "-o",
           path(dir, "json.json")});
  std::filesystem::rename(path(dir, "t.tlrt"), path(dir, "rec.rank0.timings.tlrt"));
  std::filesystem::remove(path(dir, "rec.rank0.timings.json"));
  run_cli({"merge", path(dir, "rec.rank0.json"), path(dir, "rec.rank1.json"), "-o",
           path(dir, "bin.json")});
  BOOST_TEST(read_file(path(dir, "json.json")) == read_file(path(dir, "bin.json")));
  // A glob `rec.rank*` names the binary sidecar too: it is read beside its record only.
  const auto glob =
      run_cli({"merge", path(dir, "rec.rank0.json"), path(dir, "rec.rank0.timings.tlrt"),
               path(dir, "rec.rank1.json"), "-o", path(dir, "glob.json")});
  BOOST_TEST_INFO(glob.err);
  BOOST_TEST(glob.code == 0);
  BOOST_TEST(read_file(path(dir, "glob.json")) == read_file(path(dir, "bin.json")));
  dir.write("bad.tlrt", std::string("\x10\x00\x00\x00TLRT", 8) + "garbage");
  const auto bad = run_cli({"timings", "convert", path(dir, "bad.tlrt"), path(dir, "c.json")});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err.find("bad.tlrt: binary timing sidecar without a checksum") !=
             std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(log_commands)

BOOST_AUTO_TEST_CASE(verify_agrees_on_equal_and_disjoint_logs) {
  TempDir dir;
  dir.write("c.rank0.json",
            R"({"rank": 0, "entries": {"sm90|k|M=1": "A;pinned", "sm90|k|M=2": "B;pinned"}})");
  dir.write("c.rank1.json",
            R"({"rank": 1, "entries": {"sm90|k|M=1": "A;pinned", "sm90|k|M=3": "C;pinned"}})");
  const auto result = run_cli({"verify", path(dir, "c.rank0.json"), path(dir, "c.rank1.json")});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("agreed: 3 kernel/shape keys across 2 rank(s)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(verify_reports_conflicts_like_the_run_time_check_and_exits_1) {
  TempDir dir;
  for (int r = 0; r < 3; ++r)
    dir.write("c.rank" + std::to_string(r) + ".json", "{\"rank\": " + std::to_string(r) +
                                                          ", \"entries\": {\"sm90|k|M=1\": \"" +
                                                          (r == 1 ? "B" : "A") + ";pinned\"}}");
  const auto result = run_cli(
      {"verify", path(dir, "c.rank0.json"), path(dir, "c.rank1.json"), path(dir, "c.rank2.json")});
  BOOST_TEST(result.code == 1);
  BOOST_TEST(result.out.find("sm90|k|M=1: 'A;pinned' on ranks 0,2; 'B;pinned' on rank 1") !=
             std::string::npos);
  const auto json = run_cli({"verify", "--json", path(dir, "c.rank0.json"),
                             path(dir, "c.rank1.json"), path(dir, "c.rank2.json")});
  BOOST_TEST(json.code == 1);
  const auto parsed = nlohmann::json::parse(json.out);
  BOOST_TEST(parsed["agreed"] == false);
  BOOST_TEST(parsed["conflicts"][0]["ranks_by_value"]["B;pinned"] == nlohmann::json::parse("[1]"));
  BOOST_TEST(parsed["ranks"].size() == 3u);
  const auto twice = run_cli({"verify", path(dir, "c.rank0.json"), path(dir, "c.rank0.json")});
  BOOST_TEST(twice.code == 2);
  BOOST_TEST(twice.err.find("rank 0 appears in two logs") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(verify_fails_closed_on_no_keys_and_on_one_rank_unless_told) {
  // The forgotten TUNELOCK_MODE: every rank logged nothing. No conflict among
  // nothing is not agreement.
  TempDir dir;
  dir.write("forgot.rank0.json", R"({"rank": 0, "entries": {}})");
  dir.write("forgot.rank1.json", R"({"rank": 1, "entries": {}})");
  const auto empty =
      run_cli({"verify", path(dir, "forgot.rank0.json"), path(dir, "forgot.rank1.json")});
  BOOST_TEST(empty.code == 1);
  BOOST_TEST(empty.out.find("verify: 0 kernel/shape keys in 2 log(s): nothing was locked") !=
             std::string::npos);
  BOOST_TEST(empty.out.find("agreed") == std::string::npos);
  BOOST_TEST(run_cli({"verify", "--allow-empty", path(dir, "forgot.rank0.json"),
                      path(dir, "forgot.rank1.json")})
                 .code == 0);
  const auto json =
      run_cli({"verify", "--json", path(dir, "forgot.rank0.json"), path(dir, "forgot.rank1.json")});
  BOOST_TEST(json.code == 1);
  const auto parsed = nlohmann::json::parse(json.out);
  BOOST_TEST(parsed["agreed"] == false);
  BOOST_TEST(parsed["keys"] == 0);
  BOOST_TEST(parsed["refused"].get<std::string>().find("nothing was locked") != std::string::npos);
  // One rank's log has nobody to agree with.
  dir.write("run.rank0.json", R"({"rank": 0, "entries": {"sm90|k|M=1": "A;pinned"}})");
  const auto single = run_cli({"verify", path(dir, "run.rank0.json")});
  BOOST_TEST(single.code == 1);
  BOOST_TEST(single.out.find("only one rank's log: nothing to compare it with") !=
             std::string::npos);
  const auto alone = run_cli({"verify", "--single", path(dir, "run.rank0.json")});
  BOOST_TEST(alone.code == 0);
  BOOST_TEST(alone.out.find("agreed: 1 kernel/shape keys across 1 rank(s)") != std::string::npos);
  // A conflict is still a conflict under either flag.
  dir.write("run.rank1.json", R"({"rank": 1, "entries": {"sm90|k|M=1": "B;pinned"}})");
  BOOST_TEST(run_cli({"verify", "--single", "--allow-empty", path(dir, "run.rank0.json"),
                      path(dir, "run.rank1.json")})
                 .code == 1);
}

BOOST_AUTO_TEST_CASE(verify_takes_a_folder_of_choice_logs_as_merge_takes_records) {
  TempDir dir;
  dir.write("logs/c.rank0.json", R"({"rank": 0, "entries": {"sm90|k|M=1": "A;pinned"}})");
  dir.write("logs/c.rank1.json", R"({"rank": 1, "entries": {"sm90|k|M=1": "A;pinned"}})");
  // A record in the same folder shares the naming; its bytes say it is no log.
  dir.write("logs/rec.rank0.json", R"({"sm90": {"k": {"M=1": {"num_warps": 4}}}})");
  const auto result = run_cli({"verify", path(dir, "logs")});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("agreed: 1 kernel/shape keys across 2 rank(s)") != std::string::npos);
  dir.write("none/notes.txt", "nothing here");
  const auto none = run_cli({"verify", path(dir, "none")});
  BOOST_TEST(none.code == 2);
  BOOST_TEST(none.err.find("none: a folder with no choice logs") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(digest_matches_the_run_time_digest_and_catches_edits) {
  TempDir dir;
  tunelock::Notices notices;
  tunelock::Runtime runtime(0, notices);
  runtime.log_choice("sm90", {"pkg", "k"}, "M=1", tunelock::make_config({{"BLOCK", 64}}),
                     tunelock::ChoiceOrigin::pinned);
  runtime.dump_choice_log(dir.path() / "log");
  const auto result = run_cli({"digest", path(dir, "log.rank0.json")});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out == runtime.choice_digest() + "\n");
  std::string text = read_file(path(dir, "log.rank0.json"));
  text.replace(text.find("BLOCK=64"), 8, "BLOCK=32");
  dir.write("edited.rank0.json", text);
  const auto edited = run_cli({"digest", path(dir, "edited.rank0.json")});
  BOOST_TEST(edited.code == 2);
  BOOST_TEST(edited.err.find("does not match its entries") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(verify_refuses_a_log_edited_after_it_was_written) {
  // An edit that turns a conflict into agreement must not pass: the stored
  // digest gives it away.
  TempDir dir;
  tunelock::Notices notices;
  for (int rank : {0, 1}) {
    tunelock::Runtime runtime(rank, notices);
    runtime.log_choice("sm90", {"pkg", "k"}, "M=1",
                       tunelock::make_config({{"BLOCK", rank == 0 ? 64 : 32}}),
                       tunelock::ChoiceOrigin::pinned);
    runtime.dump_choice_log(dir.path() / "log");
  }
  BOOST_TEST(run_cli({"verify", path(dir, "log.rank0.json"), path(dir, "log.rank1.json")}).code ==
             1);
  std::string text = read_file(path(dir, "log.rank1.json"));
  text.replace(text.find("BLOCK=32"), 8, "BLOCK=64");
  dir.write("log.rank1.json", text);
  const auto edited = run_cli({"verify", path(dir, "log.rank0.json"), path(dir, "log.rank1.json")});
  BOOST_TEST(edited.code == 2);
  BOOST_TEST(edited.err.find("log.rank1.json: digest: stored") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(choose_explain)

BOOST_AUTO_TEST_CASE(explain_lists_costs_and_what_each_rule_found) {
  const auto result = run_cli(
      {"choose", "--candidates", kCandidates, "--table", kExamples + "/tables", "--arch", "sm90",
       "--kernel", "demo.ops.matmul", "--key", "M=8192|N=1024|K=8192|bf16|bf16", "--explain"});
  BOOST_TEST(result.code == 0);
  for (const std::string& line :
       {std::string("  [2] BLOCK_K=32,BLOCK_M=64,BLOCK_N=64,SPLIT_K=4;warps=4;stages=3  cost "
                    "(393216, 4)  <- chosen\n"),
        std::string("  table sm90 demo.ops.matmul [M=8192|N=1024|K=8192|bf16|bf16]: stale entry "),
        std::string("  table sm90 demo.ops.matmul [*]: no entry\n"),
        std::string("  table sm90 matmul [*]: entry matches candidate 2, decides\n"),
        std::string("decision: candidate 2 "
                    "BLOCK_K=32,BLOCK_M=64,BLOCK_N=64,SPLIT_K=4;warps=4;stages=3 (table*)\n")}) {
    BOOST_TEST_INFO(line);
    BOOST_TEST(result.out.find(line) != std::string::npos);
  }
  const auto untuned = run_cli({"choose", "--candidates", kCandidates, "--kernel",
                                "demo.ops.softmax", "--key", "N=1", "--explain", "--json"});
  const auto json = nlohmann::json::parse(untuned.out);
  BOOST_TEST(json["explanation"] ==
             nlohmann::json::parse(R"(["table: none for unknown", "block sizes: none given",
      "on_miss min_cost: candidate 1 is the cheapest (ties go to the earlier), decides"])"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(preview_command)

// One run of two ranks over the example kernels: rmsnorm has an exact entry
// (under its bare name), matmul falls to "*", softmax to the cheapest.
void write_run(const TempDir& dir) {
  dir.write("run.rank0.json", R"({"rank": 0, "entries": {
    "sm90|demo.ops.rmsnorm|N=8192|bf16": "BLOCK_SIZE=512;warps=4;stages=1;timed",
    "sm90|demo.ops.matmul|M=1|N=1|K=1|f32|f32": "BLOCK_K=32,BLOCK_M=64,BLOCK_N=64,SPLIT_K=4;warps=4;stages=3;timed",
    "sm90|demo.ops.softmax|N=4096|f32": "BLOCK_SIZE=1024;warps=8;stages=2;timed"}})");
  dir.write("run.rank1.json", R"({"rank": 1, "entries": {
    "sm90|demo.ops.rmsnorm|N=8192|bf16": "BLOCK_SIZE=1024;warps=8;stages=1;timed"}})");
}

BOOST_AUTO_TEST_CASE(says_what_pinned_with_the_table_would_change) {
  TempDir dir;
  write_run(dir);
  const auto result = run_cli({"preview", path(dir, "run.rank0.json"), path(dir, "run.rank1.json"),
                               "--table", kTable, "--candidates", kCandidates});
  BOOST_TEST(result.code == 0);
  BOOST_TEST(result.out.find("changes sm90|demo.ops.rmsnorm|N=8192|bf16\n"
                             "    ran    BLOCK_SIZE=1024;warps=8;stages=1 on rank 1\n"
                             "    ran    BLOCK_SIZE=512;warps=4;stages=1 on rank 0\n"
                             "    pinned BLOCK_SIZE=1024;warps=8;stages=1 (table)\n") !=
             std::string::npos);
  BOOST_TEST(result.out.find("warning: no tuned config for kernel 'demo.ops.softmax' on sm90") !=
             std::string::npos);
  BOOST_TEST(result.out.find("3 logged key(s): 1 by the table's exact key, 1 by '*', 0 by block "
                             "sizes, 1 by the cheapest fallback, 0 not in the manifest; 1 "
                             "choice(s) would change under pinned") != std::string::npos);
  const auto json =
      nlohmann::json::parse(run_cli({"preview", path(dir, "run.rank0.json"), "--table", kTable,
                                     "--candidates", kCandidates, "--json"})
                                .out);
  BOOST_TEST(json["summary"]["changes"] == 1);  // rank 0 alone ran 512 for rmsnorm
  BOOST_TEST(json["keys"].size() == 3u);
}

BOOST_AUTO_TEST_CASE(bad_input_names_the_file) {
  TempDir dir;
  write_run(dir);
  dir.write("bad.json", R"({"rank": 0, "entries": {"k": 5}})");
  const auto bad = run_cli({"preview", path(dir, "bad.json"), "--candidates", kCandidates});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err.find("bad.json: entries[\"k\"]") != std::string::npos);
  const auto twice = run_cli({"preview", path(dir, "run.rank0.json"), path(dir, "run.rank0.json"),
                              "--candidates", kCandidates});
  BOOST_TEST(twice.code == 2);
  BOOST_TEST(twice.err.find("rank 0 appears in two logs of one run") != std::string::npos);
  const auto no_manifest = run_cli({"preview", path(dir, "run.rank0.json")});
  BOOST_TEST(no_manifest.code == 2);
}

BOOST_AUTO_TEST_CASE(log_convert_round_trips_through_binary) {
  TempDir dir;
  write_run(dir);
  BOOST_TEST(run_cli({"log", "convert", path(dir, "run.rank0.json"), path(dir, "r.tlcl")}).code ==
             0);
  BOOST_TEST(read_file(path(dir, "r.tlcl")).substr(4, 4) == "TLCL");
  BOOST_TEST(run_cli({"log", "convert", path(dir, "r.tlcl"), path(dir, "back.json")}).code == 0);
  const auto direct = run_cli({"digest", path(dir, "run.rank0.json")});
  BOOST_TEST(run_cli({"digest", path(dir, "back.json")}).out == direct.out);
  BOOST_TEST(run_cli({"digest", path(dir, "r.tlcl")}).out == direct.out);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cli_conventions)

BOOST_AUTO_TEST_CASE(version_names_the_program_and_typos_get_the_nearest_word) {
  const auto version = run_cli({"--version"});
  BOOST_TEST(version.code == 0);
  BOOST_TEST(version.out.starts_with("tunelock "));
  const auto command = run_cli({"mrege", "x"});
  BOOST_TEST(command.code == 2);
  BOOST_TEST(command.err.find("unknown command 'mrege' (did you mean 'merge'?)") !=
             std::string::npos);
  const auto flag = run_cli({"choose", "--tabel", "x"});
  BOOST_TEST(flag.code == 2);
  BOOST_TEST(flag.err.find("'--tabel' (did you mean '--table'?)") != std::string::npos);
  const auto far = run_cli({"zzzzzzzz"});
  BOOST_TEST(far.err.find("did you mean") == std::string::npos);  // nothing close: no guess
}

BOOST_AUTO_TEST_CASE(an_unknown_option_is_named_first_and_errors_point_to_the_commands_help) {
  const auto short_version = run_cli({"-V"});
  BOOST_TEST(short_version.code == 0);
  BOOST_TEST(short_version.out.starts_with("tunelock "));
  const auto bogus = run_cli({"--bogus"});
  BOOST_TEST(bogus.code == 2);
  BOOST_TEST(bogus.err.find("unknown option '--bogus'") != std::string::npos);
  BOOST_TEST(bogus.err.find("(see tunelock --help)") != std::string::npos);
  // Named before "--output is required", with the command's own help.
  const auto merge = run_cli({"merge", "--bogus", "x"});
  BOOST_TEST(merge.code == 2);
  BOOST_TEST(merge.err.find("unknown option '--bogus'") != std::string::npos);
  BOOST_TEST(merge.err.find("required") == std::string::npos);
  BOOST_TEST(merge.err.find("(see tunelock merge --help)") != std::string::npos);
  const auto nested = run_cli({"table", "show"});
  BOOST_TEST(nested.code == 2);
  BOOST_TEST(nested.err.find("(see tunelock table show --help)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(log_convert_says_what_it_wrote_and_policy_shows_every_documented_field) {
  TempDir dir;
  const auto log = dir.write("run.rank0.json",
                             R"({"rank": 0, "entries": {"sm90|demo.ops.mm|M=1": "BLOCK=64"}})");
  const auto converted = run_cli({"log", "convert", log.string(), path(dir, "run.rank0.tlcl")});
  BOOST_TEST_INFO("stderr: " << converted.err);
  BOOST_TEST(converted.code == 0);
  BOOST_TEST(converted.out.starts_with("wrote " + path(dir, "run.rank0.tlcl")));
  const auto policy = run_cli({"policy"}, {{"TUNELOCK_DETERMINISTIC", "1"}});
  BOOST_TEST(policy.out.find("deterministic:    true") != std::string::npos);
  BOOST_TEST(policy.out.find("intercepts") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_file_given_to_the_wrong_command_is_named_as_what_it_is) {
  TempDir dir;
  write_records(dir);
  const std::string record = path(dir, "rec.rank0.json");
  const auto log = dir.write("logs/run.rank0.json",
                             R"({"rank": 0, "entries": {"sm90|pkg.mm|M=1": "BLOCK_M=64;pinned"}})");
  const auto audit = dir.write("run.rank0.audit.json",
                               R"({"format_version": 1, "rank": 0, "device": {}, "entries": []})");
  struct Case {
    std::vector<std::string> args;
    std::string is, not_a, reader;
  };
  const std::vector<Case> cases{
      {{"merge", log.string(), "-o", path(dir, "t.json")},
       "JSON choice log",
       "record file",
       "merge and report read the record files"},
      {{"merge", (dir.path() / "logs").string(), "-o", path(dir, "t.json")},
       "JSON choice log",
       "record file",
       "TUNELOCK_RECORD=PREFIX"},
      {{"merge", kTable, "-o", path(dir, "t.json")}, "JSON table", "record file", "merge"},
      {{"report", log.string()}, "JSON choice log", "record file", "merge and report"},
      {{"verify", record}, "JSON record file", "choice log", "TUNELOCK_CHOICE_LOG=PREFIX"},
      {{"digest", record}, "JSON record file", "choice log", "verify, digest"},
      {{"verify", kTable}, "JSON table", "choice log", "verify"},
      {{"table", "audit", record}, "JSON record file", "audit file", "table audit reads"},
      {{"table", "audit", log.string()}, "JSON choice log", "audit file", "TUNELOCK_MODE=audit"},
  };
  for (const Case& c : cases) {
    const auto result = run_cli(c.args);
    BOOST_TEST_INFO(c.args[0] << " " << c.args[1] << ": " << result.err);
    BOOST_TEST(result.code == 2);
    BOOST_TEST(result.err.find(" is a " + c.is + ", not a " + c.not_a + ": ") != std::string::npos);
    BOOST_TEST(result.err.find(c.reader) != std::string::npos);
  }
  // The right kind still reads.
  BOOST_TEST(run_cli({"verify", "--single", log.string()}).code == 0);
  BOOST_TEST(run_cli({"table", "audit", audit.string()}).code != 2);
}

BOOST_AUTO_TEST_CASE(merge_takes_a_directory_or_a_list_file) {
  TempDir dir;
  write_records(dir);
  const auto from_files = run_cli({"merge", path(dir, "rec.rank0.json"),
                                   path(dir, "rec.rank1.json"), "-o", path(dir, "files.json")});
  BOOST_TEST_REQUIRE(from_files.code == 0);
  const auto from_dir = run_cli({"merge", dir.path().string(), "-o", path(dir, "dir.json")});
  BOOST_TEST_REQUIRE(from_dir.code == 0);
  dir.write("list", path(dir, "rec.rank0.json") + "\n\n" + path(dir, "rec.rank1.json") + "\n");
  const auto from_list = run_cli({"merge", "@" + path(dir, "list"), "-o", path(dir, "list.json")});
  BOOST_TEST_REQUIRE(from_list.code == 0);
  BOOST_TEST(read_file(path(dir, "dir.json")) == read_file(path(dir, "files.json")));
  BOOST_TEST(read_file(path(dir, "list.json")) == read_file(path(dir, "files.json")));
  const auto missing =
      run_cli({"merge", "@" + path(dir, "no-such-list"), "-o", path(dir, "x.json")});
  BOOST_TEST(missing.code == 2);
  BOOST_TEST(missing.err.find("no-such-list") != std::string::npos);
  TempDir empty;
  const auto nothing = run_cli({"merge", empty.path().string(), "-o", path(dir, "y.json")});
  BOOST_TEST(nothing.code == 2);
  BOOST_TEST(nothing.err.find("a directory with no record files") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_config_one_rank_timed_twice_counts_once) {
  // Rank 0's autotuner lists B twice; 1-1 votes go to the faster median over
  // the ranks: A (1.5, 2.0) against B (1.0, 3.0), one timing per rank each.
  TempDir dir;
  const std::string a = R"({"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 3})";
  const std::string b = R"({"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3})";
  dir.write("rec.rank0.json", R"({"sm90": {"pkg.mm": {"M=1": )" + b + "}}}");
  dir.write("rec.rank1.json", R"({"sm90": {"pkg.mm": {"M=1": )" + a + "}}}");
  const std::string sa = "BLOCK_M=128;warps=8;stages=3", sb = "BLOCK_M=64;warps=4;stages=3";
  auto sidecar = [&](int rank, const std::string& timings) {
    dir.write("rec.rank" + std::to_string(rank) + ".timings.json",
              R"({"format_version": 1, "rank": )" + std::to_string(rank) +
                  R"(, "device": {}, "timings": {"sm90": {"pkg.mm": {"M=1": [)" + timings +
                  "]}}}}");
  };
  sidecar(0, R"({"signature": ")" + sa + R"(", "median_ms": 2.0}, {"signature": ")" + sb +
                 R"(", "median_ms": 1.0}, {"signature": ")" + sb + R"(", "median_ms": 1.0})");
  sidecar(1, R"({"signature": ")" + sa + R"(", "median_ms": 1.5}, {"signature": ")" + sb +
                 R"(", "median_ms": 3.0})");
  BOOST_TEST_REQUIRE(run_cli({"merge", dir.path().string(), "-o", path(dir, "t.json")}).code == 0);
  const auto table = nlohmann::json::parse(read_file(path(dir, "t.json")));
  BOOST_TEST(table["kernels"]["pkg.mm"]["M=1"]["kwargs"]["BLOCK_M"] == 128);  // A, not B
  const auto report = run_cli({"report", dir.path().string()});
  BOOST_TEST(report.out.find("over 3 rank(s)") == std::string::npos, report.out);
  BOOST_TEST(report.out.find("over 2 rank(s)") != std::string::npos, report.out);
}

BOOST_AUTO_TEST_CASE(merge_refuses_an_output_that_is_one_of_its_inputs) {
  TempDir dir;
  write_records(dir);
  const std::string rank0 = read_file(path(dir, "rec.rank0.json"));
  const std::string sidecar = read_file(path(dir, "rec.rank0.timings.json"));
  for (const std::string& output :
       {path(dir, "rec.rank1.json"), path(dir, "rec.rank0.timings.json"),
        dir.path().string() + "/./rec.rank0.json"}) {
    const auto result = run_cli({"merge", dir.path().string(), "-o", output});
    BOOST_TEST_INFO(output << ": " << result.err);
    BOOST_TEST(result.code == 2);
    BOOST_TEST(result.err.find("the output is one of the merge's inputs") != std::string::npos);
  }
  // Nothing was replaced.
  BOOST_TEST(read_file(path(dir, "rec.rank0.json")) == rank0);
  BOOST_TEST(read_file(path(dir, "rec.rank0.timings.json")) == sidecar);
  BOOST_TEST(run_cli({"merge", dir.path().string(), "-o", path(dir, "table.json")}).code == 0);
}

BOOST_AUTO_TEST_CASE(a_table_is_never_written_under_another_archs_name) {
  TempDir dir;
  write_records(dir);  // sm90 records
  const auto wrong = run_cli({"merge", dir.path().string(), "-o", path(dir, "host.json")});
  BOOST_TEST(wrong.code == 2);
  BOOST_TEST(wrong.err.find("the table is for sm90, but the search reads a file of this name as "
                            "host's table") != std::string::npos);
  BOOST_TEST(!std::filesystem::exists(dir.path() / "host.json"));
  const auto convert = run_cli({"table", "convert", kTable, path(dir, "sm100.tlb")});
  BOOST_TEST(convert.code == 2);
  BOOST_TEST(run_cli({"merge", dir.path().string(), "-o", path(dir, "any-name.json")}).code == 0);
  BOOST_TEST(run_cli({"merge", dir.path().string(), "-o", path(dir, "sm90.tlb")}).code == 0);
}

BOOST_AUTO_TEST_CASE(repeated_block_flags_add_up_in_policy_as_in_choose) {
  const auto out = run_cli({"policy", "--block", "BLOCK_M=64", "--block", "BLOCK_N=32", "--json"});
  BOOST_TEST_REQUIRE(out.code == 0);
  BOOST_TEST(nlohmann::json::parse(out.out)["block_sizes"] ==
             nlohmann::json::parse(R"({"BLOCK_M": 64, "BLOCK_N": 32})"));
}

BOOST_AUTO_TEST_SUITE_END()
