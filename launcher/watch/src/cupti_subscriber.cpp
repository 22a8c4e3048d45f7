// CUPTI's callbacks, translated into a WatchSession's launches and steps,
// and the C interface (watch.h). Callbacks are enabled only for the launch
// APIs, graph instantiation and launch, module loads and the NVTX range
// pushes, so every other CUDA call runs untouched.
//
// Runtime launches (cudaLaunchKernel, what PyTorch and cuBLAS use) and
// driver launches (cuLaunchKernel, what Triton uses) are both seen; the
// driver's callback for a launch made inside a runtime launch is skipped, so
// nothing counts twice. The driver's own functions (names of graph nodes, a function's
// module) are looked up in the libcuda already loaded: this library links
// no CUDA library but CUPTI, and loads on a machine without a GPU.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tunelock/error.hpp"
#include "tunelock/watch.h"
#include "watch_session.hpp"

namespace tunelock::watch {
namespace {

// The driver functions used to describe what a callback hands over.
struct Driver {
  CUresult (*func_get_name)(const char**, CUfunction) = nullptr;
  CUresult (*func_get_module)(CUmodule*, CUfunction) = nullptr;
  CUresult (*graph_get_nodes)(CUgraph, CUgraphNode*, size_t*) = nullptr;
  CUresult (*graph_node_get_type)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*child_graph_of)(CUgraphNode, CUgraph*) = nullptr;

  Driver() {
    void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!cuda) return;
    auto find = [cuda](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(cuda, name));
    };
    find(func_get_name, "cuFuncGetName");
    find(func_get_module, "cuFuncGetModule");
    find(graph_get_nodes, "cuGraphGetNodes");
    find(graph_node_get_type, "cuGraphNodeGetType");
    find(kernel_node_get_params, "cuGraphKernelNodeGetParams_v2");
    if (!kernel_node_get_params) find(kernel_node_get_params, "cuGraphKernelNodeGetParams");
    find(child_graph_of, "cuGraphChildGraphNodeGetGraph");
  }
};

struct State {
  std::unique_ptr<WatchSession> session;
  std::unique_ptr<Driver> driver;
  CUpti_SubscriberHandle subscriber = nullptr;
  bool active = false;
  // A loaded module's image hash, by module handle; a graph's digest, by
  // its instantiated handle (what a graph launch is named by).
  std::mutex maps_mutex;
  std::unordered_map<CUmodule, std::string> modules;
  std::unordered_map<CUgraphExec, std::string> graphs;
};

State& state() {
  static State* s = new State();  // never destroyed: callbacks may run during exit
  return *s;
}

// Inside a runtime launch (the driver calls it makes are not launches of their own).
thread_local int runtime_depth = 0;
// The image hash of the module being loaded on this thread, between the
// resource callback that sees the image and the load's exit that sees the handle.
thread_local std::string loading_module;

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string module_of(CUfunction f) {
  State& s = state();
  CUmodule module = nullptr;
  if (!s.driver->func_get_module || s.driver->func_get_module(&module, f) != CUDA_SUCCESS)
    return {};
  std::lock_guard lock(s.maps_mutex);
  const auto found = s.modules.find(module);
  return found == s.modules.end() ? std::string() : found->second;
}

