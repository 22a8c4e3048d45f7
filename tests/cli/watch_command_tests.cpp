// `tunelock watch` as a user runs it: compare's verdicts and exit codes (0
// identical, 1 differ, 2 bad input) on logs the project's own writer made,
// and running a command: its exit status passed on, the watch library
// looked for and named when missing.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "temp_dir.hpp"
#include "tunelock/logs/launch_log.hpp"

using namespace tunelock;
using tunelock::testing::run_cli;
using tunelock::testing::TempDir;

namespace {

// `steps` steps of 4 launches of a GEMM and one of a norm; from step
// `split` on, the GEMM's last launch uses a split grid.
std::string write_log(const TempDir& dir, const std::string& name, int rank, int steps,
                      int split = -1) {
  LaunchRecorder r;
  const auto gemm = r.kernel("nvjet_tst_128x64", "aa01");
  const auto norm = r.kernel("triton_red_fused_0", "");
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < 4; ++i)
      r.add(gemm, {{128, s >= split && split >= 0 && i == 3 ? 2u : 1u, 1}, {256, 1, 1}});
    r.add(norm, {{64, 1, 1}, {128, 1, 1}});
    r.step();
  }
  const auto path = dir.path() / name;
  write_launch_log(r.log(rank, "python train.py", ""), path);
  return path.string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(watch_command)

BOOST_AUTO_TEST_CASE(compare_says_identical_or_names_the_first_difference) {
  TempDir dir;
  const auto a = write_log(dir, "run.rank0.launches.json", 0, 3);
  const auto b = write_log(dir, "run.rank1.launches.tlln", 1, 3);
  const auto c = write_log(dir, "run.rank2.launches.json", 2, 3, /*split=*/1);
  const auto same = run_cli({"watch", "compare", a, b});
  BOOST_TEST(same.code == 0, same.err);
  BOOST_TEST(same.out.find("identical (3 vs 3 steps, 15 vs 15 launches)") != std::string::npos,
             same.out);
  const auto differ = run_cli({"watch", "compare", a, b, c});
  BOOST_TEST(differ.code == 1);
  BOOST_TEST(differ.out.find("first difference: step 1, launch 3") != std::string::npos,
             differ.out);
  BOOST_TEST(differ.out.find("kernel nvjet_tst_128x64") != std::string::npos);
  const auto json = run_cli({"watch", "compare", "--json", a, c});
  BOOST_TEST(json.code == 1);
  const auto parsed = nlohmann::json::parse(json.out);
  BOOST_TEST(parsed["identical"] == false);
  BOOST_TEST(parsed["comparisons"][0]["first"]["step"] == 1);
  BOOST_TEST(parsed["comparisons"][0]["first"]["other"]["shape"] ==
             "grid 128x2x1 block 256x1x1 smem 0");
  // Another length: the shorter run's launches end at the longer's step 2.
  const auto shorter = write_log(dir, "short.rank0.launches.json", 0, 2);
  const auto lengths = run_cli({"watch", "compare", a, shorter});
  BOOST_TEST(lengths.code == 1);
  BOOST_TEST(lengths.out.find("step 2, launch 0") != std::string::npos, lengths.out);
}

BOOST_AUTO_TEST_CASE(bad_logs_and_arguments_exit_2_naming_the_file) {
  TempDir dir;
  const auto a = write_log(dir, "run.rank0.launches.json", 0, 1);
  const auto corrupt = dir.write("bad.rank0.launches.json", "{\"format_version\": 1, \"rank\": 0}");
  const auto bad = run_cli({"watch", "compare", a, corrupt.string()});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err.find("bad.rank0.launches.json: kernels: missing") != std::string::npos,
             bad.err);
  const auto missing = run_cli({"watch", "compare", a, (dir.path() / "absent.json").string()});
  BOOST_TEST(missing.code == 2);
  BOOST_TEST(missing.err.find("absent.json") != std::string::npos, missing.err);
  BOOST_TEST(run_cli({"watch", "compare", a}).code == 2);  // one log compares with nothing
  const auto no_command = run_cli({"watch"});
  BOOST_TEST(no_command.code == 2);
  BOOST_TEST(no_command.err.find("no command given") != std::string::npos, no_command.err);
}

