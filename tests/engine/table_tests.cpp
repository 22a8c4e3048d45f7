// Tables in Megatron's JSON layout, table search, candidate manifests, and
// the real Megatron tables in the shared fixtures.
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstring>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "captured_log.hpp"
#include "tables/table_index.hpp"
#include "tables/table_json_fast.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/same_bytes.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using tunelock::testing::TempDir;

namespace {

const char* kSmallTable = R"({
  "arch": "sm90",
  "source": "unit test",
  "packages": {"mamba_ssm": "2.3.1"},
  "triton": "3.6.0",
  "provenance": {"device_name": "NVIDIA H100", "sm_count": 132},
  "kernels": {
    "matmul": {
      "M=1|f16": {"kwargs": {"BLOCK_N": 64, "BLOCK_M": 128}, "num_warps": 8, "num_stages": 3},
      "*": {"kwargs": {"BLOCK_M": 32, "BLOCK_N": 32}, "num_warps": 4, "num_stages": 2, "num_ctas": 1}
    }
  }
})";

std::string load_error(const std::string& text) {
  try {
    table_from_json(text, "t.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(table_json)

BOOST_AUTO_TEST_CASE(loads_megatron_layout_with_provenance) {
  auto table = table_from_json(kSmallTable, "t.json");
  BOOST_TEST(table->arch() == "sm90");
  BOOST_TEST(table->provenance().source == "unit test");
  BOOST_TEST(table->provenance().triton == "3.6.0");
  BOOST_TEST(table->provenance().packages.at("mamba_ssm") == "2.3.1");
  BOOST_TEST(table->provenance().device_name == "NVIDIA H100");
  BOOST_TEST(table->provenance().sm_count == 132);
  BOOST_TEST((table->kernels() == std::vector<std::string>{"matmul"}));
  BOOST_TEST((table->keys("matmul") == std::vector<std::string>{"*", "M=1|f16"}));
  BOOST_TEST(table->entry_count() == 2u);
  const auto exact = table->entry("matmul", "M=1|f16");
  BOOST_TEST_REQUIRE(exact.has_value());
  BOOST_TEST(signature(exact->config) == "BLOCK_M=128,BLOCK_N=64;warps=8;stages=3");
  BOOST_TEST(exact->config.num_ctas == 1);  // left out: Megatron's default
  BOOST_TEST(!exact->config.maxnreg);
  BOOST_TEST(!exact->config.ir_override);
  BOOST_TEST(!table->entry("matmul", "M=2").has_value());
  BOOST_TEST(!table->entry("other", "*").has_value());
}

BOOST_AUTO_TEST_CASE(malformed_tables_name_the_file_path_and_problem) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "t.json: empty file"},
      {"{\"arch\": \"sm90\", \"kernels\": {", "t.json: not valid JSON at byte"},
      {"[1, 2]", "t.json: expected an object"},
      {"{\"kernels\": {}}", "t.json: arch: missing"},
      {"{\"arch\": 90, \"kernels\": {}}", "t.json: arch: expected a string"},
      {"{\"arch\": \"../x\", \"kernels\": {}}", "not an architecture tag"},
      {"{\"arch\": \"sm90\"}", "t.json: kernels: missing"},
      {"{\"arch\": \"sm90\", \"kernels\": []}", "t.json: kernels: expected an object"},
      {"{\"arch\": \"sm90\", \"kernels\": {\"k\": 3}}", "t.json: kernels.k: expected an object"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": "4"}}}})",
       "kernels.k[\"M=1\"].num_warps: expected an integer, got string"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4.5}}}})",
       "num_warps: expected an integer, got number"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4, "num_stages": -1}}}})",
       "num_stages: -1 is out of range"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 99999999999}}}})",
       "num_warps: 99999999999 is out of range"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"kwargs": {"BLOCK_M": 0}}}}})",
       "kwargs.BLOCK_M: 0 is out of range"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"kwargs": {"BLOCK_M": 18446744073709551615}}}}})",
       "kwargs.BLOCK_M: 18446744073709551615 is out of range"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"kwargs": [64]}}}})",
       "kwargs: expected an object"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"warps": 4}}}})",
       "warps: unknown config field"},
      {R"({"arch": "sm90", "format_version": 99, "kernels": {}})",
       "format_version 99 is newer than this tunelock supports (1)"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_stages": 3}}}})",
       "kernels.k[\"M=1\"].num_warps: missing"},
      {R"({"arch": "sm90", "kernels": {"k": {"M=1": {"num_warps": 4}}}})",
       "kernels.k[\"M=1\"].num_stages: missing"},
      {R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": 4, "num_stages": 3, "maxnreg": "x"}}}})",
       "maxnreg: expected an integer"},
      {R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": 4, "num_stages": 3, "ir_override": 7}}}})",
       "kernels.k[\"*\"].ir_override: expected a string or null, got number"},
      {R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": 4, "num_stages": 3, "num_ctas": 0}}}})",
       "num_ctas: 0 is out of range"},
      {R"({"arch": "sm90", "kernels": {"k": {"*": {"num_warps": 1e400, "num_stages": 3}}}})",
       "t.json: kernels.k.*.num_warps: number out of range"},
      {R"({"arch": "sm90", "kernels": {"k": {"": {"num_warps": 4, "num_stages": 3}}}})",
       "t.json: kernels.k: empty key"},
      {R"({"arch": "sm90", "packages": [], "kernels": {}})",
       "t.json: packages: expected an object"},
      {R"({"arch": "sm90", "provenance": {"sm_count": "x"}, "kernels": {}})",
       "provenance.sm_count: expected an integer"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = load_error(text);
    BOOST_TEST_INFO("input: " << text << "\nmessage: " << message);
    BOOST_TEST(message.find(expected) != std::string::npos);
    BOOST_TEST(message.starts_with("t.json"));
  }
}

