// CUPTI's callbacks, translated into a WatchSession's launches and steps,
// and the C interface (watch.h). Callbacks are enabled only for the
// driver's launch APIs, graph instantiation and launch, module loads and the
// NVTX range pushes, so every other CUDA call runs untouched.
//
// The driver's callbacks alone see every launch: a runtime launch
// (cudaLaunchKernel, what PyTorch, cuBLAS and cuDNN use) reaches the driver
// too, and so do the runtime's graph calls. The runtime's own callbacks are
// not enabled: on an H200 they made a launch-bound PyTorch step 15 % slower
// (median of 4) where the driver's alone cost 0.3 %. The driver's own
// functions (names of graph nodes, a function's module) are looked up in the
// libcuda already loaded: this library links no CUDA library but CUPTI, and
// loads on a machine without a GPU.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/logs/image_identity.hpp"
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

// Images loaded on this thread whose module handle is not known yet (the
// resource callback sees the image, not the handle): an explicit load's
// exit names the handle; a module the runtime loads lazily, inside the
// launch of its first kernel, is named by that launch (see module_of).
thread_local std::vector<std::string> loaded_images;

// The image hash of `f`'s module; empty when the watch did not see it load.
// A module first met here was loaded lazily by this very launch when this
// thread saw exactly one image load since: that image is the module's.
std::string module_of(CUfunction f) {
  State& s = state();
  CUmodule module = nullptr;
  if (!s.driver->func_get_module || s.driver->func_get_module(&module, f) != CUDA_SUCCESS)
    return {};
  std::lock_guard lock(s.maps_mutex);
  auto found = s.modules.find(module);
  if (found == s.modules.end() && loaded_images.size() == 1)
    found = s.modules.emplace(module, loaded_images.front()).first;
  loaded_images.clear();
  return found == s.modules.end() ? std::string() : found->second;
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

void driver_launch(CUfunction f, const char* symbol, const LaunchShape& shape) {
  state().session->launch(f, shape, [&] {
    return WatchedKernel{function_name(f, symbol), module_of(f)};
  });
}

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
  std::string name = hex_digest(XXH3_64bits_digest(digest));
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
        if (module && *module && loaded_images.size() == 1) {
          std::lock_guard lock(state().maps_mutex);
          state().modules[*module] = loaded_images.front();
        }
        loaded_images.clear();
        return;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz: {
        // Every variant's parameters start with (CUgraphExec*, CUgraph).
        const auto* p = static_cast<const cuGraphInstantiateWithFlags_params*>(cb->functionParams);
        if (p->phGraphExec && *p->phGraphExec) graph_instantiated(*p->phGraphExec, p->hGraph);
        return;
      }
      default:
        return;
    }
  }
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
    case CUPTI_CB_DOMAIN_RESOURCE:
      if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
        const auto* resource = static_cast<const CUpti_ResourceData*>(data);
        const auto* module =
            static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
        if (module && module->pCubin && module->cubinSize)
          loaded_images.push_back(image_identity(module->pCubin, module->cubinSize));
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
const CUpti_CallbackId kNvtxCallbacks[] = {CUPTI_CBID_NVTX_nvtxRangePushA,
                                           CUPTI_CBID_NVTX_nvtxRangePushEx,
                                           CUPTI_CBID_NVTX_nvtxDomainRangePushEx};

void write_at_exit() {
  try {
    state().session->write();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunelock watch: %s\n", e.what());
    state().session->report_unwritten(e.what());
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
