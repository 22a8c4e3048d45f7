// What a file is, told once for every face: each kind in JSON and in
// binary form, Megatron's tables, and bytes that are empty, garbage,
// truncated or misnamed.
#include <boost/test/unit_test.hpp>

#include "error_of.hpp"

#include "temp_dir.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::contains;
using tunelock::testing::error_of;
using tunelock::testing::TempDir;

namespace {

const std::string kExamples = TUNELOCK_EXAMPLES_DIR;

std::unique_ptr<InMemoryTable> small_table() {
  auto table = std::make_unique<InMemoryTable>("sm90", Provenance{});
  table->set("pkg.mm", "M=1", TableEntry{make_config({{"BLOCK_M", 64}}, 4, 3)});
  return table;
}

RecordFile example_timings() {
  RecordFile record;
  const std::string path = kExamples + "/run/record.rank0.timings.json";
  add_timings(record, read_file(path), path);
  return record;
}

// "kind/encoding", or "unknown: <problem>", for one-line comparisons.
std::string detected(std::string_view name, std::string_view bytes) {
  const DetectedFile file = detect_file_kind(name, bytes);
  if (file.kind == FileKind::unknown) return "unknown: " + file.problem;
  return std::string(to_string(file.kind)) + "/" + std::string(to_string(file.encoding));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(file_kinds)

BOOST_AUTO_TEST_CASE(every_kind_is_told_in_json_and_in_binary_form) {
  const auto table = small_table();
  BOOST_TEST(detected("t.json", table_to_json(*table)) == "table/json");
  BOOST_TEST(detected("t.tlb", table_to_binary(*table)) == "table/binary");
  BOOST_TEST(detected("examples/tables/sm90.json", read_file(kExamples + "/tables/sm90.json")) ==
             "table/json");

  BOOST_TEST(detected("candidates.json", read_file(kExamples + "/candidates.json")) ==
             "manifest/json");
  BOOST_TEST(detected("one.json", R"({"configs": [{"num_warps": 4}]})") == "manifest/json");
  BOOST_TEST(detected("keyed.json", R"({"key": ["M"], "configs": [{"num_warps": 4}]})") ==
             "manifest/json");

  BOOST_TEST(detected("record.rank0.json", read_file(kExamples + "/run/record.rank0.json")) ==
             "record/json");
  BOOST_TEST(detected("r.json", R"({"sm90": {"pkg.mm": {"M=1": {"num_warps": 4}}}})") ==
             "record/json");

  BOOST_TEST(detected("record.rank0.timings.json",
                      read_file(kExamples + "/run/record.rank0.timings.json")) == "timings/json");
  BOOST_TEST(detected("rec.rank0.timings.tlrt", timings_to_binary(example_timings())) ==
             "timings/binary");

  const ChoiceLogFile log{2, {{"sm90|k|M=1", "A;pinned"}}, ""};
  BOOST_TEST(detected("l.rank2.json", choice_log_to_json(log)) == "choice_log/json");
  BOOST_TEST(detected("l.rank2.tlcl", choice_log_to_binary(log)) == "choice_log/binary");
  BOOST_TEST(detected("pinned-log.rank0.json",
                      read_file(kExamples + "/run/pinned-log.rank0.json")) == "choice_log/json");
}

BOOST_AUTO_TEST_CASE(bytes_decide_over_the_name_when_they_tell) {
  const auto table = small_table();
  // A binary table under a JSON name, a JSON table under a binary one.
  BOOST_TEST(detected("sm90.json", table_to_binary(*table)) == "table/binary");
  BOOST_TEST(detected("sm90.tlb", table_to_json(*table)) == "table/json");
  BOOST_TEST(detected("l.tlcl", R"({"rank": 0, "entries": {}})") == "choice_log/json");
  BOOST_TEST(detected("x.timings.json", table_to_json(*table)) == "table/json");
  BOOST_TEST(detected("x.tlb", choice_log_to_binary({0, {}, ""})) == "choice_log/binary");
}

BOOST_AUTO_TEST_CASE(the_name_decides_only_where_the_bytes_cannot_tell) {
  // A sidecar missing its "timings" is an object of objects, like a record.
  BOOST_TEST(detected("rec.rank3.timings.json", R"({"device": {}})") == "timings/json");
  BOOST_TEST(detected("rec.rank3.json", R"({"device": {}})") == "record/json");
  BOOST_TEST(detected("rec.rank3.timings.json", "{}") == "timings/json");
  BOOST_TEST(detected("rec.rank3.json", "{}") == "record/json");
  // Damaged binary files are their kind, so the reader says what is wrong.
  BOOST_TEST(detected("corrupt.tlb", "TLTBgarbage, not a table at all") == "table/binary");
  BOOST_TEST(detected("x.tlrt", "xx") == "timings/binary");
  BOOST_TEST(detected("x.tlcl", "") == "choice_log/binary");
  BOOST_TEST(contains(error_of([] { table_from_bytes("TLTBgarbage", "corrupt.tlb"); }),
                      "corrupt.tlb: not a binary tunelock table"));
}

BOOST_AUTO_TEST_CASE(a_truncated_binary_file_is_its_kind_and_its_reader_refuses_it) {
  const std::string binary = table_to_binary(*small_table());
  const std::string half = binary.substr(0, binary.size() / 2);
  BOOST_TEST(detected("t.json", half) == "table/binary");
  BOOST_TEST(contains(error_of([&] { table_from_bytes(half, "t.json"); }), "t.json: "));
  // Cut before its identifier: only a binary name still tells.
  BOOST_TEST(detected("t.tlb", binary.substr(0, 6)) == "table/binary");
  BOOST_TEST(
      detected("t.json", binary.substr(0, 6)).starts_with("unknown: t.json: not a tunelock"));
  const std::string timings = timings_to_binary(example_timings());
  BOOST_TEST(detected("t", timings.substr(0, 40)) == "timings/binary");
}

BOOST_AUTO_TEST_CASE(json_cut_short_keeps_what_it_showed) {
  BOOST_TEST(detected("truncated.json", R"({"arch": "sm90", "kernels": {"k": )") == "table/json");
  BOOST_TEST(contains(
      error_of([] { table_from_bytes(R"({"arch": "sm90", "kernels": {"k": )", "truncated.json"); }),
      "truncated.json: not valid JSON"));
  // Decided before the break: the scan stops at the first kernel's first entry.
  BOOST_TEST(detected("t.json", R"({"arch": "sm90", "kernels": {"k": {"M=1": {garbage)") ==
             "table/json");
  BOOST_TEST(detected("m.json", R"({"kernels": {"pkg.k": {"key": ["M"], garbage)") ==
             "manifest/json");
  BOOST_TEST(detected("l.json", R"({"digest": "x", "entries": {garbage)") == "choice_log/json");
}

BOOST_AUTO_TEST_CASE(empty_garbage_and_foreign_json_are_unknown_with_a_clear_problem) {
  BOOST_TEST(
      detected("empty.json", "").starts_with("unknown: empty.json: empty file; expected a table"));
  BOOST_TEST(detected("blank.json", " \n\t").starts_with("unknown: blank.json: empty file"));
  const std::string garbage("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 16);
  BOOST_TEST(
      detected("picture.png", garbage)
          .starts_with("unknown: picture.png: not a tunelock file: not valid JSON (at byte 1)"));
  BOOST_TEST(detected("array.json", "[1, 2]")
                 .starts_with("unknown: array.json: not a tunelock file: the JSON is an array, "
                              "not an object; expected a table"));
  BOOST_TEST(detected("n.json", "42")
                 .starts_with("unknown: n.json: not a tunelock file: the JSON is a number"));
  BOOST_TEST(detected("o.json", R"({"name": "x", "size": 3})")
                 .starts_with("unknown: o.json: not a tunelock file: a JSON object with none of"));
  const DetectedFile file = detect_file_kind("array.json", "[1, 2]");
  BOOST_TEST(!contains(file.problem, ": :"));
  BOOST_TEST(detected_file_to_json(file)["kind"] == "unknown");
  BOOST_TEST(detected_file_to_json(file)["problem"] == file.problem);
}

BOOST_AUTO_TEST_CASE(tables_load_by_their_bytes_and_other_kinds_are_refused_by_name) {
  TempDir dir;
  const auto table = small_table();
  // Found as `<arch>.json` but binary inside: loaded as what it is.
  dir.write("sm90.json", table_to_binary(*table));
  const std::vector<std::string> path{dir.path().string()};
  const auto found = load_table_for_arch("sm90", path, false);
  BOOST_TEST_REQUIRE(found != nullptr);
  BOOST_TEST(found->entry_count() == 1u);
  // `<arch>.tlb` is still searched first.
  dir.write("sm90.tlb", table_to_json(InMemoryTable("sm90", Provenance{})));
  BOOST_TEST(load_table_for_arch("sm90", path, false)->entry_count() == 0u);

  const auto manifest = dir.write("m.json", R"({"configs": [{"num_warps": 4}]})");
  BOOST_TEST(error_of([&] { load_table_file(manifest); }) ==
             manifest.string() +
                 ": a JSON candidate manifest, not a table; name a table file (.tlb, or JSON "
                 "with \"arch\" and \"kernels\")");
  BOOST_TEST(contains(error_of([] {
                        table_from_bytes(choice_log_to_binary({0, {}, ""}), "l.tlb");
                      }),
                      "l.tlb: a binary choice log, not a table"));
}

BOOST_AUTO_TEST_CASE(kinds_and_encodings_have_the_names_every_face_uses) {
  BOOST_TEST(to_string(FileKind::choice_log) == "choice_log");
  BOOST_TEST(to_string(FileKind::timings) == "timings");
  BOOST_TEST(to_string(FileEncoding::binary) == "binary");
  BOOST_TEST(detected_file_to_json({FileKind::record, FileEncoding::json, {}}).dump() ==
             R"({"encoding":"json","kind":"record"})");
  BOOST_TEST(describe({FileKind::timings, FileEncoding::binary, {}}) == "binary timing sidecar");
}

BOOST_AUTO_TEST_CASE(sidecar_names_are_the_ones_read_beside_their_records) {
  BOOST_TEST(is_timings_sidecar_name("out/rec.rank0.timings.json"));
  BOOST_TEST(is_timings_sidecar_name("rec.rank12.timings.tlrt"));
  BOOST_TEST(!is_timings_sidecar_name("rec.rank0.json"));
  BOOST_TEST(!is_timings_sidecar_name("timings.json.bak"));
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

boost::test_tools::assertion_result have_megatron_tables(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result result(!tunelock::testing::shared_fixtures().empty());
  result.message() << "skipped: ../shared/fixtures is absent (a user's clone has no shared data)";
  return result;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(megatron_file_kinds, *boost::unit_test::precondition(have_megatron_tables))

BOOST_AUTO_TEST_CASE(megatrons_tables_are_tables_in_either_form) {
  const auto dir = tunelock::testing::shared_fixtures() / "megatron-tables";
  for (const std::string arch : {"sm100", "sm103"}) {
    const auto file = dir / (arch + ".json");
    const std::string bytes = read_file(file);
    BOOST_TEST(detected(file.string(), bytes) == "table/json");
    BOOST_TEST(detected(arch + ".tlb", table_to_binary(*table_from_json(bytes, arch))) ==
               "table/binary");
  }
}

BOOST_AUTO_TEST_SUITE_END()
