// A GEMM family whose cheapest variant adds its split-K partial sums with
// float atomics: the case where pinning a name does not pin the bits. Runs
// the policy from the environment over a few shapes and prints, per shape,
// the chosen config and an XXH3 of the output, so racy_cheapest_runs.sh
// can tell runs and processes apart. `racy_cheapest SHAPE...` (M=N, K=4096).
#include <cuda_runtime_api.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_families.hpp"
#include "gpu_kernels.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/cuda/cuda_backend.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/launcher/launcher.hpp"
#include "tunelock/runtime/runtime.hpp"

using namespace tunelock;
using demo::gpu::GemmFamily;

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}

float* device_floats(const std::vector<float>& host) {
  float* out = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&out), host.size() * sizeof(float)), "cudaMalloc");
  check(cudaMemcpy(out, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  return out;
}

std::vector<float> values(std::size_t n, std::uint64_t seed) {
  std::vector<float> out(n);
  for (float& v : out) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    // Signs and magnitudes spread wide: the order of additions shows in the bits.
    v = static_cast<float>(static_cast<std::int64_t>(seed >> 40) - (1 << 23)) /
        static_cast<float>(1 << (seed >> 60));
  }
  return out;
}

// The atomic variant is the cheapest by the cost rule (smallest tile,
// fewest stages and warps); the split-K ones reduce in a fixed order.
std::vector<GemmFamily::Variant> variants() {
  auto split_k = [](int tile, int split) {
    return [tile, split](cudaStream_t s, const float* a, const float* b, float* c, float* work,
                         int m, int n,
                         int k) { demo::gpu::gemm_splitk(s, tile, split, a, b, c, work, m, n, k); };
  };
  auto atomic = [](cudaStream_t s, const float* a, const float* b, float* c, float*, int m, int n,
                   int k) { demo::gpu::gemm_atomic(s, 16, 8, a, b, c, m, n, k); };
  return {{make_config({{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"SPLIT_K", 2}}, 8, 2), split_k(32, 2)},
          {make_config({{"ATOMIC", 1}, {"BLOCK_M", 16}, {"BLOCK_N", 16}, {"SPLIT_K", 8}}, 4, 1),
           atomic},
          {make_config({{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"SPLIT_K", 4}}, 8, 1), split_k(16, 4)}};
}

}  // namespace

int main(int argc, char** argv) try {
  Runtime& runtime = process_runtime();
  runtime.install(policy_from_environment(process_environment()));
  cuda::use_local_rank_device(process_environment());
  cuda::CudaBackend backend;
  runtime.set_device(backend.device());
  launcher::Launcher launcher(backend, runtime);
  GemmFamily gemm(launcher, {"check.gpu", "gemm"}, {"M", "N", "K"}, variants(),
                  demo::gpu::gemm_hooks());
  const int k = 4096;
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (int i = 1; i < argc; ++i) {
    const int m = std::atoi(argv[i]), n = m;
    float* a = device_floats(values(static_cast<std::size_t>(m) * k, 1));
    float* b = device_floats(values(static_cast<std::size_t>(k) * n, 2));
    float* c = device_floats(std::vector<float>(static_cast<std::size_t>(m) * n));
    float* work = device_floats(
        std::vector<float>(demo::gpu::gemm_workspace_floats(m, n, demo::gpu::kMaxSplit)));
    gemm({m, n, k}, {"f32", "f32"}, stream, a, b, c, work, m, n, k);
    std::vector<float> out(static_cast<std::size_t>(m) * n);
    check(
        cudaMemcpyAsync(out.data(), c, out.size() * sizeof(float), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const std::string entry = backend.current_arch() + "|check.gpu.gemm|M=" + std::to_string(m) +
                              "|N=" + std::to_string(n) + "|K=" + std::to_string(k) + "|f32|f32";
    std::printf(
        "shape %d: %s output %016llx\n", m, runtime.choice_log().snapshot().at(entry).c_str(),
        static_cast<unsigned long long>(XXH3_64bits(out.data(), out.size() * sizeof(float))));
    for (float* p : {a, b, c, work}) cudaFree(p);
  }
  launcher.flush();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "racy_cheapest: %s\n", e.what());
  return 1;
}
