// Configs that give the same bits are interchangeable: record finds them
// (bit classes on the call's inputs and a second input), merge keeps what
// every rank saw, and a pinned run with TUNELOCK_EQUIVALENT=timed launches
// the fastest of an entry's class while logging the entry's config.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "sum_family.hpp"
#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using namespace tunelock::launcher;
using namespace tunelock::testing;

BOOST_AUTO_TEST_SUITE(equivalent_configs)

BOOST_AUTO_TEST_CASE(record_classes_and_merge_list_exactly_the_bit_identical_configs) {
  TempDir dir;
  const auto tables = record_and_merge(dir, /*second_input=*/true);
  const RecordFile record = load_record_file(dir.path() / "rec.rank0.json");
  const auto& timed = record.timings.at({"host", "t.ops.sum", "N=9|f32"});
  BOOST_TEST(*timed[0].bit_class == *timed[1].bit_class);
  BOOST_TEST(*timed[2].bit_class != *timed[0].bit_class);
  BOOST_TEST(*timed[3].bit_class != *timed[0].bit_class);  // told apart by the second input
  const auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  const TableEntry entry = *table->entry("t.ops.sum", "N=9|f32");
  BOOST_TEST(signature(entry.config) == "BLOCK=8;warps=4;stages=2");  // the fastest
  BOOST_TEST(entry.equivalent.size() == 1u);
  BOOST_TEST(signature(entry.equivalent.at(0)) == "BLOCK=1;warps=1;stages=1");
  BOOST_TEST((entry.faster_equivalents == std::optional<std::size_t>(0)));  // none beat the winner
}

BOOST_AUTO_TEST_CASE(without_a_second_input_the_calls_own_inputs_decide) {
  TempDir dir;
  const auto tables = record_and_merge(dir, /*second_input=*/false);
  const auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  // On the call's inputs (all positive) variant 3 matches 0 and 1 too.
  BOOST_TEST(table->entry("t.ops.sum", "N=9|f32")->equivalent.size() == 2u);
}

BOOST_AUTO_TEST_CASE(timed_equivalents_keep_the_bits_and_digest_and_run_the_fast_one) {
  TempDir dir;
  const auto tables = record_and_merge(dir, true);
  // Pin the slow config, its class holding the fast one.
  auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  TableEntry entry = *table->entry("t.ops.sum", "N=9|f32");
  std::swap(entry.config, entry.equivalent.at(0));
  entry.faster_equivalents = 1;  // as a merge says when the vote kept the slow one
  table->set("t.ops.sum", "N=9|f32", entry);
  write_file_atomically(tables / "host.json", table_to_json(*table));

  Run plain(pinned(tables, Equivalent::off));
  const float plain_out = plain.call();
  plain.call();
  BOOST_TEST(plain.launches->of[0] == 4);  // two bits-check runs and two launches, all slow
  BOOST_TEST(plain.launches->of[1] == 0);

  Run timed(pinned(tables, Equivalent::timed));
  const float timed_out = timed.call();
  const int after_first = timed.launches->of[0];
  for (int i = 0; i < 5; ++i) BOOST_TEST(timed.call() == timed_out);
  BOOST_TEST(timed_out == plain_out);  // the same bits, by construction
  BOOST_TEST(timed.runtime.choice_digest() == plain.runtime.choice_digest());
  BOOST_TEST(timed.runtime.choice_log().snapshot().at("host|t.ops.sum|N=9|f32") ==
             "BLOCK=1;warps=1;stages=1;pinned");     // the entry's config, as plain pinned logs it
  BOOST_TEST(timed.launches->of[0] == after_first);  // after the first call: never the slow one
  BOOST_TEST(timed.launches->of[1] >= 6);
  BOOST_TEST(timed.launches->of[2] == 0);  // other bits: never timed, never launched
  BOOST_TEST(timed.launches->of[3] == 0);
}