// A runtime launch's host stub: the library that holds it (libtorch_cuda.so,
// libcublasLt.so.13), which says where a kernel came from as stably as a
// module handle cannot.
std::string library_of(const void* stub) {
  Dl_info info{};
  if (!::dladdr(stub, &info) || !info.dli_fname) return {};
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

std::string function_name(CUfunction f, const char* symbol) {
  if (symbol && *symbol) return symbol;
  const char* name = nullptr;
  if (state().driver->func_get_name && state().driver->func_get_name(&name, f) == CUDA_SUCCESS &&
      name)
    return name;
  return "(unnamed kernel)";
}

Dim3 cluster_of(const CUlaunchAttribute* attrs, unsigned count) {
  for (unsigned i = 0; i < count; ++i)
    if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      return {attrs[i].value.clusterDim.x, attrs[i].value.clusterDim.y,
              attrs[i].value.clusterDim.z};
  return {0, 0, 0};
}

Dim3 cluster_of(const cudaLaunchAttribute* attrs, unsigned count) {
  for (unsigned i = 0; i < count; ++i)
    if (attrs[i].id == cudaLaunchAttributeClusterDimension)
      return {attrs[i].val.clusterDim.x, attrs[i].val.clusterDim.y, attrs[i].val.clusterDim.z};
  return {0, 0, 0};
}

void driver_launch(CUfunction f, const char* symbol, const LaunchShape& shape) {
  state().session->launch(f, shape, [&] {
    return WatchedKernel{function_name(f, symbol), module_of(f)};
  });
}

void runtime_launch(const void* stub, const char* symbol, const LaunchShape& shape) {
  state().session->launch(stub, shape, [&] {
    return WatchedKernel{symbol && *symbol ? symbol : "(unnamed kernel)", library_of(stub)};
  });
}

Dim3 dims(dim3 d) { return {d.x, d.y, d.z}; }

// The kernel nodes of `graph` in node order (child graphs inlined), added to
// the session as launches inside a graph; returns the digest naming the graph.
void add_graph_nodes(CUgraph graph, XXH3_state_t* digest, int depth = 0) {
  const Driver& d = *state().driver;
  if (!d.graph_get_nodes || !d.graph_node_get_type || depth > 16) return;
  size_t count = 0;
  if (d.graph_get_nodes(graph, nullptr, &count) != CUDA_SUCCESS || count == 0) return;
  std::vector<CUgraphNode> nodes(count);
  if (d.graph_get_nodes(graph, nodes.data(), &count) != CUDA_SUCCESS) return;
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type;
    if (d.graph_node_get_type(node, &type) != CUDA_SUCCESS) continue;
    if (type == CU_GRAPH_NODE_TYPE_GRAPH && d.child_graph_of) {
      CUgraph child = nullptr;
      if (d.child_graph_of(node, &child) == CUDA_SUCCESS) add_graph_nodes(child, digest, depth + 1);
      continue;
    }
    CUDA_KERNEL_NODE_PARAMS p{};
    if (type != CU_GRAPH_NODE_TYPE_KERNEL || !d.kernel_node_get_params ||
        d.kernel_node_get_params(node, &p) != CUDA_SUCCESS)
      continue;
    const LaunchShape shape{{p.gridDimX, p.gridDimY, p.gridDimZ},
                            {p.blockDimX, p.blockDimY, p.blockDimZ},
                            {0, 0, 0},
                            p.sharedMemBytes,
                            true};
    const std::string name = p.func ? function_name(p.func, nullptr) : "(library kernel)";
    const std::string module = p.func ? module_of(p.func) : std::string();
    state().session->launch_named(name, module, shape);
    XXH3_64bits_update(digest, name.data(), name.size() + 1);
    XXH3_64bits_update(digest, &shape.grid, sizeof shape.grid);
    XXH3_64bits_update(digest, &shape.block, sizeof shape.block);
    XXH3_64bits_update(digest, &shape.shared_bytes, sizeof shape.shared_bytes);
  }
}

void graph_instantiated(CUgraphExec exec, CUgraph graph) {
  XXH3_state_t* digest = XXH3_createState();
  XXH3_64bits_reset(digest);
  add_graph_nodes(graph, digest);
  std::string name = hex(XXH3_64bits_digest(digest));
  XXH3_freeState(digest);
  State& s = state();
  std::lock_guard lock(s.maps_mutex);
  s.graphs[exec] = std::move(name);
}

