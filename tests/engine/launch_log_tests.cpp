// Launch logs (what `tunelock watch` writes per rank) and their comparison:
// run-length encoding, digests, both file forms, corrupt files refused by
// name and path, and the first divergent step and launch named exactly.
#include <boost/test/unit_test.hpp>

#include "error_of.hpp"
#include "temp_dir.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/launch_compare.hpp"

using namespace tunelock;
using tunelock::testing::contains;
using tunelock::testing::error_of;
using tunelock::testing::TempDir;

namespace {

const LaunchShape kGemm{{128, 1, 1}, {256, 1, 1}, {0, 0, 0}, 49152, false};
const LaunchShape kGemmSplit{{128, 2, 1}, {256, 1, 1}, {0, 0, 0}, 49152, false};
const LaunchShape kNorm{{64, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, false};

// `steps` steps of: `gemms` launches of the GEMM (its shape `gemm`), one norm.
LaunchLog training(int rank, int steps, int gemms, LaunchShape gemm = kGemm,
                   std::string gemm_name = "nvjet_tst_128x64") {
  LaunchRecorder r;
  const auto g = r.kernel(gemm_name, "aa01");
  const auto n = r.kernel("triton_red_fused_0", "");
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < gemms; ++i) r.add(g, gemm);
    r.add(n, kNorm);
    r.step();
  }
  LaunchLog log = r.log(rank, "python train.py", "");
  log.origin = "run.rank" + std::to_string(rank) + ".launches.json";
  return log;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(launch_logs)

BOOST_AUTO_TEST_CASE(repeats_are_run_length_encoded_and_digested) {
  const LaunchLog log = training(0, 2, 1000000);
  BOOST_TEST(log.steps.size() == 2u);
  BOOST_TEST(log.steps[0].runs.size() == 2u);  // a million GEMMs are one run
  BOOST_TEST(log.steps[0].runs[0].count == 1000000u);
  BOOST_TEST(log.steps[0].launches == 1000001u);
  BOOST_TEST(log.total_launches() == 2000002u);
  BOOST_TEST(log.steps[0].digest.size() == 16u);
  BOOST_TEST(log.steps[0].digest == log.steps[1].digest);  // the same launches
  BOOST_TEST(training(0, 1, 999999).steps[0].digest != log.steps[0].digest);
  // A million launches stay small on disk.
  BOOST_TEST(launch_log_to_json(log).size() < 2000u);
}

BOOST_AUTO_TEST_CASE(an_open_step_is_closed_in_the_log_and_check_digests_reset) {
  LaunchRecorder r;
  BOOST_TEST(r.take_check_digest() == "none");
  const auto k = r.kernel("k", "");
  r.add(k, kNorm);
  r.add(k, kGemm);
  const std::string first = r.take_check_digest();
  BOOST_TEST(first.size() == 16u);
  BOOST_TEST(r.take_check_digest() == "none");
  r.add(k, kNorm);
  r.add(k, kGemm);
  BOOST_TEST(r.take_check_digest() == first);  // the same launches since the last check
  r.add(k, kGemm);
  r.add(k, kNorm);
  BOOST_TEST(r.take_check_digest() != first);  // the same launches in another order
  BOOST_TEST(r.log(0, "", "").steps.size() == 1u);
  BOOST_TEST(r.log(0, "", "").steps[0].launches == 6u);
}

BOOST_AUTO_TEST_CASE(json_and_binary_forms_round_trip_and_are_detected) {
  TempDir dir;
  LaunchLog log = training(3, 3, 5);
  log.kernels[0].module = "0123456789abcdef";
  log.steps = {};
  LaunchRecorder r;
  const auto k = r.kernel("cutlass_80_wmma", "0123456789abcdef");
  r.add(k, {{4, 4, 1}, {128, 1, 1}, {2, 1, 1}, 1024, true});
  r.step();
  log = r.log(3, "torchrun train.py", "");
  for (const bool binary : {false, true}) {
    const auto path = launch_log_path(dir.path() / "run", 3, binary);
    BOOST_TEST(path.filename().string() ==
               (binary ? "run.rank3.launches.tlln" : "run.rank3.launches.json"));
    write_launch_log(log, path);
    const LaunchLog back = load_launch_log(path);
    BOOST_TEST((back == log));
    BOOST_TEST(back.origin == path.string());
    const DetectedFile kind = detect_file_kind(path.string(), read_file(path));
    BOOST_TEST(to_string(kind.kind) == "launches");
    BOOST_TEST(describe(kind) == (binary ? "binary launch log" : "JSON launch log"));
  }
  BOOST_TEST(describe(log.steps[0].runs[0].shape) ==
             "grid 4x4x1 block 128x1x1 smem 1024 cluster 2x1x1 graph");
}

BOOST_AUTO_TEST_CASE(malformed_files_are_refused_by_name_and_path) {
  const std::string good = launch_log_to_json(training(0, 2, 3));
  auto refused = [](std::string text) {
    return error_of([&] { launch_log_from_bytes(text, "bad.launches.json"); });
  };
  auto replaced = [&](std::string from, std::string to) {
    std::string text = good;
    const auto at = text.find(from);
    BOOST_REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  BOOST_TEST(contains(refused("{"), "bad.launches.json"));
  BOOST_TEST(contains(refused("{\"format_version\": 1, \"rank\": 0, \"kernels\": []}"),
                      "bad.launches.json: steps: missing"));
  BOOST_TEST(contains(refused(replaced("\"format_version\":1", "\"format_version\":9")),
                      "format_version 9 is newer"));
  BOOST_TEST(contains(refused(replaced("\"kernel\":1", "\"kernel\":7")),
                      "steps[0].runs[1].kernel: 7 names no kernel"));
  BOOST_TEST(contains(refused(replaced("\"count\":3", "\"count\":0")), "steps[0].runs[0].count"));
  BOOST_TEST(contains(refused(replaced("\"count\":3", "\"count\":4")),
                      "steps[0].launches: stored 4 but its runs hold 5"));
  BOOST_TEST(
      contains(refused(replaced("\"smem\":49152", "\"smem\":1")), "steps[0].digest: stored"));
  BOOST_TEST(contains(refused(replaced("\"grid\":[128,", "\"grid\":[\"128\",")),
                      "steps[0].runs[0].grid[0]"));
  BOOST_TEST(contains(refused(replaced("\"rank\":0", "\"rank\":-1")), "bad.launches.json: rank"));

  // The binary form: a flipped byte fails the checksum, a cut file the trailer.
  std::string binary = launch_log_to_binary(training(0, 2, 3));
  std::string flipped = binary;
  flipped[flipped.size() / 2] ^= 0x20;
  BOOST_TEST(contains(error_of([&] { launch_log_from_bytes(flipped, "b.launches.tlln"); }),
                      "b.launches.tlln"));
  BOOST_TEST(
      !error_of([&] { launch_log_from_bytes(binary.substr(0, 40), "b.launches.tlln"); }).empty());
  TempDir dir;
  BOOST_TEST(contains(error_of([&] { load_launch_log(dir.path() / "absent.launches.json"); }),
                      "absent.launches.json"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(launch_compare)

BOOST_AUTO_TEST_CASE(identical_logs_compare_identical) {
  const auto result = compare_launch_logs({training(0, 4, 10), training(1, 4, 10)});
  BOOST_TEST(result.size() == 1u);
  BOOST_TEST(result[0].identical());
  BOOST_TEST(launch_comparison_exit_code(result) == 0);
  BOOST_TEST(
      contains(launch_comparisons_to_text(result), "identical (4 vs 4 steps, 44 vs 44 launches)"));
  BOOST_TEST(launch_comparisons_to_json(result)["identical"] == true);
}

BOOST_AUTO_TEST_CASE(a_shape_change_at_step_k_is_named_at_its_launch) {
  // Rank 1 agrees for two steps, then its GEMM's 8th launch of step 2 splits.
  LaunchRecorder r;
  const auto g = r.kernel("nvjet_tst_128x64", "aa01");
  const auto n = r.kernel("triton_red_fused_0", "");
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < 10; ++i) r.add(g, s == 2 && i >= 7 ? kGemmSplit : kGemm);
    r.add(n, kNorm);
    r.step();
  }
  LaunchLog other = r.log(1, "python train.py", "");
  other.origin = "run.rank1.launches.json";
  const auto result = compare_launch_logs({training(0, 4, 10), other});
  BOOST_TEST(!result[0].identical());
  BOOST_REQUIRE(result[0].first.has_value());
  BOOST_TEST(result[0].first->step == 2u);
  BOOST_TEST(result[0].first->launch == 7u);
  BOOST_TEST(describe(result[0].first->reference->shape) == describe(kGemm));
  BOOST_TEST(describe(result[0].first->other->shape) == describe(kGemmSplit));
  BOOST_REQUIRE(result[0].kernels.size() == 1u);
  BOOST_TEST(result[0].kernels[0].kernel == "nvjet_tst_128x64");
  BOOST_TEST(result[0].kernels[0].reference_only.empty());
  BOOST_TEST(result[0].kernels[0].other_only == std::vector<std::string>{describe(kGemmSplit)});
  const std::string text = launch_comparisons_to_text(result);
  BOOST_TEST(contains(text, "first difference: step 2, launch 7"));
  BOOST_TEST(contains(text, "only run.rank1.launches.json: grid 128x2x1"));
  BOOST_TEST(launch_comparison_exit_code(result) == 1);
  const auto json = launch_comparisons_to_json(result);
  BOOST_TEST(json["comparisons"][0]["first"]["launch"] == 7);
}

BOOST_AUTO_TEST_CASE(another_kernel_and_other_lengths_are_differences) {
  // A library that picked another algorithm: another kernel name.
  auto result = compare_launch_logs(
      {training(0, 3, 2), training(1, 3, 2, kGemm, "cutlass_80_tensorop_gemm")});
  BOOST_TEST(result[0].first->step == 0u);
  BOOST_TEST(result[0].first->launch == 0u);
  BOOST_TEST(result[0].kernels.size() == 2u);  // each side's kernel, the other side lacks
  // A shorter step: its launches end where the other's go on.
  result = compare_launch_logs({training(0, 2, 3), training(1, 2, 2)});
  BOOST_TEST(result[0].first->step == 0u);
  BOOST_TEST(result[0].first->launch == 2u);
  BOOST_TEST(result[0].first->reference.has_value());
  BOOST_TEST(result[0].first->other->kernel.name == "triton_red_fused_0");
  // Fewer steps: the first step one side lacks.
  result = compare_launch_logs({training(0, 3, 2), training(1, 5, 2)});
  BOOST_TEST(result[0].first->step == 3u);
  BOOST_TEST(!result[0].first->reference.has_value());
  BOOST_TEST(contains(launch_comparisons_to_text(result), "no launch: its launches ended here"));
  BOOST_TEST(result[0].kernels.empty());  // the same shapes, only more of them
  // Three logs: each after the first against the first.
  result = compare_launch_logs({training(0, 2, 2), training(1, 2, 2), training(2, 2, 3)});
  BOOST_TEST(result.size() == 2u);
  BOOST_TEST(result[0].identical());
  BOOST_TEST(!result[1].identical());
  BOOST_TEST(launch_comparison_exit_code(result) == 1);
}

BOOST_AUTO_TEST_CASE(an_unobserved_log_never_compares_identical) {
  LaunchLog unobserved = training(1, 0, 0);
  unobserved.note = "another CUPTI subscriber held CUPTI";
  const auto result = compare_launch_logs({training(0, 0, 0), unobserved});
  BOOST_TEST(!result[0].identical());
  BOOST_TEST(contains(launch_comparisons_to_text(result), "nothing was observed"));
  BOOST_TEST(contains(error_of([&] { compare_launch_logs({training(0, 1, 1)}); }),
                      "two launch logs or more"));
}

BOOST_AUTO_TEST_SUITE_END()