BOOST_AUTO_TEST_CASE(missing_files_and_directories_are_clear_errors) {
  TempDir dir;
  BOOST_CHECK_EXCEPTION(read_file(dir.path() / "absent.json"), Error, [](const Error& e) {
    return std::string(e.what()).find("no such file") != std::string::npos;
  });
  BOOST_CHECK_EXCEPTION(read_file(dir.path()), Error, [](const Error& e) {
    return std::string(e.what()).find("is a directory") != std::string::npos;
  });
}

BOOST_AUTO_TEST_SUITE_END()

// The in-memory table's own index against std::map, over names and keys of
// many lengths (its length filter works modulo 64, so some collide).
BOOST_AUTO_TEST_SUITE(in_memory_index)

BOOST_AUTO_TEST_CASE(lookups_answer_as_a_sorted_map_does) {
  std::mt19937_64 random(7);
  const std::vector<Config> configs{make_config({{"BLOCK", 16}}), make_config({{"BLOCK", 32}}),
                                    make_config({{"BLOCK", 64}}, 8)};
  auto name = [&](std::size_t max_length) {
    std::string text(1 + random() % max_length, 'a');
    for (char& c : text) c = static_cast<char>('a' + random() % 3);
    return text;
  };
  InMemoryTable table("sm90");
  std::map<std::string, std::map<std::string, std::size_t>> expected;
  for (int i = 0; i < 3000; ++i) {
    const std::string kernel = name(70), key = i % 10 == 0 ? "*" : name(140);
    const std::size_t config = random() % configs.size();
    table.set(kernel, key, TableEntry{configs[config]});  // repeats overwrite
    expected[kernel][key] = config;
  }
  std::vector<std::string> kernels;
  for (const auto& [kernel, keys] : expected) kernels.push_back(kernel);
  BOOST_TEST(table.kernels() == kernels, boost::test_tools::per_element());
  for (int i = 0; i < 20000; ++i) {
    const std::string kernel = i % 2 ? kernels[random() % kernels.size()] : name(70);
    const std::string key = name(140);
    const auto by_kernel = expected.find(kernel);
    BOOST_TEST(table.has_kernel(kernel) == (by_kernel != expected.end()));
    if (by_kernel != expected.end())
      BOOST_TEST(detail::TableIndexAccess::may_hold_kernel_name_of_length(table, kernel.size()));
    if (by_kernel == expected.end()) continue;
    for (const std::string& asked : {key, by_kernel->second.begin()->first}) {
      const auto found = by_kernel->second.find(asked);
      const EntryMatch match = table.match(kernel, asked, configs);
      BOOST_TEST(match.present == (found != by_kernel->second.end()));
      if (found != by_kernel->second.end()) BOOST_TEST(*match.index == found->second);
    }
    if (i % 100 == 1) {
      std::vector<std::string> keys;
      for (const auto& [k, config] : by_kernel->second) keys.push_back(k);
      BOOST_TEST(table.keys(kernel) == keys, boost::test_tools::per_element());
    }
  }
}

