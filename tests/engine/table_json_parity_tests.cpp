// The fast (simdjson) table reader and the full (nlohmann) reader agree:
// every table the fast one accepts reads identically in the full one, and
// every file the fast one defers on is decided by the full one. Where the
// build has no simdjson, the fast path is absent and the suite says so.
#include <boost/test/unit_test.hpp>

#include "tables/table_json_fast.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;

namespace {

std::string well_formed_table() {
  Provenance provenance;
  provenance.source = "parity";
  provenance.triton = "3.6.0";
  provenance.packages["torch"] = "2.11";
  InMemoryTable table("sm90", provenance);
  for (int k = 0; k < 20; ++k)
    for (int m = 0; m < 50; ++m)
      table.set("pkg._kernel_" + std::to_string(k), "M=" + std::to_string(m) + "|torch.float16",
                TableEntry{make_config({{"BLOCK_M", 16 << (m % 4)}, {"GROUP", -m}}, 4 + 4 * (k % 2),
                                       2 + m % 3)});
  table.set_nondeterministic({{"pkg._kernel_1", {"BLOCK_M: 16, GROUP: 0, num_warps: 8"}}});
  return table_to_json(table);
}

// Both readers on `text`: the fast one's table (if any) must equal the full
// one's; returns whether the fast one took the file.
bool readers_agree(const std::string& text) {
  const auto fast = detail::fast_table_from_json(text, "t.json");
  if (!fast) return false;
  const auto full = detail::full_table_from_json(text, "t.json");
  BOOST_TEST(table_to_json(*fast) == table_to_json(*full));
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(table_json_parity)

BOOST_AUTO_TEST_CASE(the_fast_reader_takes_a_well_formed_table_and_reads_it_as_the_full_one) {
  if (!detail::fast_table_reader_built()) {
    BOOST_TEST_MESSAGE("built without simdjson: only the full reader exists");
    return;
  }
  BOOST_TEST(readers_agree(well_formed_table()));
  // Megatron's older layout (no num_ctas, maxnreg, ir_override) and a
  // hand-ordered header after the kernels take the fast path too.
  BOOST_TEST(readers_agree(
      R"({"kernels": {"k": {"M=1": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}}},
          "arch": "sm90", "triton": "3.6", "packages": {"torch": "2.11"}})"));
}

BOOST_AUTO_TEST_CASE(the_fast_reader_defers_every_refusal_to_the_full_reader) {
  // Each is refused by the full reader with a message naming where; the fast
  // reader must not accept any of them, and table_from_json gives the full
  // reader's words.
  const char* refused[] = {
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3}, "M=1": {"num_warps": 4, "num_stages": 3}}}})",
      R"({"arch": "sm90", "kernels": {"k": {}, "k": {}}})",
      R"({"arch": "sm90", "arch": "sm80", "kernels": {}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_warps": 8, "num_stages": 3}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"kwargs": {"B": 1, "B": 2}, "num_warps": 4, "num_stages": 3}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3, "x": 1}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4.0, "num_stages": 3}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 1e400}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"kwargs": {"BLOCK_M": 0}, "num_warps": 4, "num_stages": 3}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"kwargs": {"G": 18446744073709551615}, "num_warps": 4, "num_stages": 3}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"": {"num_warps": 4, "num_stages": 3}}}})",
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3}}}} trailing)",
      R"({"arch": "sm90", "format_version": 99, "kernels": {}})",
      R"({"arch": "sm90", "kernels": {"k": 3}})",
      "{\"arch\": \"sm90\", \"kernels\": {\"k\xff\": {}}}",
      R"({"arch": "sm90"})",
      // Found by fuzz_table_json: a ':' where ',' belongs, then the root
      // closed early and more members after it. simdjson's On-Demand API
      // accepted it; the DOM parser validates the whole document.
      R"({"arch": "sm90", "kernels": {}, "a": "x": "y", "b": 1}, "c": 2})",
      R"({"arch": "sm90", "kernels": {}} , "source": "")",
  };
  for (const char* text : refused) {
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(!detail::fast_table_from_json(text, "t.json"));
      std::string full_words, words;
      try {
        (void)detail::full_table_from_json(text, "t.json");
      } catch (const Error& e) {
        full_words = e.what();
      }
      try {
        (void)table_from_json(text, "t.json");
      } catch (const Error& e) {
        words = e.what();
      }
      BOOST_TEST(!full_words.empty());
      BOOST_TEST(words == full_words);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_equivalent_list_is_read_by_the_full_reader) {
  const std::string text =
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": 3,
          "equivalent": [{"num_warps": 8, "num_stages": 3}]}}}})";
  BOOST_TEST(!detail::fast_table_from_json(text, "t.json"));
  const auto table = table_from_json(text, "t.json");
  BOOST_TEST(table->entry("k", "M=1")->equivalent.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
