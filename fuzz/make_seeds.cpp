// Writes the binary seeds of the fuzz corpora from the project's JSON
// fixtures, with the engine's own writers, so the fuzzers start from valid
// files of the current format: make_seeds EXAMPLES_DIR OUT_DIR.
#include <filesystem>
#include <iostream>
#include <thread>

#include "bootstrap_frames.hpp"
#include "consensus_round.hpp"
#include "crafted_tables.hpp"
#include "inductor_choices.hpp"
#include "runtime/equivalent_cache.hpp"
#include "split_input.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/base/notices.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/launch_log.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/records/audit_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/runtime/runtime.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"
#include "tunelock/verify/verify.hpp"
#include "two_rank_tree.hpp"

namespace fs = std::filesystem;
using namespace tunelock;
using tunelock::testing::mm_choices;

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

// A consensus check's timings round between two ranks over a loopback:
// the root's seed is the partial rank 1 sent, rank 1's the root's verdict;
// then each side's failure, as a bad batch makes the root send it.
void write_consensus_seeds(const fs::path& out) {
  fuzzing::Loopback loopback;
  auto run_rank = [&](int rank) {
    detail::Consensus consensus;
    fuzzing::add_first_call(consensus, rank);
    fuzzing::LoopbackRank group(loopback, rank);
    (void)consensus.exchange(group, fuzzing::consensus_sender(rank), 1);
  };
  std::thread other(run_rank, 1);
  run_rank(0);
  other.join();
  const fs::path dir = out / "consensus";
  write_file_atomically(dir / "partial.bin",
                        '\0' + fuzzing::payload_of(loopback.received[0].at(0)));
  write_file_atomically(dir / "verdict.bin",
                        '\1' + fuzzing::payload_of(loopback.received[1].at(0)));
  write_file_atomically(dir / "partial_error.bin",
                        std::string(1, '\0') + R"({"error": "a rank below failed"})");
  write_file_atomically(dir / "verdict_error.bin",
                        std::string(1, '\1') + R"({"check": 1, "error": "the root refused"})");
}

// The equivalents cache a pinned run with TUNELOCK_EQUIVALENT=timed writes.
void write_equivalent_cache_seed(const fs::path& out) {
  const fs::path file = out / "equivalent_cache" / "equivalents.json";
  detail::EquivalentCache cache;
  cache.open(file);
  for (const char* key : {"M=1", "M=2|f16"})
    cache.remember(detail::equivalent_cache_key("NVIDIA H200", "550.54", "0123456789abcdef", "sm90",
                                                "pkg.ops.mm", key),
                   "BLOCK_M=64;warps=4;stages=3");
  cache.write();
}

// A table of torch.compile's entries: a template's tile with an equivalent,
// an ATen call, a kernel filed under its bare name, and the identities of
// the code they were timed on.
InMemoryTable inductor_table() {
  const std::vector<Config> mm = mm_choices();
  InMemoryTable table("sm90");
  table.set("torch._inductor.mm", "M=64|N=64|K=32|f16", TableEntry{mm[2], {mm[1]}});
  table.set("torch._inductor.mm", "M=8|N=8|K=8|f16", TableEntry{mm[0]});
  table.set("triton_red_fused_native_layer_norm_0", "xnumel=4096|rnumel=768",
            TableEntry{make_config({{"R0_BLOCK", 1024}, {"XBLOCK", 1}}, 8, 1)});
  table.set_identities({{"torch._inductor.mm", "triton:5f0e2a9c"},
                        {"triton_red_fused_native_layer_norm_0", "triton:0b1d7e42"}});
  return table;
}

void write_inductor_seeds(const fs::path& out) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const Config& c : mm_choices()) candidates.push_back(config_to_json(c));
  const InMemoryTable table = inductor_table();
  const fs::path dir = out / "inductor_choice";
  write_file_atomically(
      dir / "json_table.txt",
      fuzzing::join_parts({candidates.dump(), table_to_json(table), "M=64|N=64|K=32|f16"}));
  write_file_atomically(
      dir / "binary_table.txt",
      fuzzing::join_parts({candidates.dump(), table_to_binary(table), "M=8|N=8|K=8|f16"}));
  write_file_atomically(dir / "no_table.txt", candidates.dump());
}

