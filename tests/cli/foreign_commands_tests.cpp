// `tunelock import` and `tunelock export` as a user runs them: fused-MoE
// config files (examples/moe-configs/) into a table and back, byte for
// byte; exit 2 with one line naming the file on bad input, nothing written.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"

using tunelock::testing::run_cli;
using tunelock::testing::TempDir;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(TUNELOCK_EXAMPLES_DIR) / "moe-configs";
const std::string kPlain = "E=8,N=1792,device_name=NVIDIA_H100_80GB_HBM3.json";

}  // namespace

BOOST_AUTO_TEST_SUITE(foreign_commands)

BOOST_AUTO_TEST_CASE(import_then_export_gives_the_tools_files_back) {
  TempDir dir;
  const std::string table = (dir.path() / "sm90.json").string();
  const auto imported = run_cli({"import", kFixtures.string(), "--arch", "sm90", "-o", table});
  BOOST_TEST(imported.code == 0, imported.err);
  BOOST_TEST(imported.out.find("wrote " + table + " (14 fused_moe.fused_moe_kernel entries") !=
             std::string::npos);
  const auto shown = run_cli({"table", "show", table});
  BOOST_TEST(shown.out.find("packages: triton 3.5.1") != std::string::npos, shown.out);
  const std::string out = (dir.path() / "out").string();
  const auto exported = run_cli({"export", table, "-o", out});
  BOOST_TEST(exported.code == 0, exported.err);
  BOOST_TEST(exported.out.find("wrote 2 fused-MoE config file(s)") != std::string::npos);
  for (const auto& item : fs::directory_iterator(out))
    BOOST_TEST(
        tunelock::read_file(item.path()) == tunelock::read_file(kFixtures / item.path().filename()),
        item.path().filename().string());
  // Again into the same folder: equal files are left as they are.
  BOOST_TEST(run_cli({"export", table, "-o", out}).code == 0);
}

BOOST_AUTO_TEST_CASE(bad_input_exits_2_naming_the_file_and_writes_nothing) {
  TempDir dir;
  const std::string table = (dir.path() / "t.json").string();
  dir.write("notes.json", "{}");
  const auto other =
      run_cli({"import", (dir.path() / "notes.json").string(), "--arch", "sm90", "-o", table});
  BOOST_TEST(other.code == 2);
  BOOST_TEST(other.err.find("notes.json: not a file tunelock imports") != std::string::npos,
             other.err);
  dir.write("E=8,N=64,device_name=X.json", R"({"1": {"BLOCK_SIZE_M": "sixteen"}})");
  const auto bad = run_cli({"import", (dir.path() / "E=8,N=64,device_name=X.json").string(),
                            "--arch", "sm90", "-o", table});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(
      bad.err.find("\"1\".BLOCK_SIZE_M: expected an integer, got \"sixteen\"") != std::string::npos,
      bad.err);
  BOOST_TEST(!fs::exists(table));
  // A table with no fused-MoE entries has nothing to export.
  dir.write("plain.json", R"({"arch": "sm90", "format_version": 1, "kernels": {}})");
  const auto none = run_cli(
      {"export", (dir.path() / "plain.json").string(), "-o", (dir.path() / "out").string()});
  BOOST_TEST(none.code == 2);
  BOOST_TEST(none.err.find("has no fused_moe.fused_moe_kernel entries") != std::string::npos,
             none.err);
  // A differing file in the folder is refused, and kept.
  BOOST_TEST(
      run_cli({"import", (kFixtures / kPlain).string(), "--arch", "sm90", "-o", table}).code == 0);
  dir.write("out/" + kPlain, "{}\n");
  const auto clash = run_cli({"export", table, "-o", (dir.path() / "out").string()});
  BOOST_TEST(clash.code == 2);
  BOOST_TEST(clash.err.find("exists and differs") != std::string::npos, clash.err);
  BOOST_TEST(tunelock::read_file(dir.path() / "out" / kPlain) == "{}\n");
}

BOOST_AUTO_TEST_SUITE_END()
