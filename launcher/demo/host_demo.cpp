// The demo's loop over host kernel families (arch `host`): runs anywhere.
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "demo_kernels.hpp"
#include "demo_support.hpp"
#include "tunelock/base/rank_environment.hpp"
#include "tunelock/launcher/host_backend.hpp"

namespace tunelock::demo {
namespace {

// --skew-timings: every matmul config but this rank's favourite first runs
// the favourite itself (into a scratch buffer), then its own code, then
// sleeps 5 ms, so it is slower than the favourite by its own run plus the
// sleep whatever the build (a sanitizer's -O0 changes which tiling is
// fastest): the ranks' timed winners differ for certain while every config
// keeps its own bits.
std::vector<MatmulFamily::Variant> skewed(std::vector<MatmulFamily::Variant> variants, int rank) {
  const std::size_t favourite = rank == 0 ? 1 : 2;
  const auto favourite_launch = variants[favourite].launch;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (i == favourite) continue;
    variants[i].launch = [run = variants[i].launch, favourite_launch](
                             const float* a, const float* b, float* c, int m, int n, int k) {
      std::vector<float> scratch(static_cast<std::size_t>(m) * n);
      favourite_launch(a, b, scratch.data(), m, n, k);
      run(a, b, c, m, n, k);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    };
  }
  return variants;
}

}  // namespace

int run_host(const Options& options) {
  install_from_environment();
  Runtime& runtime = process_runtime();
  launcher::HostBackend backend;
  launcher::Launcher launcher(backend, runtime);

  const int rank = rank_from_environment(process_environment()).rank;
  MatmulFamily matmul(launcher, {"demo.ops", "matmul_splitk"}, {"M", "N", "K"},
                      options.skew_timings ? skewed(matmul_variants(), rank) : matmul_variants(),
                      matmul_hooks());
  // Its code's version: a table recorded on other matmul code says so.
  matmul.set_code_identity(launcher::code_version("demo-matmul-1"));
  ReduceFamily reduce(launcher, {"demo.ops", "reduce_sum"}, {"N"}, reduce_variants(),
                      reduce_hooks());
  NormFamily norm(launcher, {"demo.ops", "rms_normalize"}, {"N"}, norm_variants());
  UpdateFamily update(launcher, {"demo.ops", "sgd_update"}, {"N"}, update_variants(),
                      update_hooks());
  if (!options.manifest.empty()) launcher.write_manifest(options.manifest);

  const int m = options.m ? options.m : 64, n = options.n ? options.n : 64,
            k = options.k ? options.k : 384;
  const std::vector<float> x = pseudo_random(static_cast<std::size_t>(m) * k, 1);
  std::vector<float> xt(x.size());  // x transposed, for the weight update
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j)
      xt[static_cast<std::size_t>(j) * m + i] = x[static_cast<std::size_t>(i) * k + j];
  std::vector<float> w = pseudo_random(static_cast<std::size_t>(k) * n, 2);
  const std::vector<float> w0 = w;
  std::vector<float> y(static_cast<std::size_t>(m) * n), grad(w.size());
  std::unique_ptr<Collective> group = make_group(runtime.policy()->verify_every > 0);

  print_start(runtime);
  for (int step = 1; step <= options.steps; ++step) {
    std::fill(y.begin(), y.end(), 0.0f);
    matmul({m, n, k}, {"f32", "f32"}, x.data(), w.data(), y.data(), m, n, k);
    float loss = 0;
    reduce({m * n}, {"f32"}, y.data(), &loss, m * n);
    norm({m * n}, {"f32"}, y.data(), m * n);
    std::fill(grad.begin(), grad.end(), 0.0f);
    matmul({k, n, m}, {"f32", "f32"}, xt.data(), y.data(), grad.data(), k, n, m);
    const int size = static_cast<int>(w.size());
    update({size}, {"f32"}, w.data(), grad.data(), 1e-3f, size);
    if (options.hold_weights) {
      std::printf("step %d: weights %016llx\n", step,
                  static_cast<unsigned long long>(XXH3_64bits(w.data(), w.size() * sizeof(float))));
      w = w0;
    }
    print_step(runtime, *group, step, loss);
  }
  print_end(runtime, w.data(), w.size() * sizeof(float));
  launcher.flush();
  return 0;
}

}  // namespace tunelock::demo