// Two ranks' record and sidecars that name different code for one kernel.
void write_identity_seeds(const fs::path& out) {
  const std::vector<Config> mm = mm_choices();
  const RecordKey key{"sm90", "torch._inductor.mm", "M=64|N=64|K=32|f16"};
  nlohmann::json record;
  record[key.arch][key.kernel][key.key] = config_to_json(mm[2]);
  std::vector<std::string> sidecars;
  for (int rank : {0, 1}) {
    RecordFile r;
    r.rank = rank;
    r.device.device_name = "NVIDIA H200";
    r.device.sm_count = 132;
    r.timings[key] = {{signature(mm[2]), 0.5, false, 0}, {signature(mm[1]), 0.6, false, 0}};
    r.identities["sm90"][key.kernel] = rank == 0 ? "triton:5f0e2a9c" : "triton:77aa01";
    sidecars.push_back(rank == 0 ? timings_to_json(r) : timings_to_binary(r));
  }
  write_file_atomically(out / "kernel_identities" / "two_ranks.txt",
                        fuzzing::join_parts({record.dump(1), sidecars[0], sidecars[1]}));
}

// A table and two ranks' choice logs, one of them in the binary form:
// answered, stale, missing and identity-mismatched keys, a bare-named
// table kernel and a consensus switch.
void write_coverage_seeds(const fs::path& out, const fs::path& examples) {
  const std::vector<Config> mm = mm_choices();
  const std::string tile = choice_log_value(signature(mm[2]), ChoiceOrigin::pinned);
  ChoiceLogFile first{0,
                      {{"sm90|torch._inductor.mm|M=64|N=64|K=32|f16", tile},
                       {"sm90|torch._inductor.mm|M=8|N=8|K=8|f16", tile},
                       {"sm90|torch._inductor.mm|M=1|N=1|K=1|f16", tile},
                       {"sm90|inductor.generated.triton_red_fused_native_layer_norm_0|"
                        "xnumel=4096|rnumel=768",
                        "R0_BLOCK=1024,XBLOCK=1;warps=8;stages=1;timed"},
                       {"consensus|torch._inductor.mm|sm90|M=2 from x at check 0", tile}},
                      ""};
  first.identities["sm90|torch._inductor.mm"] = "triton:5f0e2a9c";
  ChoiceLogFile second = first;
  second.rank = 1;
  second.identities["sm90|torch._inductor.mm"] = "triton:77aa01";
  const fs::path dir = out / "table_coverage";
  write_file_atomically(dir / "inductor.txt", fuzzing::join_parts({table_to_json(inductor_table()),
                                                                   choice_log_to_json(first),
                                                                   choice_log_to_binary(second)}));
  // The example table, whose bare-named kernels a qualified log finds.
  const ChoiceLogFile demo{
      0,
      {{"sm90|demo.ops.matmul|M=4096|N=4096|K=1024|bf16|bf16",
        "BLOCK_K=32,BLOCK_M=128,BLOCK_N=128,SPLIT_K=1;warps=8;stages=3;pinned"},
       {"sm90|demo.kernels.matmul|M=1|N=1|K=1|bf16|bf16",
        "BLOCK_K=32,BLOCK_M=64,BLOCK_N=64,SPLIT_K=4;warps=4;stages=3;pinned"},
       {"sm90|demo.kernels.rmsnorm|N=8192|bf16", "BLOCK_SIZE=512;warps=8;stages=1;pinned"}},
      "",
      {{"sm90|demo.kernels.matmul", "version:2"}}};
  write_file_atomically(dir / "example.txt",
                        fuzzing::join_parts({read_file(examples / "tables" / "sm90.json"),
                                             choice_log_to_json(demo)}));
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
  write_consensus_seeds(out);
  write_equivalent_cache_seed(out);
  write_inductor_seeds(out);
  write_identity_seeds(out);
  write_coverage_seeds(out, examples);
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
