// The CUDA backend on a real GPU: arch and provenance, pinned and timed
// calls on real kernels, the self-determinism audit, graph capture, failing
// variants, and loaded modules (cubin, fatbin, PTX, Triton's metadata).
// GPU cases skip with a message where there is no usable GPU; the host
// backend's suites cover the same logic in CI.
#define BOOST_TEST_MODULE tunelock cuda
#include <boost/test/unit_test.hpp>

#include <cuda_runtime_api.h>

#include <cstring>
#include <set>

#include "captured_log.hpp"
#include "compiled_kernels.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/cuda/cuda_backend.hpp"
#include "tunelock/cuda/loaded_kernel.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/merge_report.hpp"
#include "tunelock/records/record_file.hpp"

using namespace tunelock;
using namespace tunelock::launcher;
using tunelock::testing::CapturedLog;
using tunelock::testing::TempDir;
namespace kernels = tunelock::testing::gpu;

namespace {

boost::test_tools::assertion_result have_gpu(boost::unit_test::test_unit_id) {
  const auto reason = cuda::unavailable_reason();
  boost::test_tools::assertion_result result(!reason);
  if (reason) result.message() << "skipped: no usable GPU here (" << *reason << ")";
  return result;
}

void check(cudaError_t status) {
  BOOST_TEST_REQUIRE(status == cudaSuccess, cudaGetErrorString(status));
}

// Device floats with an upload and a download.
class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t count) : count_(count) {
    check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(float)));
    check(cudaMemset(data_, 0, count * sizeof(float)));
  }
  explicit DeviceFloats(const std::vector<float>& host) : DeviceFloats(host.size()) {
    check(cudaMemcpy(data_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~DeviceFloats() { cudaFree(data_); }
  float* get() const { return data_; }
  std::size_t bytes() const { return count_ * sizeof(float); }
  std::vector<float> download() const {
    std::vector<float> out(count_);
    check(cudaDeviceSynchronize());
    check(cudaMemcpy(out.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  float* data_ = nullptr;
  std::size_t count_;
};

// Values of mixed magnitudes: sums in different orders round differently.
std::vector<float> mixed_values(std::size_t n) {
  std::vector<float> out(n);
  std::uint32_t state = 12345;
  for (float& v : out) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / 16777216.0f * ((state & 1) ? 1000.0f : 0.001f);
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The backend, counting timing requests.
class CountingCuda final : public Backend {
 public:
  std::size_t arch_slot() const override { return gpu.arch_slot(); }
  std::string arch(std::size_t slot) const override { return gpu.arch(slot); }
  Provenance device() const override { return gpu.device(); }
  std::vector<double> time(const std::function<void()>& before, const std::function<void()>& launch,
                           const std::function<void()>& after, int warmup, int repeats) override {
    ++timings;
    return gpu.time(before, launch, after, warmup, repeats);
  }
  void* timing_stream() override { return gpu.timing_stream(); }
  bool capturing(void* stream) const override { return gpu.capturing(stream); }
  void zero(BufferRef b) override { gpu.zero(b); }
  std::vector<std::byte> save(BufferRef b) override { return gpu.save(b); }
  void restore(BufferRef b, const std::vector<std::byte>& s) override { gpu.restore(b, s); }

  int timings = 0;
  cuda::CudaBackend gpu;
};

struct Setup {
  Notices notices;
  Runtime runtime{0, notices};
  CountingCuda backend;
  Launcher launcher{backend, runtime, TuningOptions{1, 3}};
  cudaStream_t stream = nullptr;

  explicit Setup(const Policy& policy = {}) {
    runtime.install(policy);
    check(cudaStreamCreate(&stream));
  }
  ~Setup() { cudaStreamDestroy(stream); }
};

Policy with_mode(Mode mode, const std::filesystem::path& record = {}) {
  Policy p;
  p.mode = mode;
  if (!record.empty()) p.record_path = record.string();
  return p;
}

// (stream, x, out, n): out[0] = total of x.
using TotalFamily = KernelFamily<cudaStream_t, const float*, float*, int>;

std::vector<TotalFamily::Variant> totals() {
  return {{make_config({{"BLOCK", 1}}, 1, 1), kernels::serial_total},
          {make_config({{"ATOMIC", 1}, {"BLOCK", 256}}, 8, 4), kernels::atomic_total}};
}

TotalFamily::Hooks total_outputs() {
  TotalFamily::Hooks hooks;
  hooks.outputs = [](cudaStream_t, const float*, float* out, int) {
    return std::vector<NamedBuffer>{{"out", {out, sizeof(float)}}};
  };
  return hooks;
}

// (stream, x, y, n): y = 2x, one variant asks for more shared memory than any GPU has.
using ScaleFamily = KernelFamily<cudaStream_t, const float*, float*, int>;

std::vector<ScaleFamily::Variant> scalers() {
  return {{make_config({{"BLOCK", 64}}, 2, 1),
           [](cudaStream_t s, const float* x, float* y, int n) {
             kernels::scale_with_shared(s, x, y, n, 2.0f, 1u << 30);
           }},
          {make_config({{"BLOCK", 256}}, 8, 1), [](cudaStream_t s, const float* x, float* y,
                                                   int n) { kernels::scale(s, x, y, n, 2.0f); }}};
}

std::filesystem::path module_file(const char* extension) {
  return std::filesystem::path(TUNELOCK_TEST_MODULES) /
         (std::string("module_kernels.") + extension);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(triton_metadata)

BOOST_AUTO_TEST_CASE(triton_metadata_becomes_a_launch_of_warps_times_32_threads) {
  const std::string text =
      read_file(std::filesystem::path(TUNELOCK_TEST_SOURCES) / "triton_like_row_sum.json");
  const cuda::LaunchSpec spec = cuda::triton_launch_spec(text, "row_sum.json");
  BOOST_TEST(spec.function == "tl_triton_like_row_sum");
  BOOST_TEST(spec.threads == 128u);
  BOOST_TEST(spec.shared_bytes == 512u);
  BOOST_TEST(spec.scratch_arguments);
  BOOST_TEST(spec.global_scratch_bytes == 64u);
  BOOST_TEST(spec.global_scratch_align == 16u);
  BOOST_TEST(spec.profile_scratch_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(bad_triton_metadata_names_the_file_and_field) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "m.json: not valid JSON"},
      {"[]", "m.json: expected Triton's metadata object"},
      {R"({"num_warps": 4})", "m.json: name: expected the kernel's name"},
      {R"({"name": "k"})", "m.json: num_warps: missing"},
      {R"({"name": "k", "num_warps": 0})", "m.json: num_warps: expected 1 to 32, got 0"},
      {R"({"name": "k", "num_warps": -4})", "m.json: num_warps: expected an integer from 0 to 32"},
      {R"({"name": "k", "num_warps": 4, "shared": "lots"})", "m.json: shared: expected an integer"},
      {R"({"name": "k", "num_warps": 4, "num_ctas": 2})", "m.json: num_ctas > 1"},
  };
  for (const auto& [text, expected] : cases) {
    std::string message;
    try {
      cuda::triton_launch_spec(text, "m.json");
    } catch (const Error& e) {
      message = e.what();
    }
    BOOST_TEST_INFO("input: " << text << "\nmessage: " << message);
    BOOST_TEST(message.find(expected) != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(no_gpu_is_one_clear_error_naming_the_cuda_error) {
  const auto reason = cuda::unavailable_reason();
  if (!reason) {
    BOOST_TEST_MESSAGE("a GPU is present: CudaBackend must construct");
    BOOST_CHECK_NO_THROW(cuda::CudaBackend());
    return;
  }
  std::string message;
  try {
    cuda::CudaBackend backend;
  } catch (const Error& e) {
    message = e.what();
  }
  BOOST_TEST(message.find("no usable CUDA GPU") != std::string::npos);
  BOOST_TEST(message.find("cudaGetDeviceCount") != std::string::npos);
  BOOST_TEST(message.find(*reason) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cuda_backend, *boost::unit_test::precondition(have_gpu))

BOOST_AUTO_TEST_CASE(arch_and_provenance_describe_the_current_device) {
  cuda::CudaBackend backend;
  int device = 0;
  check(cudaGetDevice(&device));
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, device));
  BOOST_TEST(backend.current_arch() ==
             "sm" + std::to_string(props.major) + std::to_string(props.minor));
  const Provenance p = backend.device();
  BOOST_TEST(p.device_name == props.name);
  BOOST_TEST(p.sm_count == props.multiProcessorCount);
  BOOST_TEST(!p.driver_version.empty());
  BOOST_TEST(!p.cuda_version.empty());
  BOOST_TEST_MESSAGE("device: " << p.device_name << ", " << backend.current_arch() << ", "
                                << p.sm_count << " SMs, driver " << p.driver_version << ", runtime "
                                << p.cuda_version);
}

BOOST_AUTO_TEST_CASE(zero_save_and_restore_work_on_device_memory) {
  cuda::CudaBackend backend;
  const std::vector<float> values = mixed_values(1000);
  DeviceFloats buffer(values);
  const BufferRef ref{buffer.get(), buffer.bytes()};
  const std::vector<std::byte> saved = backend.save(ref);
  BOOST_TEST(std::memcmp(saved.data(), values.data(), saved.size()) == 0);
  backend.zero(ref);
  BOOST_TEST(same_bits(buffer.download(), std::vector<float>(1000, 0.0f)));
  backend.restore(ref, saved);
  BOOST_TEST(same_bits(buffer.download(), values));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cuda_calls, *boost::unit_test::precondition(have_gpu))

BOOST_AUTO_TEST_CASE(pinned_calls_run_the_cheapest_on_the_callers_stream_untimed) {
  Setup s(with_mode(Mode::pinned));
  TotalFamily total(s.launcher, {"t.gpu", "total"}, {"N"}, totals(), total_outputs());
  const int n = 1 << 16;
  const DeviceFloats x(mixed_values(n)), out(1), expected(1);
  total({n}, {"f32"}, s.stream, x.get(), out.get(), n);
  kernels::serial_total(s.stream, x.get(), expected.get(), n);
  check(cudaStreamSynchronize(s.stream));
  BOOST_TEST(s.backend.timings == 0);
  BOOST_TEST(same_bits(out.download(), expected.download()));
  const auto log = s.runtime.choice_log().snapshot();
  BOOST_TEST_REQUIRE(log.size() == 1u);
  BOOST_TEST(log.begin()->first == s.backend.current_arch() + "|t.gpu.total|N=65536|f32");
  BOOST_TEST(log.begin()->second == "BLOCK=1;warps=1;stages=1;pinned");
}

BOOST_AUTO_TEST_CASE(record_audit_flags_the_racy_variant_and_merge_never_pins_it) {
  TempDir dir;
  {
    Setup s(with_mode(Mode::record, dir.path() / "rec"));
    TotalFamily total(s.launcher, {"t.gpu", "total"}, {"N"}, totals(), total_outputs());
    const int n = 1 << 20;
    const DeviceFloats x(mixed_values(n)), out(1);
    CapturedLog log;
    total({n}, {"f32"}, s.stream, x.get(), out.get(), n);
    check(cudaStreamSynchronize(s.stream));
    BOOST_TEST(s.backend.timings == 2);
    BOOST_TEST(log.count("ATOMIC=1,BLOCK=256;warps=8;stages=4) of t.gpu.total [N=1048576|f32] gave "
                         "different bits") == 1u);
    s.runtime.flush();
  }
  const RecordFile record = load_record_file(dir.path() / "rec.rank0.json");
  BOOST_TEST_REQUIRE(record.timings.size() == 1u);
  const auto& candidates = record.timings.begin()->second;
  BOOST_TEST_REQUIRE(candidates.size() == 2u);
  BOOST_TEST(!candidates[0].nondeterministic);
  BOOST_TEST(candidates[1].nondeterministic);
  BOOST_TEST(signature(record.winners.begin()->second) == "BLOCK=1;warps=1;stages=1");
  const MergeResult merged = merge_records({record}, "", "");
  BOOST_TEST(merged.table->entry_count() == 1u);
  BOOST_TEST(disagreement_report(merged.disagreements).find("never pinned: ATOMIC=1") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_variant_that_cannot_launch_is_timed_as_infinite_and_reported_once) {
  Setup s(with_mode(Mode::automatic));
  ScaleFamily scale(s.launcher, {"t.gpu", "scale"}, {"N"}, scalers());
  const int n = 4096;
  const DeviceFloats x(mixed_values(n)), y(n);
  CapturedLog log;
  scale({n}, {"f32"}, s.stream, x.get(), y.get(), n);
  scale({n * 2}, {"f32"}, s.stream, x.get(), y.get(), n);
  check(cudaStreamSynchronize(s.stream));
  BOOST_TEST(log.count("candidate 0 (BLOCK=64;warps=2;stages=1) of t.gpu.scale") == 1u);
  BOOST_TEST(log.text().find("cudaError") != std::string::npos);
  std::vector<float> expected = mixed_values(n);
  for (float& v : expected) v *= 2.0f;
  BOOST_TEST(same_bits(y.download(), expected));
}

BOOST_AUTO_TEST_CASE(first_call_in_a_graph_capture_is_an_error_when_it_would_be_timed) {
  Setup s(with_mode(Mode::automatic));
  ScaleFamily scale(s.launcher, {"t.gpu", "scale"}, {"N"}, scalers());
  const int n = 1024;
  const DeviceFloats x(mixed_values(n)), y(n);
  check(cudaStreamBeginCapture(s.stream, cudaStreamCaptureModeGlobal));
  std::string message;
  try {
    scale({n}, {"f32"}, s.stream, x.get(), y.get(), n);
  } catch (const Error& e) {
    message = e.what();
  }
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(s.stream, &graph);
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
  BOOST_TEST(message.find("kernel family 't.gpu.scale' [N=1024|f32]") != std::string::npos);
  BOOST_TEST(message.find("CUDA graph capture") != std::string::npos);
  BOOST_TEST(message.find("warm up") != std::string::npos);
  BOOST_TEST(s.backend.timings == 0);
}

BOOST_AUTO_TEST_CASE(pinned_calls_inside_a_graph_capture_replay_with_the_same_bits) {
  Setup s(with_mode(Mode::pinned));
  TotalFamily total(s.launcher, {"t.gpu", "total"}, {"N"}, totals(), total_outputs());
  const int n = 1 << 16;
  const DeviceFloats x(mixed_values(n)), direct(1), replayed(1);
  total({n}, {"f32"}, s.stream, x.get(), direct.get(), n);
  check(cudaStreamSynchronize(s.stream));
  s.runtime.install(with_mode(Mode::pinned));  // same policy: nothing resets
  check(cudaStreamBeginCapture(s.stream, cudaStreamCaptureModeGlobal));
  total({n + 0}, {"f32"}, s.stream, x.get(), replayed.get(), n);
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(s.stream, &graph));
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0));
  check(cudaGraphLaunch(exec, s.stream));
  check(cudaStreamSynchronize(s.stream));
  BOOST_TEST(same_bits(direct.download(), replayed.download()));
  BOOST_TEST(s.backend.timings == 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

BOOST_AUTO_TEST_CASE(timing_runs_go_to_the_private_stream_and_leave_outputs_as_one_launch) {
  Setup s(with_mode(Mode::automatic));
  ScaleFamily scale(s.launcher, {"t.gpu", "scale"}, {"N"}, scalers());
  const int n = 1 << 16;
  const DeviceFloats x(mixed_values(n)), y(n);
  scale({n}, {"f32"}, s.stream, x.get(), y.get(), n);
  check(cudaStreamSynchronize(s.stream));
  BOOST_TEST(s.backend.timings == 2);
  BOOST_TEST(s.backend.gpu.timing_stream() != static_cast<void*>(s.stream));
  std::vector<float> expected = mixed_values(n);
  for (float& v : expected) v *= 2.0f;
  BOOST_TEST(same_bits(y.download(), expected));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(loaded_modules, *boost::unit_test::precondition(have_gpu))

BOOST_AUTO_TEST_CASE(cubin_fatbin_and_ptx_run_with_the_bits_of_the_compiled_kernel) {
  cuda::CudaBackend backend;
  const int n = 5000;
  const DeviceFloats x(mixed_values(n)), expected(n);
  kernels::scale(nullptr, x.get(), expected.get(), n, 3.0f);
  std::vector<const char*> kinds = {"fatbin", "ptx"};
  if (backend.current_arch() == "sm90")
    kinds.push_back("cubin");
  else
    BOOST_TEST_MESSAGE("the test cubin is for sm90; this GPU is " << backend.current_arch());
  for (const char* kind : kinds) {
    BOOST_TEST_CONTEXT(kind) {
      const DeviceFloats y(n);
      const auto module = cuda::LoadedModule::load_file(module_file(kind));
      const cuda::LoadedKernel kernel(module, {"tl_scale", 128, 0});
      kernel(nullptr, {(n + 127) / 128}, x.get(), y.get(), n, 3.0f);
      BOOST_TEST(same_bits(y.download(), expected.download()));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_triton_style_kernel_gets_its_threads_shared_memory_and_scratch) {
  const auto module = cuda::LoadedModule::load_file(module_file("fatbin"));
  const cuda::LaunchSpec spec = cuda::triton_launch_spec(
      read_file(std::filesystem::path(TUNELOCK_TEST_SOURCES) / "triton_like_row_sum.json"), "m");
  const cuda::LoadedKernel kernel(module, spec);
  const int rows = 3, cols = 1000;
  const std::vector<float> values = mixed_values(rows * cols);
  const DeviceFloats x(values), out(rows);
  unsigned long long* seen_on_device = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&seen_on_device), 3 * sizeof *seen_on_device));
  kernel(nullptr, {rows}, x.get(), out.get(), cols, seen_on_device);
  unsigned long long seen[3] = {};
  check(cudaMemcpy(seen, seen_on_device, sizeof seen, cudaMemcpyDeviceToHost));
  cudaFree(seen_on_device);
  BOOST_TEST(seen[0] != 0u);  // 64 bytes per program were allocated
  BOOST_TEST(seen[1] == 0u);  // no profile scratch asked for
  BOOST_TEST(seen[2] == 128u);
  const std::vector<float> sums = out.download();
  for (int r = 0; r < rows; ++r) {
    double total = 0;
    for (int j = 0; j < cols; ++j) total += values[static_cast<std::size_t>(r) * cols + j];
    BOOST_TEST(sums[static_cast<std::size_t>(r)] == total, boost::test_tools::tolerance(1e-3));
  }
}

BOOST_AUTO_TEST_CASE(module_errors_name_the_file_and_the_kernel) {
  TempDir dir;
  std::string message;
  try {
    cuda::LoadedModule::load_file(dir.write("junk.cubin", "not a module"));
  } catch (const Error& e) {
    message = e.what();
  }
  BOOST_TEST(message.find("junk.cubin: cuModuleLoadData") != std::string::npos);
  const auto module = cuda::LoadedModule::load_file(module_file("fatbin"));
  message.clear();
  try {
    cuda::LoadedKernel(module, {"no_such_kernel", 128, 0});
  } catch (const Error& e) {
    message = e.what();
  }
  BOOST_TEST(message.find("no kernel named 'no_such_kernel'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_loaded_family_tunes_and_a_too_large_block_counts_as_infinite) {
  Setup s(with_mode(Mode::automatic));
  const auto module = cuda::LoadedModule::load_file(module_file("fatbin"));
  const cuda::LoadedKernel fits(module, {"tl_scale", 256, 0});
  const cuda::LoadedKernel too_much_shared(module, {"tl_scale", 256, 1u << 30});
  auto variant = [](cuda::LoadedKernel kernel) {
    return [kernel](cudaStream_t st, const float* x, float* y, int n) {
      kernel(st, {static_cast<unsigned>((n + 255) / 256)}, x, y, n, 2.0f);
    };
  };
  ScaleFamily scale(s.launcher, {"t.gpu", "loaded_scale"}, {"N"},
                    {{make_config({{"BLOCK", 64}}, 8, 1), variant(too_much_shared)},
                     {make_config({{"BLOCK", 256}}, 8, 1), variant(fits)}});
  const int n = 1 << 14;
  const DeviceFloats x(mixed_values(n)), y(n);
  CapturedLog log;
  scale({n}, {"f32"}, s.stream, x.get(), y.get(), n);
  check(cudaStreamSynchronize(s.stream));
  BOOST_TEST(log.count("candidate 0 (BLOCK=64;warps=8;stages=1) of t.gpu.loaded_scale") == 1u);
  std::vector<float> expected = mixed_values(n);
  for (float& v : expected) v *= 2.0f;
  BOOST_TEST(same_bits(y.download(), expected));
}

BOOST_AUTO_TEST_SUITE_END()
