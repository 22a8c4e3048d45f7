// The CUDA backend measured on a GPU, in one run (ratios within the run):
//   dispatch   cached family call vs a raw <<<>>> launch of the same kernel
//   per shape  GEMM time per call: pinned with a recorded table vs timed
//              `auto` vs the cheapest fallback
//   cold start until every family has run once: pinned vs timed
//   bits       distinct output bits per config; pinned runs repeat their
//              bits; what the record-mode audit flags
// Prints a plain report; exits 0 with a message where there is no GPU.
#include <cuda_runtime_api.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "gpu_families.hpp"
#include "gpu_kernels.hpp"
#include "tunelock/cuda/cuda_backend.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/merge_report.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
namespace gpu = tunelock::demo::gpu;
using Clock = std::chrono::steady_clock;

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

struct Shape {
  int m, n, k;
};
const std::vector<Shape> kShapes = {
    {128, 128, 8192}, {256, 256, 4096}, {512, 512, 2048}, {1024, 1024, 1024}};

struct Buffers {
  float *a, *b, *c, *work;
  explicit Buffers(std::size_t floats) {
    for (float** p : {&a, &b, &c, &work}) {
      check(cudaMalloc(reinterpret_cast<void**>(p), floats * gpu::kMaxSplit * sizeof(float)),
            "cudaMalloc");
      check(cudaMemset(*p, 0, floats * gpu::kMaxSplit * sizeof(float)), "cudaMemset");
    }
    std::vector<float> init(floats);
    std::uint32_t s = 7;
    for (float& v : init)
      v = static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    check(cudaMemcpy(a, init.data(), floats * sizeof(float), cudaMemcpyHostToDevice), "upload");
    check(cudaMemcpy(b, init.data(), floats * sizeof(float), cudaMemcpyHostToDevice), "upload");
  }
  ~Buffers() {
    for (float* p : {a, b, c, work}) cudaFree(p);
  }
};

// A runtime + launcher + the GEMM family under one policy.
struct Harness {
  Notices notices;
  Runtime runtime{0, notices};
  launcher::Launcher launcher;
  gpu::GemmFamily gemm;
  gpu::RowSumFamily rows;
  Harness(cuda::CudaBackend& backend, const Policy& policy, launcher::TuningOptions tuning = {})
      : launcher((runtime.install(policy), backend), runtime, tuning),
        gemm(launcher, {"demo.gpu", "gemm_splitk"}, {"M", "N", "K"}, gpu::gemm_variants(),
             gpu::gemm_hooks()),
        rows(launcher, {"demo.gpu", "row_sum"}, {"ROWS", "COLS"}, gpu::row_sum_variants(),
             gpu::row_sum_hooks()) {}
  void call(const Shape& s, Buffers& b, cudaStream_t stream) {
    gemm({s.m, s.n, s.k}, {"f32", "f32"}, stream, b.a, b.b, b.c, b.work, s.m, s.n, s.k);
  }
};