void graph_launched(CUgraphExec exec) {
  State& s = state();
  std::string digest;
  {
    std::lock_guard lock(s.maps_mutex);
    const auto found = s.graphs.find(exec);
    if (found != s.graphs.end()) digest = found->second;
  }
  // Its nodes were listed at instantiation; here only which graph ran.
  s.session->launch_named("(graph launch)", digest,
                          LaunchShape{{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0, true});
}

void on_driver(CUpti_CallbackId id, const CUpti_CallbackData* cb) {
  if (cb->callbackSite == CUPTI_API_EXIT) {
    switch (id) {
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData:
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx:
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary:
      case CUPTI_DRIVER_TRACE_CBID_cuModuleLoad: {
        // Every variant's parameters start with `CUmodule *module`.
        CUmodule* module = *static_cast<CUmodule* const*>(cb->functionParams);
        if (module && *module && !loading_module.empty()) {
          std::lock_guard lock(state().maps_mutex);
          state().modules[*module] = loading_module;
        }
        loading_module.clear();
        return;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz: {
        if (runtime_depth) return;
        // Every variant's parameters start with (CUgraphExec*, CUgraph).
        const auto* p = static_cast<const cuGraphInstantiateWithFlags_params*>(cb->functionParams);
        if (p->phGraphExec && *p->phGraphExec) graph_instantiated(*p->phGraphExec, p->hGraph);
        return;
      }
      default:
        return;
    }
  }
  if (runtime_depth) return;
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      // The cooperative variant's parameters are the same, less the last two.
      const auto* p = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
      driver_launch(p->f, cb->symbolName,
                    {{p->gridDimX, p->gridDimY, p->gridDimZ},
                     {p->blockDimX, p->blockDimY, p->blockDimZ},
                     {0, 0, 0},
                     p->sharedMemBytes,
                     false});
      return;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
      const CUlaunchConfig& c = *p->config;
      driver_launch(p->f, cb->symbolName,
                    {{c.gridDimX, c.gridDimY, c.gridDimZ},
                     {c.blockDimX, c.blockDimY, c.blockDimZ},
                     cluster_of(c.attrs, c.numAttrs),
                     c.sharedMemBytes,
                     false});
      return;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      graph_launched(static_cast<const cuGraphLaunch_params*>(cb->functionParams)->hGraph);
      return;
    default:
      return;
  }
}

void on_runtime(CUpti_CallbackId id, const CUpti_CallbackData* cb) {
  if (cb->callbackSite == CUPTI_API_EXIT) {
    --runtime_depth;
    switch (id) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_v12000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_ptsz_v12000: {
        // Every variant's parameters start with (cudaGraphExec_t*, cudaGraph_t).
        const auto* p =
            static_cast<const cudaGraphInstantiateWithFlags_v11040_params*>(cb->functionParams);
        if (p->pGraphExec && *p->pGraphExec)
          graph_instantiated(reinterpret_cast<CUgraphExec>(*p->pGraphExec),
                             reinterpret_cast<CUgraph>(p->graph));
        return;
      }
      default:
        return;
    }
  }
  ++runtime_depth;
  switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000: {
      const auto* p = static_cast<const cudaLaunchKernel_v7000_params*>(cb->functionParams);
      runtime_launch(p->func, cb->symbolName,
                     {dims(p->gridDim),
                      dims(p->blockDim),
                      {0, 0, 0},
                      static_cast<std::uint32_t>(p->sharedMem),
                      false});
      return;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto* p = static_cast<const cudaLaunchKernelExC_v11060_params*>(cb->functionParams);
      const cudaLaunchConfig_t& c = *p->config;
      runtime_launch(p->func, cb->symbolName,
                     {dims(c.gridDim), dims(c.blockDim), cluster_of(c.attrs, c.numAttrs),
                      static_cast<std::uint32_t>(c.dynamicSmemBytes), false});
      return;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
      graph_launched(reinterpret_cast<CUgraphExec>(
          static_cast<const cudaGraphLaunch_v10000_params*>(cb->functionParams)->graphExec));
      return;
    default:
      return;
  }
}

void on_range(CUpti_CallbackId id, const CUpti_NvtxData* data) {
  const nvtxEventAttributes_t* attributes = nullptr;
  switch (id) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      state().session->range_pushed(
          static_cast<const nvtxRangePushA_params*>(data->functionParams)->message);
      return;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      attributes = static_cast<const nvtxRangePushEx_params*>(data->functionParams)->eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      attributes =
          static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams)->core.eventAttrib;
      break;
    default:
      return;
  }
  if (attributes && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii)
    state().session->range_pushed(attributes->message.ascii);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API:
      on_driver(id, static_cast<const CUpti_CallbackData*>(data));
      return;
    case CUPTI_CB_DOMAIN_RUNTIME_API:
      on_runtime(id, static_cast<const CUpti_CallbackData*>(data));
      return;
    case CUPTI_CB_DOMAIN_RESOURCE:
      if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
        const auto* resource = static_cast<const CUpti_ResourceData*>(data);
        const auto* module =
            static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
        if (module && module->pCubin && module->cubinSize)
          loading_module = hex(XXH3_64bits(module->pCubin, module->cubinSize));
      }
      return;
    case CUPTI_CB_DOMAIN_NVTX:
      on_range(id, static_cast<const CUpti_NvtxData*>(data));
      return;
    default:
      return;
  }
}

