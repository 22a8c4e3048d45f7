// Fused-MoE config files (engine/src/foreign/): the files under
// examples/moe-configs/ were written from the format by Python's json.dump(indent=4)
// plus a newline, as the tools write theirs. Read, into a table and back,
// byte for byte; every malformed name, member and value refused by name.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/foreign/moe_config_file.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/tables/table_files.hpp"

using namespace tunelock;
using tunelock::testing::TempDir;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(TUNELOCK_EXAMPLES_DIR) / "moe-configs";
const std::string kPlain = "E=8,N=1792,device_name=NVIDIA_H100_80GB_HBM3.json";
const std::string kBlocked =
    "E=16,N=512,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,block_shape=[128,128].json";
const std::string kAmd = "E=8,N=4096,device_name=AMD_Instinct_MI300X.json";

bool says(const std::string& text, const std::string& message) {
  return message.find(text) != std::string::npos;
}

#define REFUSED(expression, text)                                \
  BOOST_CHECK_EXCEPTION(expression, Error, [](const Error& e) {  \
    const bool found = says(text, e.what());                     \
    if (!found) BOOST_TEST_MESSAGE("message was: " << e.what()); \
    return found;                                                \
  })

const std::string kOne = R"({"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64,
                                   "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 3}})";

}  // namespace

BOOST_AUTO_TEST_SUITE(moe_config_files)

BOOST_AUTO_TEST_CASE(a_file_name_says_the_shape_and_is_made_back_the_same) {
  const MoeShape plain = moe_shape_from_file_name(kPlain);
  BOOST_TEST(plain.experts == 8);
  BOOST_TEST(plain.n == 1792);
  BOOST_TEST(plain.device == "NVIDIA_H100_80GB_HBM3");
  BOOST_TEST(plain.dtype.empty());
  BOOST_TEST(moe_file_name(plain) == kPlain);
  const MoeShape blocked = moe_shape_from_file_name("configs/" + kBlocked);
  BOOST_TEST(blocked.dtype == "fp8_w8a8");
  BOOST_TEST(blocked.block_shape == "128,128");
  BOOST_TEST(moe_file_name(blocked) == kBlocked);
}

BOOST_AUTO_TEST_CASE(a_bad_file_name_is_refused_naming_the_part) {
  REFUSED(moe_shape_from_file_name("E=8,N=64,device_name=X.txt"), "does not end in .json");
  REFUSED(moe_shape_from_file_name("E=0,N=64,device_name=X.json"), "E is not a positive integer");
  REFUSED(moe_shape_from_file_name("E=8,N=64.json"), "E, N and device_name are needed");
  REFUSED(moe_shape_from_file_name("N=64,E=8,device_name=X.json"),
          "'E' is unknown or out of order");
  REFUSED(moe_shape_from_file_name("E=8,N=64,device_name=X,colour=red.json"),
          "'colour' is unknown or out of order");
  REFUSED(moe_shape_from_file_name("E=8,N=64,device_name=X,block_shape=[128].json"),
          "block_shape is not [<n>,<k>]");
  REFUSED(moe_shape_from_file_name("E=8,N=64,device_name=A|B.json"), "holds a space, '|'");
  REFUSED(moe_shape_from_file_name("E=8,N=64,device_name=X,dtype.json"),
          "part 'dtype' is not <name>=<value>");
}

BOOST_AUTO_TEST_CASE(every_fixture_reads_and_writes_back_byte_for_byte) {
  for (const fs::path& path :
       {kFixtures / kPlain, kFixtures / kBlocked, kFixtures / "amd" / kAmd}) {
    const std::string text = read_file(path);
    const MoeConfigFile file = moe_config_file_from_json(text, path.string());
    BOOST_TEST(!file.by_batch.empty());
    BOOST_TEST(moe_config_file_to_json(file) == text, path.filename().string());
  }
  const MoeConfigFile plain = moe_config_file_from_json(read_file(kFixtures / kPlain), kPlain);
  BOOST_TEST(plain.triton_version.value() == "3.5.1");
  BOOST_TEST(plain.by_batch.front().first == 1);
  BOOST_TEST(plain.by_batch.back().first == 4096);
  BOOST_TEST(plain.by_batch.front().second.param("BLOCK_SIZE_K").value() == 128);
  BOOST_TEST(plain.by_batch.front().second.num_stages == 4);
}

BOOST_AUTO_TEST_CASE(a_malformed_body_is_refused_naming_the_member) {
  const std::string name = "E=8,N=64,device_name=X.json";
  REFUSED(moe_config_file_from_json("[1]", name),
          "X.json: a fused-MoE config file is a JSON object");
  REFUSED(moe_config_file_from_json("{}", name), "X.json: holds no batch size");
  REFUSED(moe_config_file_from_json(R"({"01": {}})", name), "\"01\": expected a batch size");
  REFUSED(moe_config_file_from_json(R"({"-4": {}})", name), "\"-4\": expected a batch size");
  REFUSED(moe_config_file_from_json(R"({"4": 3})", name), "\"4\": expected a config object");
  REFUSED(moe_config_file_from_json(R"({"triton_version": 3})", name),
          "\"triton_version\": expected the Triton version as a non-empty string");
  REFUSED(moe_config_file_from_json(
              R"({"2": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": "64"}})", name),
          "\"2\".BLOCK_SIZE_K: expected an integer, got \"64\"");
  REFUSED(moe_config_file_from_json(R"({"2": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32,
                                              "num_warps": 4, "num_stages": 3}})",
                                    name),
          "\"2\": no BLOCK_SIZE_K");
  REFUSED(moe_config_file_from_json(R"({"2": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32,
                                              "BLOCK_SIZE_K": 64, "num_warps": 4}})",
                                    name),
          "\"2\": needs num_warps and num_stages");
  REFUSED(moe_config_file_from_json(R"({"2": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32,
                                              "BLOCK_SIZE_K": 64, "num_warps": 0,
                                              "num_stages": 3}})",
                                    name),
          "\"2\".num_warps: expected 1 to 1024");
  REFUSED(moe_config_file_from_json(R"({"1": {}, "1": {}})", name), "duplicate");
  REFUSED(moe_config_file_from_json(R"({"1": {)", name), "X.json");
}

