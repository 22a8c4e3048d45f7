// Writes the binary seeds of the fuzz corpora from the project's JSON
// fixtures, with the engine's own writers, so the fuzzers start from valid
// files of the current format: make_seeds EXAMPLES_DIR OUT_DIR.
#include <filesystem>
#include <iostream>
#include <thread>

#include "bootstrap_frames.hpp"
#include "crafted_tables.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/base/notices.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/launch_log.hpp"
#include "tunelock/records/audit_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/runtime/runtime.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"
#include "tunelock/verify/verify.hpp"
#include "two_rank_tree.hpp"

namespace fs = std::filesystem;
using namespace tunelock;

// A check between two ranks that disagree on one key, over a loopback:
// what each rank received is the seed for its side of fuzz_verify_tree.
void write_verify_tree_seeds(const fs::path& out) {
  fuzzing::Loopback loopback;
  auto run_rank = [&](int rank) {
    Notices notices;
    Runtime runtime(rank, notices);
    const Config mine = make_config({{"BLOCK_M", rank == 0 ? 64 : 128}}, 4, 3);
    runtime.log_choice("sm90", KernelId{"fuzz.ops", "mm"}, "M=1", mine, ChoiceOrigin::pinned);
    runtime.log_choice("sm90", KernelId{"fuzz.ops", "mm"}, "M=2",
                       make_config({{"BLOCK_M", 64}}, 4, 3), ChoiceOrigin::pinned);
    fuzzing::LoopbackRank group(loopback, rank);
    (void)runtime.verify(group);
  };
  logger().set_level(spdlog::level::off);  // the conflict is the point
  std::thread other(run_rank, 1);
  run_rank(0);
  other.join();
  for (int rank : {0, 1}) {
    write_file_atomically(out / "verify_tree" / ("rank" + std::to_string(rank) + ".bin"),
                          fuzzing::encode_tree_input({rank, loopback.received[rank]}));
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_seeds EXAMPLES_DIR OUT_DIR\n";
    return 2;
  }
  const fs::path examples = argv[1], out = argv[2];
  for (const auto& entry : fs::directory_iterator(examples / "tables")) {
    if (entry.path().extension() != ".json") continue;
    const auto table = table_from_json(read_file(entry.path()), entry.path().string());
    write_file_atomically(out / "table_binary" / entry.path().filename().replace_extension(".tlb"),
                          table_to_binary(*table));
  }
  {  // the numerics members: a kernel's flagged configs, an entry's equivalents
    auto table = table_from_json(R"({"arch": "sm90", "kernels": {"pkg.mv": {"K=1|f32": {
      "kwargs": {"BLOCK_K": 64, "SPLIT": 1}, "num_warps": 4, "num_stages": 1,
      "equivalent": [{"kwargs": {"BLOCK_K": 64, "SPLIT": 1}, "num_warps": 8, "num_stages": 1}]}}},
      "nondeterministic": {"pkg.mv": ["BLOCK_K=64,SPLIT=4;warps=2;stages=1"]}})",
                                 "seed");
    write_file_atomically(out / "table_binary" / "numerics.tlb", table_to_binary(*table));
    write_file_atomically(out / "table_json" / "numerics.json", table_to_json(*table));
  }
  // Offsets aliasing one kernel and one key list: refused before the verifier.
  write_file_atomically(out / "table_binary" / "aliased_kernels.tlb",
                        testing::aliased_table(2'000, 2'000, true));
  write_file_atomically(out / "table_binary" / "aliased_keys.tlb",
                        testing::aliased_table(200, 2'000, false));
  RecordFile record;
  add_timings_from_json(record, R"({"format_version": 1, "rank": 0,
    "device": {"device_name": "NVIDIA H200", "sm_count": 132},
    "timings": {"sm90": {"demo.ops.softmax": {"N=1|f32": [
      {"signature": "BLOCK_SIZE=1024;warps=8;stages=2", "median_ms": 0.25, "class": 0},
      {"signature": "BLOCK_SIZE=512;warps=4;stages=2", "median_ms": null,
       "nondeterministic": true}]}}}})",
                        "seed");
  write_file_atomically(out / "timings" / "seed.timings.json", timings_to_json(record));
  write_file_atomically(out / "timings" / "seed.timings.tlrt", timings_to_binary(record));
  const ChoiceLogFile log{
      1,
      {{"sm90|demo.ops.softmax|N=1|f32", "BLOCK_SIZE=1024;warps=8;stages=2;pinned"},
       {"sm90|demo.ops.norm|N=8", "BLOCK=64;warps=4;stages=3;timed"}},
      ""};
  write_file_atomically(out / "choice_log" / "seed.rank1.json", choice_log_to_json(log));
  write_file_atomically(out / "choice_log" / "seed.rank1.tlcl", choice_log_to_binary(log));
  std::vector<ChoiceEntry> entries;
  for (const auto& [key, value] : log.entries) entries.push_back({key, value});
  write_file_atomically(out / "verify_batch" / "seed.bin", encode_batch(1, entries));
  write_verify_tree_seeds(out);
  AuditFile audit;
  audit.rank = 0;
  audit.entries.push_back({"sm90",
                           "demo.ops.softmax",
                           "N=1|f32",
                           "BLOCK_SIZE=1024;warps=8;stages=2",
                           "table",
                           false,
                           true,
                           {"BLOCK_SIZE=512;warps=4;stages=2"},
                           {{"BLOCK_SIZE=1024;warps=8;stages=2", 0.5},
                            {"BLOCK_SIZE=512;warps=4;stages=2", 0.4, true},
                            {"BLOCK_SIZE=256;warps=4;stages=2", std::nullopt}},
                           7});
  write_file_atomically(out / "audit" / "seed.rank0.audit.json", audit_to_json(audit));
  LaunchRecorder recorder;
  const std::uint32_t gemm = recorder.kernel("nvjet_tst_128x64_64x4", "5f0e2a9c81d3b7e4");
  const std::uint32_t norm = recorder.kernel("triton_red_fused_0", "");
  for (int i = 0; i < 3; ++i)
    recorder.add(gemm, {{128, 1, 1}, {256, 1, 1}, {2, 1, 1}, 1024, false});
  recorder.add(norm, {{64, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, true});
  recorder.step();
  recorder.add(norm, {{64, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, false});
  const LaunchLog launches = recorder.log(0, "python train.py", "");
  write_file_atomically(out / "launches" / "seed.rank0.launches.json",
                        launch_log_to_json(launches));
  write_file_atomically(out / "launches" / "seed.rank0.launches.tlln",
                        launch_log_to_binary(launches));
  write_file_atomically(out / "policy_environment" / "seed.env",
                        "TUNELOCK_MODE=pinned\nTUNELOCK_ON_MISS=error\nTUNELOCK_VERIFY_EVERY=10\n"
                        "TUNELOCK_TABLE_PATH=tables\nTUNELOCK_CHAOS=0\n");
  flatbuffers::FlatBufferBuilder b;
  const std::string address = "ucx-worker-address";
  const auto token = b.CreateString("job-42");
  const auto bytes =
      b.CreateVector(reinterpret_cast<const std::uint8_t*>(address.data()), address.size());
  fb::FinishHelloBuffer(b, fb::CreateHello(b, 1, token, 1, 4, bytes));
  write_file_atomically(
      out / "bootstrap_hello" / "hello.bin",
      launcher::bootstrap::frame(
          'H', {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()}));
  return 0;
}
