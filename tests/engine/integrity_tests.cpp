// A corrupt input is never a different answer and never a crash: every
// binary format refuses every flipped bit (its checksum), every JSON reader
// refuses duplicate keys, deep nesting and invalid UTF-8, and values out of
// range are refused at read, naming the file and the field.
#include <boost/test/unit_test.hpp>

#include "crafted_tables.hpp"
#include "error_of.hpp"

#include <functional>

#include "io/checksum_trailer.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"
#include "tunelock/verify/verify.hpp"

using namespace tunelock;

using tunelock::testing::contains;
using tunelock::testing::error_of;

namespace {

std::unique_ptr<InMemoryTable> small_table() {
  Provenance p;
  p.device_name = "NVIDIA H200";
  p.sm_count = 132;
  auto table = std::make_unique<InMemoryTable>("sm90", p);
  table->set("pkg.mm", "M=1", TableEntry{make_config({{"BLOCK_M", 64}}, 4, 3)});
  table->set("pkg.mm", "M=2", TableEntry{make_config({{"BLOCK_M", 128}}, 8, 2)});
  return table;
}

RecordFile small_timings() {
  RecordFile record;
  add_timings_from_json(record, R"({"format_version": 1, "rank": 1,
    "device": {"device_name": "H200", "sm_count": 132},
    "timings": {"sm90": {"pkg.mm": {"M=1": [{"signature": "A", "median_ms": 0.5},
                                           {"signature": "B", "median_ms": null}]}}}})",
                        "t.json");
  return record;
}

// Calls `read` on every single-bit flip of `bytes`; each must be refused
// with a message that starts with the file's name.
void every_bit_flip_is_refused(const std::string& bytes, const std::string& origin,
                               const std::function<void(const std::string&)>& read) {
  std::size_t refused = 0;
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
      const std::string message = error_of([&] { read(flipped); });
      if (message.starts_with(origin + ": ")) ++refused;
    }
  }
  BOOST_TEST(refused == bytes.size() * 8);
  BOOST_TEST_MESSAGE(origin << ": " << refused << " of " << bytes.size() * 8
                            << " single-bit flips refused");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(binary_integrity)

BOOST_AUTO_TEST_CASE(every_bit_flip_of_a_binary_table_is_refused) {
  every_bit_flip_is_refused(table_to_binary(*small_table()), "t.tlb",
                            [](const std::string& b) { table_from_binary(b, "t.tlb"); });
}

BOOST_AUTO_TEST_CASE(every_bit_flip_of_a_binary_timing_sidecar_is_refused) {
  every_bit_flip_is_refused(timings_to_binary(small_timings()), "t.tlrt", [](const std::string& b) {
    RecordFile r;
    add_timings(r, b, "t.tlrt");
  });
}

BOOST_AUTO_TEST_CASE(every_bit_flip_of_a_binary_choice_log_is_refused) {
  const ChoiceLogFile log{1, {{"sm90|k|M=1", "A;pinned"}, {"sm90|k|M=2", "B;timed"}}, ""};
  every_bit_flip_is_refused(choice_log_to_binary(log), "l.tlcl",
                            [](const std::string& b) { choice_log_from_bytes(b, "l.tlcl"); });
}

BOOST_AUTO_TEST_CASE(a_file_without_checksum_says_how_to_reconvert) {
  const std::string table = table_to_binary(*small_table());
  const std::string old = table.substr(0, table.size() - 12);  // as version 1 wrote it
  const std::string message = error_of([&] { table_from_binary(old, "old.tlb"); });
  BOOST_TEST(message.starts_with("old.tlb: binary table without a checksum"));
  BOOST_TEST(contains(message, "tunelock table convert"));
  const std::string timings = timings_to_binary(small_timings());
  RecordFile r;
  BOOST_TEST(
      contains(error_of([&] { add_timings(r, timings.substr(0, timings.size() - 12), "o"); }),
               "tunelock timings convert"));
}