BOOST_AUTO_TEST_CASE(timed_equivalents_time_nothing_where_the_record_found_none_faster) {
  TempDir dir;
  const auto tables = record_and_merge(dir, true);
  auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  TableEntry entry = *table->entry("t.ops.sum", "N=9|f32");
  std::swap(entry.config, entry.equivalent.at(0));
  entry.faster_equivalents = 0;  // the record timed the equivalent slower: not worth timing
  table->set("t.ops.sum", "N=9|f32", entry);
  write_file_atomically(tables / "host.json", table_to_json(*table));

  Run timed(pinned(tables, Equivalent::timed));
  timed.call();
  timed.call();
  BOOST_TEST(timed.launches->of[0] == 4);  // as plain pinned: the bits check and two launches
  BOOST_TEST(timed.launches->of[1] == 0);  // never timed, never launched
}

BOOST_AUTO_TEST_CASE(how_many_equivalents_were_faster_survives_json_and_binary_and_is_checked) {
  TempDir dir;
  const auto tables = record_and_merge(dir, true);
  auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  TableEntry entry = *table->entry("t.ops.sum", "N=9|f32");
  entry.faster_equivalents = 1;
  table->set("t.ops.sum", "N=9|f32", entry);
  const std::string json = table_to_json(*table);
  BOOST_TEST(json.find("\"faster_equivalents\": 1") != std::string::npos);
  BOOST_TEST((*table_from_json(json, "t.json")->entry("t.ops.sum", "N=9|f32") == entry));
  const auto binary = table_from_binary(table_to_binary(*table), "t.tlb");
  BOOST_TEST((*binary->entry("t.ops.sum", "N=9|f32") == entry));
  // Older tables say nothing: unknown, not zero.
  entry.faster_equivalents.reset();
  table->set("t.ops.sum", "N=9|f32", entry);
  BOOST_TEST(!table_from_binary(table_to_binary(*table), "t.tlb")
                  ->entry("t.ops.sum", "N=9|f32")
                  ->faster_equivalents.has_value());
  const std::string bad = R"({"arch": "host", "kernels": {"k": {"*": {"kwargs": {"BLOCK": 1},
      "num_warps": 1, "num_stages": 1, "equivalent": [{"kwargs": {"BLOCK": 2}, "num_warps": 1,
      "num_stages": 1}], "faster_equivalents": 2}}}})";
  BOOST_CHECK_EXCEPTION(table_from_json(bad, "t.json"), Error, [](const Error& e) {
    return std::string(e.what()).find("t.json: kernels.k[\"*\"].faster_equivalents") == 0;
  });
}

BOOST_AUTO_TEST_CASE(equivalents_survive_the_binary_table_and_bad_lists_are_refused) {
  TempDir dir;
  const auto tables = record_and_merge(dir, true);
  const auto json_table = table_from_json(read_file(tables / "host.json"), "host.json");
  const auto binary = table_from_binary(table_to_binary(*json_table), "host.tlb");
  const TableEntry from_binary = *binary->entry("t.ops.sum", "N=9|f32");
  BOOST_TEST((from_binary == *json_table->entry("t.ops.sum", "N=9|f32")));
  BOOST_TEST(from_binary.equivalent.size() == 1u);
  BOOST_TEST(describe(from_binary) ==
             "BLOCK=8;warps=4;stages=2 (equivalent: BLOCK=1;warps=1;stages=1)");
  BOOST_TEST(read_file(tables / "host.json").find("\"equivalent\"") != std::string::npos);
  const std::string bad = R"({"arch": "host", "kernels": {"k": {"*": {"kwargs": {"BLOCK": 1},
      "num_warps": 1, "num_stages": 1, "equivalent": [{"kwargs": {"BLOCK": 1}, "num_warps": 1,
      "num_stages": 1}]}}}})";
  BOOST_CHECK_EXCEPTION(table_from_json(bad, "t.json"), Error, [](const Error& e) {
    return std::string(e.what()).find("t.json: kernels.k[\"*\"].equivalent[0]: repeats") == 0;
  });
}

BOOST_AUTO_TEST_SUITE_END()