// Auto mode logs what timing chose only when verification is on: turned
// on (never due) so the report can name auto's choices.
Policy policy(Mode mode, const std::string& record = {}, const std::string& tables = {}) {
  Policy p;
  p.mode = mode;
  if (mode == Mode::automatic) p.verify_every = 1 << 30;
  p.record_path = record;
  if (!tables.empty()) p.table_path = {tables};
  return p;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Microseconds per call of `launch`, over `calls` launches (host time to
// enqueue them all and drain the stream).
template <typename Launch>
double us_per_call(cudaStream_t stream, int calls, Launch launch) {
  check(cudaStreamSynchronize(stream), "sync");
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) launch();
  check(cudaStreamSynchronize(stream), "sync");
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls;
}

// Host microseconds per call to enqueue 256 launches on an idle stream.
template <typename Launch>
double enqueue_us(cudaStream_t stream, Launch launch) {
  check(cudaStreamSynchronize(stream), "sync");
  const auto start = Clock::now();
  for (int i = 0; i < 256; ++i) launch();
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / 256;
  check(cudaStreamSynchronize(stream), "sync");
  return us;
}

// GPU milliseconds per call, by events around `calls` launches.
template <typename Launch>
double gpu_ms_per_call(cudaStream_t stream, int calls, Launch launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  launch();  // warm
  cudaEventRecord(start, stream);
  for (int i = 0; i < calls; ++i) launch();
  cudaEventRecord(stop, stream);
  check(cudaEventSynchronize(stop), "events");
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / calls;
}

std::uint64_t hash_of(const float* device, std::size_t floats) {
  std::vector<float> host(floats);
  check(cudaMemcpy(host.data(), device, floats * sizeof(float), cudaMemcpyDeviceToHost),
        "download");
  return XXH3_64bits(host.data(), floats * sizeof(float));
}

void dispatch(cuda::CudaBackend& backend, cudaStream_t stream) {
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(policy(Mode::pinned));
  launcher::Launcher launcher(backend, runtime);
  launcher::KernelFamily<cudaStream_t> empty(launcher, {"bench.gpu", "empty"}, {},
                                             {{make_config({{"BLOCK", 32}}), gpu::empty_kernel},
                                              {make_config({{"BLOCK", 64}}), gpu::empty_kernel}});
  empty({}, {}, stream);
  std::vector<double> raw, family;
  for (int round = 0; round < 7; ++round) {
    raw.push_back(us_per_call(stream, 20000, [&] { gpu::empty_kernel(stream); }));
    family.push_back(us_per_call(stream, 20000, [&] { empty({}, {}, stream); }));
  }
  std::printf(
      "dispatch (empty kernel, 20k calls x 7 rounds, medians): raw <<<>>> %.3f us/call, "
      "family %.3f us/call, extra %.3f us\n",
      median(raw), median(family), median(family) - median(raw));
  // Enqueue cost alone: batches short enough never to wait on a full queue.
  std::vector<double> raw_enqueue, family_enqueue;
  for (int round = 0; round < 200; ++round) {
    raw_enqueue.push_back(enqueue_us(stream, [&] { gpu::empty_kernel(stream); }));
    family_enqueue.push_back(enqueue_us(stream, [&] { empty({}, {}, stream); }));
  }
  std::printf(
      "enqueue only (batches of 256, 200 rounds, medians): raw <<<>>> %.3f us/call, "
      "family %.3f us/call, extra %.3f us\n",
      median(raw_enqueue), median(family_enqueue), median(family_enqueue) - median(raw_enqueue));
}

void per_shape_and_cold_start(cuda::CudaBackend& backend, cudaStream_t stream,
                              const std::filesystem::path& dir) {
  Buffers buffers(1024 * 1024);
  const std::string record = (dir / "rec").string();
  // Timed (auto) and record runs: cold start of the timed path, too.
  auto cold = [&](const Policy& p, Harness*& out, launcher::TuningOptions tuning = {}) {
    const auto start = Clock::now();
    out = new Harness(backend, p, tuning);
    for (const Shape& s : kShapes) out->call(s, buffers, stream);
    check(cudaStreamSynchronize(stream), "sync");
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  Harness *timed = nullptr, *recorder = nullptr, *pinned = nullptr, *cheapest = nullptr;
  const double cold_timed = cold(policy(Mode::automatic), timed);
  // What an autotuner with Triton's default budget (25 ms warm-up, 100 ms of
  // repeats per config: roughly 25 + 100 runs of these kernels) spends.
  Harness* triton_budget = nullptr;
  const double cold_triton_budget = cold(policy(Mode::automatic), triton_budget, {25, 100});
  delete triton_budget;
  cold(policy(Mode::record, record), recorder);
  recorder->runtime.flush();
  const MergeResult merged = merge_records({load_record_file(record + ".rank0.json")}, "", "");
  write_file_atomically(dir / (backend.current_arch() + ".json"), table_to_json(*merged.table));
  const double cold_pinned = cold(policy(Mode::pinned, "", dir.string()), pinned);
  cold(policy(Mode::pinned), cheapest);

  std::printf("\nper shape (GPU ms per call, 50 calls; ratio = throughput vs timed auto):\n");
  std::printf("%-16s %10s %10s %10s %8s %8s  %s\n", "M,N,K", "auto", "pinned", "cheapest",
              "pin/auto", "chp/auto", "configs (auto | pinned | cheapest)");
  for (const Shape& s : kShapes) {
    auto time_of = [&](Harness* h) {
      return gpu_ms_per_call(stream, 50, [&] { h->call(s, buffers, stream); });
    };
    const double t_auto = time_of(timed), t_pinned = time_of(pinned), t_cheap = time_of(cheapest);
    const std::string key = "M=" + std::to_string(s.m) + "|N=" + std::to_string(s.n) +
                            "|K=" + std::to_string(s.k) + "|f32|f32";
    auto chosen = [&](Harness* h) {
      const auto log = h->runtime.choice_log().snapshot();
      const auto found = log.find(backend.current_arch() + "|demo.gpu.gemm_splitk|" + key);
      return found == log.end() ? std::string("?") : found->second;
    };
    std::printf(
        "%-16s %10.4f %10.4f %10.4f %8.3f %8.3f  %s | %s | %s\n",
        (std::to_string(s.m) + "," + std::to_string(s.n) + "," + std::to_string(s.k)).c_str(),
        t_auto, t_pinned, t_cheap, t_auto / t_pinned, t_auto / t_cheap, chosen(timed).c_str(),
        chosen(pinned).c_str(), chosen(cheapest).c_str());
  }
  std::printf(
      "\ncold start (%zu GEMM shapes x %zu configs, until each shape has run once, table "
      "load included):\n  pinned with table %.2f ms; timed auto (1 warm-up + 5 repeats "
      "per config) %.1f ms: %.0fx; timed with 25 + 100 runs per config %.1f ms: %.0fx\n",
      kShapes.size(), gpu::gemm_variants().size(), cold_pinned, cold_timed,
      cold_timed / cold_pinned, cold_triton_budget, cold_triton_budget / cold_pinned);
  const std::string report = disagreement_report(merged.disagreements);
  std::printf("record-mode audit: %s", report.empty() ? "nothing flagged\n" : report.c_str());
  for (Harness* h : {timed, recorder, pinned, cheapest}) delete h;
}

void bits(cuda::CudaBackend& backend, cudaStream_t stream) {
  Buffers buffers(512 * 512);
  const Shape s{256, 256, 4096};
  const auto variants = gpu::gemm_variants();
  std::set<std::uint64_t> distinct;
  std::printf("\nbits (GEMM %d,%d,%d; each config run twice):\n", s.m, s.n, s.k);
  for (const auto& v : variants) {
    std::uint64_t runs[2];
    for (std::uint64_t& h : runs) {
      v.launch(stream, buffers.a, buffers.b, buffers.c, buffers.work, s.m, s.n, s.k);
      check(cudaStreamSynchronize(stream), "run");
      h = hash_of(buffers.c, static_cast<std::size_t>(s.m) * s.n);
    }
    distinct.insert(runs[0]);
    std::printf("  %-44s %016llx %s\n", signature(v.config).c_str(),
                static_cast<unsigned long long>(runs[0]),
                runs[0] == runs[1] ? "repeats its bits" : "CHANGED between two runs");
  }
  std::printf("  %zu configs, %zu distinct outputs\n", variants.size(), distinct.size());
  std::uint64_t pinned_runs[2];
  for (std::uint64_t& h : pinned_runs) {
    Harness fresh(backend, policy(Mode::pinned));
    fresh.call(s, buffers, stream);
    check(cudaStreamSynchronize(stream), "run");
    h = hash_of(buffers.c, static_cast<std::size_t>(s.m) * s.n);
  }
  std::printf("  two pinned runs (fresh launchers): %s\n",
              pinned_runs[0] == pinned_runs[1] ? "identical bits" : "DIFFERENT bits");
}

}  // namespace

int main() {
  if (auto reason = cuda::unavailable_reason()) {
    std::printf("cuda_bench skipped: no usable GPU (%s)\n", reason->c_str());
    return 0;
  }
  cuda::CudaBackend backend;
  const Provenance device = backend.device();
  std::printf("%s (%s, %lld SMs), driver %s, runtime %s\n", device.device_name.c_str(),
              backend.current_arch().c_str(), static_cast<long long>(device.sm_count),
              device.driver_version.c_str(), device.cuda_version.c_str());
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const auto dir =
      std::filesystem::temp_directory_path() / ("tunelock-cuda-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  dispatch(backend, stream);
  per_shape_and_cold_start(backend, stream, dir);
  bits(backend, stream);
  std::filesystem::remove_all(dir);
  cudaStreamDestroy(stream);
  return 0;
}
