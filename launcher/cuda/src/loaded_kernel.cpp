#include "tunelock/cuda/loaded_kernel.hpp"

#include <nlohmann/json.hpp>

#include <limits>

#include "cuda_check.hpp"
#include "driver_api.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/image_identity.hpp"

namespace tunelock::cuda {
namespace {

using nlohmann::json;

// Device memory for one launch's scratch, freed in stream order after it.
class StreamScratch {
 public:
  StreamScratch(cudaStream_t stream, std::size_t bytes, const std::string& what) : stream_(stream) {
    if (bytes) check(cudaMallocAsync(&pointer_, bytes, stream), what);
  }
  ~StreamScratch() {
    if (pointer_) cudaFreeAsync(pointer_, stream_);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  void* pointer() const { return pointer_; }

 private:
  cudaStream_t stream_;
  void* pointer_ = nullptr;
};

std::size_t scratch_bytes(std::size_t per_program, std::size_t align, const Grid& grid) {
  if (per_program == 0) return 0;
  const std::size_t programs = std::size_t{grid.x} * grid.y * grid.z;
  const std::size_t rounded = (per_program + align - 1) / align * align;
  return rounded * programs;
}

std::size_t field(const json& root, const char* name, const std::string& origin,
                  std::optional<std::size_t> fallback, std::size_t max) {
  const auto found = root.find(name);
  if (found == root.end()) {
    if (fallback) return *fallback;
    throw Error(origin + ": " + name + ": missing");
  }
  if (!found->is_number_unsigned() || found->get<std::uint64_t>() > max)
    throw Error(origin + ": " + name + ": expected an integer from 0 to " + std::to_string(max) +
                ", got " + found->dump());
  return static_cast<std::size_t>(found->get<std::uint64_t>());
}

}  // namespace

LaunchSpec triton_launch_spec(std::string_view metadata_json, const std::string& origin) {
  const json root = json::parse(metadata_json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) throw Error(origin + ": not valid JSON");
  if (!root.is_object()) throw Error(origin + ": expected Triton's metadata object");
  const auto name = root.find("name");
  if (name == root.end() || !name->is_string() || name->get<std::string>().empty())
    throw Error(origin + ": name: expected the kernel's name");
  constexpr std::size_t kMaxBytes = std::numeric_limits<std::uint32_t>::max();
  LaunchSpec spec;
  spec.function = name->get<std::string>();
  const std::size_t warps = field(root, "num_warps", origin, std::nullopt, 32);
  if (warps == 0) throw Error(origin + ": num_warps: expected 1 to 32, got 0");
  spec.threads = static_cast<unsigned>(warps * 32);
  spec.shared_bytes = static_cast<unsigned>(field(root, "shared", origin, 0, kMaxBytes));
  if (field(root, "num_ctas", origin, 1, 16) > 1)
    throw Error(origin + ": num_ctas > 1: cluster launches are not supported");
  spec.scratch_arguments = true;
  spec.global_scratch_bytes = field(root, "global_scratch_size", origin, 0, kMaxBytes);
  spec.global_scratch_align =
      std::max<std::size_t>(1, field(root, "global_scratch_align", origin, 1, 4096));
  spec.profile_scratch_bytes = field(root, "profile_scratch_size", origin, 0, kMaxBytes);
  spec.profile_scratch_align =
      std::max<std::size_t>(1, field(root, "profile_scratch_align", origin, 1, 4096));
  return spec;
}

std::shared_ptr<LoadedModule> LoadedModule::load_file(const std::filesystem::path& path) {
  return load_image(read_file(path), path.string());
}

std::shared_ptr<LoadedModule> LoadedModule::load_image(std::string image, std::string origin) {
  // PTX is text and must end in a NUL; cubins and fatbins ignore the extra byte.
  std::string identity = "image:" + image_identity(image.data(), image.size());
  image.push_back('\0');
  CUmodule module = nullptr;
  driver::check(driver::api().module_load_data(&module, image.data()),
                origin + ": cuModuleLoadData (not a cubin, fatbin or PTX for this GPU?)");
  return std::shared_ptr<LoadedModule>(
      new LoadedModule(module, std::move(origin), std::move(identity)));
}

LoadedModule::LoadedModule(CUmodule module, std::string origin, std::string identity)
    : module_(module), origin_(std::move(origin)), identity_(std::move(identity)) {}

LoadedModule::~LoadedModule() { driver::api().module_unload(module_); }

CUfunction LoadedModule::function(const std::string& name) const {
  CUfunction function = nullptr;
  driver::check(driver::api().module_get_function(&function, module_, name.c_str()),
                origin_ + ": no kernel named '" + name + "'");
  return function;
}

LoadedKernel::LoadedKernel(std::shared_ptr<const LoadedModule> module, LaunchSpec spec)
    : module_(std::move(module)),
      spec_(std::move(spec)),
      function_(module_->function(spec_.function)) {
  constexpr unsigned kDefaultSharedLimit = 48 * 1024;  // more must be opted into
  if (spec_.shared_bytes > kDefaultSharedLimit) {
    const CUresult set =
        driver::api().func_set_attribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(spec_.shared_bytes));
    if (set != CUDA_SUCCESS)
      unlaunchable_ = std::to_string(spec_.shared_bytes) +
                      " bytes of shared memory are more than this GPU allows (" +
                      driver::error_name(set) + ")";
  }
}

LoadedKernel LoadedKernel::from_triton(const std::filesystem::path& cubin,
                                       const std::filesystem::path& metadata) {
  return LoadedKernel(LoadedModule::load_file(cubin),
                      triton_launch_spec(read_file(metadata), metadata.string()));
}

void LoadedKernel::launch(cudaStream_t stream, Grid grid, std::vector<void*> params) const {
  const std::string what = module_->origin() + ": launching " + spec_.function;
  if (!unlaunchable_.empty()) throw Error(what + ": " + unlaunchable_);
  const StreamScratch global(
      stream, scratch_bytes(spec_.global_scratch_bytes, spec_.global_scratch_align, grid), what);
  const StreamScratch profile(
      stream, scratch_bytes(spec_.profile_scratch_bytes, spec_.profile_scratch_align, grid), what);
  CUdeviceptr global_pointer = reinterpret_cast<CUdeviceptr>(global.pointer());
  CUdeviceptr profile_pointer = reinterpret_cast<CUdeviceptr>(profile.pointer());
  if (spec_.scratch_arguments) {
    params.push_back(&global_pointer);
    params.push_back(&profile_pointer);
  }
  driver::check(driver::api().launch_kernel(function_, grid.x, grid.y, grid.z, spec_.threads, 1, 1,
                                            spec_.shared_bytes, stream, params.data(), nullptr),
                what);
}

}  // namespace tunelock::cuda