#ifdef TUNELOCK_WATCH_LIBRARY_FILE
BOOST_AUTO_TEST_CASE(running_a_command_passes_its_exit_status_on) {
  TempDir dir;
  // The real watch library: CUDA never loads it for these commands.
  const Environment env{{"TUNELOCK_WATCH_LIBRARY", TUNELOCK_WATCH_LIBRARY_FILE}};
  const std::string out = (dir.path() / "w").string();
  BOOST_TEST(run_cli({"watch", "--out", out, "--", "sh", "-c", "exit 3"}, env).code == 3);
  BOOST_TEST(run_cli({"watch", "--out", out, "--", "true"}, env).code == 0);
  BOOST_TEST(run_cli({"watch", "--out", out, "--", "sh", "-c", "kill -TERM $$"}, env).code ==
             128 + 15);
  BOOST_TEST(run_cli({"watch", "--out", out, "--", "/no/such/program"}, env).code == 127);
  const auto absent = run_cli({"watch", "--", "true"},
                              {{"TUNELOCK_WATCH_LIBRARY", (dir.path() / "none.so").string()}});
  BOOST_TEST(absent.code == 2);
  BOOST_TEST(absent.err.find("TUNELOCK_WATCH_LIBRARY: no such file") != std::string::npos,
             absent.err);
}

// The run must not start when its log cannot be written, nor with a
// library that is not the watch: a long job would end with nothing.
BOOST_AUTO_TEST_CASE(an_out_prefix_that_cannot_be_written_or_another_library_stops_before_the_run) {
  TempDir dir;
  const Environment env{{"TUNELOCK_WATCH_LIBRARY", TUNELOCK_WATCH_LIBRARY_FILE}};
  const auto marker = dir.path() / "ran";
  const std::vector<std::string> command{"--", "touch", marker.string()};
  auto watch = [&](const std::string& out, const Environment& e) {
    std::vector<std::string> args{"watch", "--out", out};
    args.insert(args.end(), command.begin(), command.end());
    return run_cli(args, e);
  };
  const auto missing = watch("/proc/nonexistent/x", env);
  BOOST_TEST(missing.code == 2);
  BOOST_TEST(
      missing.err.find("watch --out /proc/nonexistent/x: no such directory /proc/nonexistent") !=
          std::string::npos,
      missing.err);
  const auto other = dir.write("libother.so", "not a shared library at all");
  const auto wrong =
      watch((dir.path() / "w").string(), {{"TUNELOCK_WATCH_LIBRARY", other.string()}});
  BOOST_TEST(wrong.code == 2);
  BOOST_TEST(wrong.err.find("cannot load the watch library " + other.string()) != std::string::npos,
             wrong.err);
  const auto not_watch = watch((dir.path() / "w").string(),
                               {{"TUNELOCK_WATCH_LIBRARY", TUNELOCK_OTHER_SHARED_LIBRARY}});
  BOOST_TEST(not_watch.code == 2);
  BOOST_TEST(not_watch.err.find("is not the tunelock watch library") != std::string::npos,
             not_watch.err);
  BOOST_TEST(!std::filesystem::exists(marker));  // the command never ran
}

// A folder that goes away during a long run: the log is lost, and watch
// says why (not "the command never initialised CUDA") and exits 74.
BOOST_AUTO_TEST_CASE(a_log_that_cannot_be_written_at_exit_is_named_with_its_cause) {
  TempDir dir;
  const auto folder = dir.path() / "logs";
  std::filesystem::create_directory(folder);
  const Environment env{{"TUNELOCK_WATCH_LIBRARY", TUNELOCK_WATCH_LIBRARY_FILE}};
  const auto lost = run_cli(
      {"watch", "--out", (folder / "w").string(), "--", TUNELOCK_WATCHED_FOLDER_REMOVED}, env);
  BOOST_TEST(lost.code == 74);
  BOOST_TEST(
      lost.err.find("tunelock watch: a launch log was not written: rank 0: ") != std::string::npos,
      lost.err);
  BOOST_TEST(lost.err.find((folder / "w.rank0.launches.json").string()) != std::string::npos,
             lost.err);
  BOOST_TEST(lost.err.find("never initialised CUDA") == std::string::npos, lost.err);
  // The command's own failure stays its exit status.
  std::filesystem::remove(folder);
  std::filesystem::create_directory(folder);
  const auto failed = run_cli({"watch", "--out", (folder / "w").string(), "--", "sh", "-c",
                               std::string(TUNELOCK_WATCHED_FOLDER_REMOVED) + "; exit 5"},
                              env);
  BOOST_TEST(failed.code == 5);
  BOOST_TEST(failed.err.find("a launch log was not written") != std::string::npos, failed.err);
}
#endif

BOOST_AUTO_TEST_SUITE_END()