// Selection skips a name the table says it cannot hold, without building
// it: a false answer must mean no kernel name of that length, in memory and
// in the binary form, and lengths 64 apart share an answer (never a false no).
BOOST_AUTO_TEST_CASE(name_length_filter_never_rules_out_a_held_name) {
  InMemoryTable table("sm90");
  for (std::size_t length : {3u, 10u, 35u, 67u}) table.set(std::string(length, 'k'), "*", {});
  const auto binary = table_from_binary(table_to_binary(table), "filter.tltb");
  for (const Table* each : std::array<const Table*, 2>{&table, binary.get()}) {
    for (std::size_t length = 0; length < 140; ++length) {
      const std::size_t low = length % 64;
      const bool held = low == 3 || low == 10 || low == 35;  // 67 % 64 == 3
      BOOST_TEST(detail::TableIndexAccess::may_hold_kernel_name_of_length(*each, length) == held,
                 "length " << length);
    }
  }
  BOOST_TEST(detail::TableIndexAccess::may_hold_kernel_name_of_length(InMemoryTable("sm90"), 0) ==
             false);
}

BOOST_AUTO_TEST_CASE(inline_byte_comparison_agrees_with_memcmp_at_every_length) {
  std::mt19937_64 random(3);
  char a[80], b[80];
  int equal = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::size_t size = random() % 72;
    for (std::size_t k = 0; k < size; ++k) {
      a[k] = static_cast<char>('a' + random() % 2);
      b[k] = random() % 16 ? a[k]
                           : static_cast<char>('a' + random() % 2);  // sometimes one byte differs
    }
    const bool same = std::memcmp(a, b, size) == 0;
    BOOST_TEST(detail::same_bytes(a, b, size) == same, "size " << size);
    equal += same;
  }
  BOOST_TEST(equal > 10000);  // both answers were exercised
}