const CUpti_CallbackId kDriverCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuModuleLoad,
    CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData,
    CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx,
    CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary,
};
const CUpti_CallbackId kRuntimeCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_ptsz_v12000,
};
const CUpti_CallbackId kNvtxCallbacks[] = {CUPTI_CBID_NVTX_nvtxRangePushA,
                                           CUPTI_CBID_NVTX_nvtxRangePushEx,
                                           CUPTI_CBID_NVTX_nvtxDomainRangePushEx};

void write_at_exit() {
  try {
    state().session->write();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunelock watch: %s\n", e.what());
  }
}

// Subscribes and enables the callbacks; on failure the session records why,
// so the log says the run was not observed.
int start(const char* prefix) {
  State& s = state();
  if (s.session) return s.active ? 0 : 1;
  try {
    s.session = std::make_unique<WatchSession>(prefix);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunelock watch: %s; this run is not watched\n", e.what());
    return 1;
  }
  s.driver = std::make_unique<Driver>();
  std::atexit(write_at_exit);
  const CUptiResult subscribed = cuptiSubscribe(&s.subscriber, on_callback, nullptr);
  if (subscribed != CUPTI_SUCCESS) {
    const char* why = nullptr;
    cuptiGetResultString(subscribed, &why);
    const bool has_driver =
        ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) || ::dlopen("libcuda.so.1", RTLD_LAZY);
    const std::string note =
        subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
            ? "another CUPTI subscriber (the PyTorch profiler, Nsight, a debugger) holds CUPTI"
        : !has_driver ? "no CUDA driver (libcuda.so.1) on this machine"
                      : std::string("CUPTI refused: ") + (why ? why : "unknown error");
    std::fprintf(stderr, "tunelock watch: %s; the program runs on unobserved\n", note.c_str());
    s.session->set_unobserved(note);
    return 1;
  }
  bool enabled = true;
  for (CUpti_CallbackId id : kDriverCallbacks)
    enabled &=
        cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS;
  // The driver's callbacks alone see every launch (the runtime's internal
  // ones too); the runtime's add which library a runtime kernel lives in.
  for (CUpti_CallbackId id : kRuntimeCallbacks)
    enabled &=
        cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id) == CUPTI_SUCCESS;
  enabled &= cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_MODULE_LOADED) == CUPTI_SUCCESS;
  // Range pushes reach CUPTI only where NVTX_INJECTION64_PATH names it, and
  // only the CUPTI this library is bound to has our subscriber: a program
  // may carry its own copy (PyTorch's wheels do, loaded before the driver
  // loads us), so name the one we use. NVTX reads the variable at its first
  // call in each library, which in a training program comes after CUDA starts.
  if (!s.session->step_range().empty()) {
    Dl_info cupti{};
    if (::dladdr(reinterpret_cast<void*>(&cuptiSubscribe), &cupti) && cupti.dli_fname)
      ::setenv("NVTX_INJECTION64_PATH", cupti.dli_fname, 1);
    for (CUpti_CallbackId id : kNvtxCallbacks)
      cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_NVTX, id);
  }
  if (!enabled) {
    std::fprintf(stderr,
                 "tunelock watch: CUPTI did not enable every launch callback; "
                 "some launches may be missing from the log\n");
  }
  s.active = true;
  return 0;
}

}  // namespace
}  // namespace tunelock::watch

using tunelock::watch::state;

extern "C" {

int InitializeInjection(void) {
  tunelock::watch::start(nullptr);
  return 1;  // the program runs on whether or not it is observed
}

int tunelock_watch_start(const char* prefix) { return tunelock::watch::start(prefix); }

int tunelock_watch_active(void) { return state().active ? 1 : 0; }

void tunelock_watch_step(void) {
  if (state().active) state().session->step();
}

int tunelock_watch_flush(void) {
  if (!state().session) return 1;
  try {
    state().session->write();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunelock watch: %s\n", e.what());
    return 1;
  }
}

int tunelock_watch_check_digest(char* out, size_t size) {
  if (size) out[0] = '\0';
  if (!state().active) return 1;
  const std::string digest = state().session->take_check_digest();
  if (size) std::snprintf(out, size, "%s", digest.c_str());
  return 0;
}

}  // extern "C"