BOOST_AUTO_TEST_CASE(a_folder_becomes_one_table_and_the_table_the_same_files) {
  TempDir dir;
  const std::vector<fs::path> inputs{kFixtures};
  const InMemoryTable table = moe_table_from_files(inputs, "sm90");
  BOOST_TEST(table.arch() == "sm90");
  BOOST_TEST(table.keys(kFusedMoeKernel).size() == 14u);  // 10 + 4 batch sizes
  BOOST_TEST(table.provenance().packages.at("triton") == "3.5.1");
  const std::string key =
      "E=16|N=512|device=NVIDIA_H100_80GB_HBM3|dtype=fp8_w8a8|"
      "block_shape=128,128|M=64";
  BOOST_TEST(moe_key(moe_shape_from_file_name(kBlocked), 64) == key);
  BOOST_TEST(table.entry(kFusedMoeKernel, key)->config.param("GROUP_SIZE_M").value() == 32);
  // Through a table file and back: the files the tools wrote, byte for byte.
  write_table_file(table, dir.path() / "sm90.json");
  const auto files = moe_files_from_table(*load_table_file(dir.path() / "sm90.json"));
  BOOST_REQUIRE(files.size() == 2u);
  for (const auto& [name, text] : files) BOOST_TEST(text == read_file(kFixtures / name), name);
  // ROCm's extra fields keep the tools' order through a table too.
  const std::vector<fs::path> amd{kFixtures / "amd"};
  const auto amd_files = moe_files_from_table(moe_table_from_files(amd, "gfx942"));
  BOOST_REQUIRE(amd_files.size() == 1u);
  BOOST_TEST(amd_files[0].second == read_file(kFixtures / "amd" / kAmd));
}

BOOST_AUTO_TEST_CASE(files_that_cannot_share_a_table_are_refused_by_name) {
  TempDir dir;
  fs::create_directories(dir.path() / "a");
  fs::create_directories(dir.path() / "b");
  const std::string plain = read_file(kFixtures / kPlain);
  write_file_atomically(dir.path() / "a" / kPlain, plain);
  write_file_atomically(dir.path() / "b" / kPlain, plain);
  const std::vector<fs::path> twice{dir.path() / "a", dir.path() / "b"};
  REFUSED(moe_table_from_files(twice, "sm90"), "the same shape as");
  std::string other = plain;
  other.replace(other.find("3.5.1"), 5, "3.4.0");
  write_file_atomically(dir.path() / "b" / kPlain, other);
  const std::vector<fs::path> versions{kFixtures / kBlocked, dir.path() / "b"};
  REFUSED(moe_table_from_files(versions, "sm90"), "triton_version '3.4.0' differs from");
  const std::vector<fs::path> empty{dir.path() / "empty"};
  fs::create_directories(dir.path() / "empty");
  REFUSED(moe_table_from_files(empty, "sm90"), "no fused-MoE config file");
}

BOOST_AUTO_TEST_CASE(a_table_without_fused_moe_entries_or_with_a_bad_key_is_refused) {
  InMemoryTable none("sm90");
  REFUSED(moe_files_from_table(none), "the sm90 table has no fused_moe.fused_moe_kernel entries");
  InMemoryTable bad("sm90");
  bad.set(std::string(kFusedMoeKernel), "E=8|N=64|M=1", TableEntry{});
  REFUSED(moe_files_from_table(bad), "key 'E=8|N=64|M=1': E, N, device and M are needed");
  InMemoryTable odd("sm90");
  odd.set(std::string(kFusedMoeKernel), "E=8|N=64|device=X|colour=red|M=1", TableEntry{});
  REFUSED(moe_files_from_table(odd), "'colour' is no part of a fused-MoE key");
}

BOOST_AUTO_TEST_CASE(file_kind_tells_a_config_file_from_a_record) {
  const std::string plain = read_file(kFixtures / kPlain);
  BOOST_TEST((detect_file_kind(kPlain, plain).kind == FileKind::moe_configs));
  BOOST_TEST(
      (detect_file_kind("x.json", kOne).kind == FileKind::moe_configs));  // no triton_version
  BOOST_TEST((detect_file_kind("r.json", R"({"sm90": {"k": {}}})").kind == FileKind::record));
  BOOST_TEST(describe(detect_file_kind(kPlain, plain)) == "JSON fused-MoE config file");
}

BOOST_AUTO_TEST_SUITE_END()
