// Runs a Triton-compiled row sum from its cache files (cubin + metadata
// JSON) through tunelock's loaded-module launch, so a script can compare
// the bits with Triton's own launch of the same kernel.
//   triton_module_check CUBIN METADATA INPUT OUTPUT ROWS COLS
// INPUT holds ROWS x COLS float32; OUTPUT receives ROWS float32.
#include <cuda_runtime_api.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/cuda/loaded_kernel.hpp"
#include "tunelock/io/files.hpp"

namespace {

int to_int(const char* text) {
  int value = 0;
  const std::string s(text);
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size() || value <= 0)
    throw tunelock::Error(std::string("expected a positive integer, got '") + text + "'");
  return value;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw tunelock::Error(std::string(what) + ": " + cudaGetErrorString(status));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s CUBIN METADATA INPUT OUTPUT ROWS COLS\n", argv[0]);
    return 2;
  }
  try {
    const int rows = to_int(argv[5]), cols = to_int(argv[6]);
    const std::string input = tunelock::read_file(argv[3]);
    const std::size_t in_bytes = static_cast<std::size_t>(rows) * cols * sizeof(float);
    if (input.size() != in_bytes) throw tunelock::Error("INPUT does not hold ROWS x COLS floats");
    check(cudaFree(nullptr), "CUDA init");
    const auto kernel = tunelock::cuda::LoadedKernel::from_triton(argv[1], argv[2]);
    void *x = nullptr, *out = nullptr;
    check(cudaMalloc(&x, in_bytes), "cudaMalloc");
    check(cudaMalloc(&out, rows * sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(x, input.data(), in_bytes, cudaMemcpyHostToDevice), "upload");
    kernel(nullptr, {static_cast<unsigned>(rows)}, x, out, cols);
    std::vector<float> sums(static_cast<std::size_t>(rows));
    check(cudaMemcpy(sums.data(), out, rows * sizeof(float), cudaMemcpyDeviceToHost), "download");
    std::ofstream(argv[4], std::ios::binary)
        .write(reinterpret_cast<const char*>(sums.data()),
               static_cast<std::streamsize>(rows * sizeof(float)));
    std::printf("launched %s: %u threads, %u shared bytes\n", kernel.spec().function.c_str(),
                kernel.spec().threads, kernel.spec().shared_bytes);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "triton_module_check: %s\n", e.what());
    return 2;
  }
}
