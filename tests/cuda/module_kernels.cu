// Kernels the GPU tests load at run time as a cubin, a fatbin and PTX
// (built by nvcc -cubin/-fatbin/-ptx), the way Triton's compiled kernels
// are loaded. extern "C": looked up by their plain names.

// y[i] = x[i] * factor
extern "C" __global__ void tl_scale(const float* x, float* y, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * factor;
}

// Triton's calling convention: one program (block) per row, the user's
// arguments, then the global and profile scratch pointers. The block's
// threads add strided slices, then a fixed tree in dynamic shared memory.
// Writes the scratch pointers it was given (as integers) to `seen` so the
// tests can check them.
extern "C" __global__ void tl_triton_like_row_sum(const float* x, float* out, int cols,
                                                  unsigned long long* seen, void* global_scratch,
                                                  void* profile_scratch) {
  extern __shared__ float partial[];
  const float* row = x + static_cast<size_t>(blockIdx.x) * cols;
  float mine = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) mine += row[j];
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x] = partial[0];
    if (blockIdx.x == 0) {
      seen[0] = reinterpret_cast<unsigned long long>(global_scratch);
      seen[1] = reinterpret_cast<unsigned long long>(profile_scratch);
      seen[2] = blockDim.x;
    }
  }
}