BOOST_AUTO_TEST_CASE(a_choice_log_whose_digest_differs_from_its_entries_is_refused) {
  const ChoiceLogFile log{0, {{"sm90|k|M=1", "A;pinned"}}, ""};
  std::string json = choice_log_to_json(log);
  json.replace(json.find("A;pinned"), 8, "B;pinned");  // a changed choice, old digest
  const std::string message = error_of([&] { choice_log_from_bytes(json, "l.json"); });
  BOOST_TEST(message.starts_with("l.json: digest: stored "));
  BOOST_TEST(contains(message, "changed after it was written"));
}

BOOST_AUTO_TEST_CASE(a_choice_log_rank_beyond_a_process_index_is_refused) {
  // Rank -1 is stored as the unsigned 4294967295.
  const std::string binary = choice_log_to_binary(ChoiceLogFile{-1, {{"a", "b"}}, ""});
  BOOST_TEST(error_of([&] { choice_log_from_bytes(binary, "l.tlcl"); }) ==
             "l.tlcl: rank: 4294967295 is out of range; allowed 0 to 1073741824");
}

BOOST_AUTO_TEST_CASE(a_negative_rank_or_sm_count_in_a_timing_sidecar_is_refused) {
  RecordFile negative_rank = small_timings();
  negative_rank.rank = -5;
  RecordFile r;
  BOOST_TEST(error_of([&] {
               add_timings(r, timings_to_binary(negative_rank), "t.tlrt");
             }).starts_with("t.tlrt: rank: -5 is out of range"));
  RecordFile negative_sm = small_timings();
  negative_sm.device.sm_count = -1;
  BOOST_TEST(error_of([&] {
               add_timings(r, timings_to_binary(negative_sm), "t.tlrt");
             }).starts_with("t.tlrt: sm_count: -1 is out of range"));
}

BOOST_AUTO_TEST_CASE(an_unknown_rank_converts_to_json_the_reader_accepts) {
  RecordFile unknown = small_timings();
  unknown.rank = -1;
  RecordFile back;
  add_timings_from_json(back, timings_to_json(unknown), "t.json");
  BOOST_TEST(back.rank == -1);
}

BOOST_AUTO_TEST_CASE(invalid_utf8_in_binary_strings_is_refused_at_read) {
  InMemoryTable table("sm90");
  table.set("pkg.mm", "M=\xff", TableEntry{make_config({{"BLOCK_M", 64}}, 4, 3)});
  BOOST_TEST(error_of([&] { table_from_binary(table_to_binary(table), "u.tlb"); }) ==
             "u.tlb: kernels[0].keys[0]: invalid UTF-8 in text");
  const ChoiceLogFile log{0, {{"sm90|k|M=\xc3", "A;pinned"}}, ""};
  BOOST_TEST(error_of([&] { choice_log_from_bytes(choice_log_to_binary(log), "u.tlcl"); }) ==
             "u.tlcl: entries[0].key: invalid UTF-8 in text");
  RecordFile record = small_timings();
  record.device.device_name = "H\xe2\x82";
  RecordFile r;
  BOOST_TEST(error_of([&] { add_timings(r, timings_to_binary(record), "u.tlrt"); }) ==
             "u.tlrt: device_name: invalid UTF-8 in text");
  // Valid multi-byte text is kept.
  InMemoryTable ok("sm90");
  ok.set("pkg.mm", "dtype=\xc3\xa9", TableEntry{make_config({{"BLOCK_M", 64}}, 4, 3)});
  BOOST_TEST(table_from_binary(table_to_binary(ok), "ok.tlb")->entry_count() == 1u);
}

