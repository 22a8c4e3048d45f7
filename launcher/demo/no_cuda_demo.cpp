// Built where nvcc was not found: `--backend cuda` says so.
#include "demo_support.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock::demo {

int run_cuda(const Options&) {
  throw Error(
      "this build has no CUDA backend (nvcc was not found when tunelock was built); "
      "use --backend host");
}

}  // namespace tunelock::demo