BOOST_AUTO_TEST_CASE(one_lookup_per_name_answers_as_separate_lookups_do) {
  const std::vector<Config> live{make_config({{"BLOCK", 16}}), make_config({{"BLOCK", 32}})};
  InMemoryTable table("sm90");
  table.set("mm", "M=1", TableEntry{make_config({{"BLOCK", 64}})});  // stale
  table.set("mm", "*", TableEntry{live[1]});
  table.set("mm", "M=2", TableEntry{live[0]});
  const std::array<std::string_view, 2> in_order{"M=1", "*"};
  for (const auto& [kernel, keys] :
       std::vector<std::pair<std::string, std::vector<std::string_view>>>{
           {"mm", {"M=1", "*"}},
           {"mm", {"M=2", "*"}},
           {"mm", {"M=3", "*"}},
           {"mm", {"*"}},
           {"other", {"M=1", "*"}}}) {
    const detail::NameMatch one =
        detail::TableIndexAccess::match_in_order(table, kernel, keys, live);
    const detail::NameMatch separate = detail::TableIndexAccess::generic_match_in_order(
        table, kernel, keys, live);  // has_kernel + match
    BOOST_TEST(one.kernel_present == separate.kernel_present);
    BOOST_TEST(one.tried == separate.tried);
    for (std::size_t k = 0; k < one.tried; ++k) {
      BOOST_TEST(one.keys[k].present == separate.keys[k].present);
      BOOST_TEST((one.keys[k].index == separate.keys[k].index));
    }
  }
  // The stale exact entry is reported, then "*" decides.
  const detail::NameMatch stale =
      detail::TableIndexAccess::match_in_order(table, "mm", in_order, live);
  BOOST_TEST(stale.tried == 2u);
  BOOST_TEST(stale.keys[0].stale());
  BOOST_TEST(*stale.keys[1].index == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(table_search)

BOOST_AUTO_TEST_CASE(directories_are_searched_in_order_for_the_arch) {
  TempDir dir;
  dir.write("first/sm80.json", R"({"arch": "sm80", "source": "first", "kernels": {}})");
  dir.write("second/sm90.json", R"({"arch": "sm90", "source": "second", "kernels": {}})");
  dir.write("third/sm90.json", R"({"arch": "sm90", "source": "third", "kernels": {}})");
  const std::vector<std::string> path{
      (dir.path() / "missing").string(), (dir.path() / "first").string(),
      (dir.path() / "second").string(), (dir.path() / "third").string()};
  auto table = load_table_for_arch("sm90", path, false);
  BOOST_TEST_REQUIRE(table != nullptr);
  BOOST_TEST(table->provenance().source == "second");
  BOOST_TEST(load_table_for_arch("sm100", path, false) == nullptr);
}

BOOST_AUTO_TEST_CASE(binary_form_is_preferred_over_json_in_a_directory) {
  TempDir dir;
  dir.write("sm90.json", "{}");
  dir.write("sm90.tlb", "binary");
  BOOST_TEST(table_file_in(dir.path(), "sm90")->filename() == "sm90.tlb");
  BOOST_TEST(!table_file_in(dir.path(), "sm80").has_value());
}

BOOST_AUTO_TEST_CASE(a_file_named_directly_is_used_only_for_its_own_arch) {
  TempDir dir;
  tunelock::testing::CapturedLog log;
  const auto file = dir.write("mine.json", R"({"arch": "sm80", "kernels": {}})");
  const std::vector<std::string> path{file.string()};
  BOOST_TEST(load_table_for_arch("sm80", path, false) != nullptr);
  BOOST_TEST(load_table_for_arch("sm90", path, false) == nullptr);
  BOOST_TEST(log.count("holds a table for sm80, not sm90") == 1u);
}

BOOST_AUTO_TEST_CASE(a_malformed_table_on_the_path_is_an_error_not_a_silent_miss) {
  TempDir dir;
  dir.write("sm90.json", R"({"arch": "sm90", "kernels": {"k": []}})");
  const std::vector<std::string> path{dir.path().string()};
  BOOST_CHECK_THROW(load_table_for_arch("sm90", path, false), Error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(candidates)

BOOST_AUTO_TEST_CASE(manifest_and_single_kernel_forms_load) {
  const auto manifest = candidates_from_json(R"({"kernels": {"pkg.mm": {"key": ["M", "N"],
      "configs": [{"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 2}]}}})",
                                             "m.json");
  const auto& mm = manifest.find("pkg.mm", "m.json");
  BOOST_TEST((mm.key_args == std::vector<std::string>{"M", "N"}));
  BOOST_TEST(signature(mm.configs.at(0)) == "BLOCK_M=64;warps=4;stages=2");
  BOOST_CHECK_EXCEPTION(manifest.find("pkg.other", "m.json"), Error, [](const Error& e) {
    return std::string(e.what()) == "m.json: no kernel 'pkg.other'; the manifest has: pkg.mm";
  });

  const auto single =
      candidates_from_json(R"({"configs": [{"kwargs": {}}, {"num_warps": 8}]})", "s.json");
  BOOST_TEST(single.single_kernel);
  BOOST_TEST(single.find("anything", "s.json").configs.size() == 2u);
  BOOST_TEST(single.find("anything", "s.json").configs[0].num_warps == 4);  // Triton's default
}

BOOST_AUTO_TEST_CASE(malformed_manifests_name_the_path) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"configs": []})", "c.json: configs: no configs"},
      {R"({"configs": [{"kwargs": {"BLOCK": "x"}}]})",
       "configs[0].kwargs.BLOCK: expected an integer"},
      {R"({"kernels": {"k": {"key": "M", "configs": [{}]}}})", "kernels.k.key: expected an array"},
      {R"({"kernels": {"k": {}}})", "kernels.k: missing \"configs\""},
      {R"({"kernels": {}})", "c.json: kernels: no kernels"},
      {R"({"something": 1})", "expected {\"configs\""},
  };
  for (const auto& [text, expected] : cases) {
    std::string message;
    try {
      candidates_from_json(text, "c.json");
    } catch (const Error& e) {
      message = e.what();
    }
    BOOST_TEST_INFO("input: " << text << "\nmessage: " << message);
    BOOST_TEST(message.find(expected) != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

boost::test_tools::assertion_result have_shared_fixtures(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result result(!tunelock::testing::shared_fixtures().empty());
  result.message() << "skipped: ../shared/fixtures is absent (a user's clone has no shared data)";
  return result;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(megatron_fixtures, *boost::unit_test::precondition(have_shared_fixtures))

BOOST_AUTO_TEST_CASE(both_megatron_tables_load_unchanged) {
  const auto dir = tunelock::testing::shared_fixtures() / "megatron-tables";
  for (const std::string arch : {"sm100", "sm103"}) {
    const std::vector<std::string> path{dir.string()};
    auto table = load_table_for_arch(arch, path, false);
    BOOST_TEST_REQUIRE(table != nullptr);
    BOOST_TEST(table->arch() == arch);
    BOOST_TEST(table->kernels().size() == 15u);
    BOOST_TEST(table->entry_count() == 16u);
    BOOST_TEST(table->provenance().source ==
               "nemotron_3_ultra 96-GPU recording, majority vote over ranks");
  }
}

BOOST_AUTO_TEST_CASE(both_json_readers_read_megatrons_tables_alike) {
  if (!detail::fast_table_reader_built()) {
    BOOST_TEST_MESSAGE("built without simdjson: only the full reader exists");
    return;
  }
  const auto dir = tunelock::testing::shared_fixtures() / "megatron-tables";
  for (const std::string arch : {"sm100", "sm103"}) {
    const std::string text = read_file(dir / (arch + ".json"));
    const auto fast = detail::fast_table_from_json(text, arch);
    BOOST_TEST_REQUIRE(fast != nullptr);
    BOOST_TEST(table_to_json(*fast) == table_to_json(*detail::full_table_from_json(text, arch)));
  }
}

BOOST_AUTO_TEST_CASE(megatron_table_pins_the_recorded_config_for_its_key) {
  const auto dir = tunelock::testing::shared_fixtures() / "megatron-tables";
  auto sm100 = load_table_file(dir / "sm100.json");
  auto sm103 = load_table_file(dir / "sm103.json");
  const std::vector<Config> candidates{make_config({{"BLOCK_SIZE_H", 16}}, 4, 3),
                                       make_config({{"BLOCK_SIZE_H", 8}}, 4, 3),
                                       make_config({{"BLOCK_SIZE_H", 2}}, 4, 3)};
  const KernelId kernel{"mamba_ssm.ops.triton.ssd_chunk_state", "_chunk_cumsum_bwd_kernel"};
  const std::string key =
      "chunk_size=128|nheads=128|torch.float32|torch.float32|torch.bfloat16|torch.float32|"
      "torch.float32|torch.bfloat16|torch.float32|torch.float32";
  Notices notices;
  const Choice on_sm100 = deterministic_choice(
      kernel, key, candidates, SelectionRules{"sm100", sm100.get(), {}, OnMiss::error, &notices});
  const Choice on_sm103 = deterministic_choice(
      kernel, key, candidates, SelectionRules{"sm103", sm103.get(), {}, OnMiss::error, &notices});
  BOOST_TEST(on_sm100.index == 1u);  // BLOCK_SIZE_H=8 recorded on sm100
  BOOST_TEST(on_sm103.index == 0u);  // BLOCK_SIZE_H=16 recorded on sm103
  BOOST_TEST((on_sm100.reason == Reason::table));
}

BOOST_AUTO_TEST_CASE(megatron_tables_are_written_in_the_full_form_and_read_back_equal) {
  const auto dir = tunelock::testing::shared_fixtures() / "megatron-tables";
  for (const std::string arch : {"sm100", "sm103"}) {
    const auto original = load_table_file(dir / (arch + ".json"));
    const std::string written = table_to_json(*original);
    const auto parsed = nlohmann::json::parse(written);
    for (const auto& [kernel, keys] : parsed["kernels"].items()) {
      for (const auto& [key, config] : keys.items()) {
        BOOST_TEST(config["num_ctas"] == 1);  // Megatron's entries leave these out
        BOOST_TEST(config["maxnreg"].is_null());
        BOOST_TEST(config["ir_override"].is_null());
        BOOST_TEST((table_from_json(written, "again")->entry(kernel, key) ==
                    original->entry(kernel, key)));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