BOOST_AUTO_TEST_CASE(a_table_whose_offsets_alias_one_kernel_is_refused_at_once) {
  // 20,000 x 20,000 = 4e8 string checks before; a file of 160 KB.
  const std::string shared_kernel = tunelock::testing::aliased_table(20'000, 20'000, true);
  BOOST_TEST(contains(error_of([&] { (void)table_from_binary(shared_kernel, "a.tlb"); }),
                      "a.tlb: corrupt binary table (its offsets point many times at one list"));
  // Distinct kernels sharing one key list: the same cost, the same refusal.
  const std::string shared_keys = tunelock::testing::aliased_table(2'000, 20'000, false);
  BOOST_TEST(contains(error_of([&] { (void)table_from_binary(shared_keys, "b.tlb"); }),
                      "b.tlb: corrupt binary table (its offsets point many times at one list"));
}

BOOST_AUTO_TEST_CASE(a_verify_batch_shorter_than_its_header_is_refused_within_bounds) {
  // Found by fuzz_verify_batch: the identifier was read before the size was
  // known (ASan: heap-buffer-overflow). Heap bytes, so `make sanitize` sees it.
  for (std::size_t size = 0; size < 8; ++size) {
    const auto bytes = std::make_unique<char[]>(size + 1);
    BOOST_TEST(error_of([&] {
                 decode_batch({bytes.get(), size}, "peer");
               }).starts_with("peer: not a valid verify batch"));
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(json_integrity)

BOOST_AUTO_TEST_CASE(duplicate_keys_are_refused_naming_the_path) {
  BOOST_TEST(
      error_of([] {
        choice_log_from_bytes(
            R"({"rank": 0, "entries": {"sm90|k|M=1": "A;pinned", "sm90|k|M=1": "B;pinned"}})",
            "l.json");
      }) ==
      "l.json: entries.sm90|k|M=1: duplicate key (each key may appear once in an "
      "object)");
  BOOST_TEST(error_of([] {
               table_from_json(R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4,
                 "num_stages": 3, "num_warps": 8}}}})",
                               "t.json");
             }) ==
             "t.json: kernels.k.M=1.num_warps: duplicate key (each key may appear once in "
             "an object)");
  BOOST_TEST(error_of([] {
               choice_log_from_bytes(R"({"rank": 0, "rank": 1, "entries": {}})", "l");
             }).starts_with("l: rank: duplicate key"));
}

BOOST_AUTO_TEST_CASE(equal_keys_in_different_objects_are_fine) {
  const auto table = table_from_json(R"({"arch": "sm90", "kernels": {
      "a": {"M=1": {"num_warps": 4, "num_stages": 3}},
      "b": {"M=1": {"num_warps": 4, "num_stages": 3}}}})",
                                     "t.json");
  BOOST_TEST(table->entry_count() == 2u);
}

BOOST_AUTO_TEST_CASE(deep_nesting_is_refused_without_a_crash) {
  const std::string deep = std::string(65000, '[') + std::string(65000, ']');
  BOOST_TEST(error_of([&] { table_from_json(deep, "deep.json"); }).starts_with("deep.json: "));
  BOOST_TEST(contains(error_of([&] { table_from_json(deep, "deep.json"); }),
                      "nested deeper than 64 levels"));
  std::string objects = "{\"rank\": 0, \"entries\": ";
  for (int i = 0; i < 100; ++i) objects += "{\"k\": ";
  BOOST_TEST(contains(error_of([&] { choice_log_from_bytes(objects, "l.json"); }),
                      "nested deeper than 64 levels"));
}

BOOST_AUTO_TEST_CASE(invalid_utf8_is_refused_naming_the_path) {
  const std::string message = error_of(
      [] { choice_log_from_bytes("{\"rank\": 0, \"entries\": {\"k\": \"A\xff\"}}", "l.json"); });
  BOOST_TEST(message.starts_with("l.json: not valid JSON at byte"));
  BOOST_TEST(contains(message, ": invalid UTF-8 (in entries.k)"));
}

BOOST_AUTO_TEST_CASE(numbers_beyond_a_double_name_their_path) {
  BOOST_TEST(error_of([] {
               table_from_json(
                   R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 1e400}}}})",
                   "t.json");
             }) == "t.json: kernels.k.M=1.num_warps: number out of range (beyond a 64-bit float)");
}

BOOST_AUTO_TEST_SUITE_END()
