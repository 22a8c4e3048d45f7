// A kernel family as a trainer declares it: a qualified id, the names of
// the arguments that make up its tuning key, and variants (a config plus
// the function that launches it). Each call passes the key values, the
// dtypes of its tensor arguments, and the arguments:
//
//   KernelFamily<const float*, float*, int> sum(launcher, {"my.ops", "sum"}, {"N"}, {
//       {make_config({{"BLOCK", 256}}), sum_kernel<256>},
//       {make_config({{"BLOCK", 1024}}), sum_kernel<1024>}});
//   sum({n}, {"f32"}, in, out, n);
//
// The first call per key chooses as the installed policy says (pinned:
// table, block sizes, cheapest; record/auto: timed); later calls are a
// hash lookup and the launch.
//
// A family whose first argument is a CUDA stream (cudaStream_t, CUstream)
// launches real calls on the caller's stream, and timing runs on the
// backend's private stream, so tuning never queues work behind the caller.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/launcher/detail/family_core.hpp"
#include "tunelock/launcher/launcher.hpp"

// cudaStream_t and CUstream are both pointers to this opaque type; naming
// it needs no CUDA header.
struct CUstream_st;

namespace tunelock::launcher {

// A family's own code identity: "version:<version>" (see set_code_identity).
inline std::string code_version(std::string_view version) {
  return "version:" + std::string(version);
}

template <typename... Args>
class KernelFamily {
 public:
  struct Variant {
    Config config;
    std::function<void(Args...)> launch;
    // Declared to change its own bits between runs (float atomics, races):
    // the fallback rules (block sizes, cheapest) never pick it.
    bool nondeterministic = false;
  };

  struct Hooks {
    // Runs before every launch of a config, timed or real (e.g. to set a
    // config-dependent launch parameter).
    std::function<void(const Config&, Args...)> pre_hook;
    // Outputs zeroed before every timing run (kernels that accumulate).
    std::function<std::vector<NamedBuffer>(Args...)> reset_to_zero;
    // Outputs put back after every timing run (kernels that update in place).
    std::function<std::vector<NamedBuffer>(Args...)> restore;
    // Outputs a kernel overwrites: only read by the bits checks (record
    // mode's audit, the first pinned call per key), which compare every
    // output (these, and the two lists above) across two runs of one config.
    std::function<std::vector<NamedBuffer>(Args...)> outputs;
    // Optional, for record mode's bit classes (configs whose outputs are
    // identical are interchangeable): the input buffers `second_input`
    // overwrites, and a fill that writes a second input into them (seeded
    // floats over a wide exponent range; indices left valid). The tuner
    // saves the inputs first and puts them back after. Without it, classes
    // are found on the call's own inputs only.
    std::function<std::vector<NamedBuffer>(Args...)> inputs;
    std::function<void(Args...)> second_input;
    // Optional, for batch invariance (TUNELOCK_BATCH_INVARIANT): the key
    // argument that counts the call's independent rows ("M": row i of the
    // output depends on row i of the inputs only), and three answers about
    // a call: how many rows it has, its arguments for a call on only the
    // first `rows` of them (the same buffers, for row-major rows), and the
    // output bytes of its first `rows` rows. Record then proves, per
    // config, that those rows keep their bits at every batch size.
    std::string batch_dim;
    std::function<std::int64_t(Args...)> batch_rows;
    std::function<std::tuple<Args...>(std::int64_t rows, Args...)> first_rows;
    std::function<std::vector<NamedBuffer>(std::int64_t rows, Args...)> row_outputs;
  };

  KernelFamily(Launcher& launcher, KernelId id, std::vector<std::string> key_args,
               std::vector<Variant> variants, Hooks hooks = {})
      : variants_(std::move(variants)),
        hooks_(std::move(hooks)),
        core_(launcher, std::move(id), std::move(key_args), configs_of(variants_),
              declared_nondeterministic(variants_)) {
    if (!hooks_.batch_dim.empty()) {
      if (!hooks_.batch_rows || !hooks_.first_rows || !hooks_.row_outputs)
        throw Error("kernel family '" + core_.id().qualified() + "' declares batch dim '" +
                    hooks_.batch_dim + "' without batch_rows, first_rows and row_outputs");
      core_.set_batch_dim(hooks_.batch_dim);
    }
  }

  void operator()(std::initializer_list<KeyValue> key,
                  std::initializer_list<std::string_view> dtypes, Args... args) {
    const std::span<const KeyValue> values(key.begin(), key.size());
    const std::span<const std::string_view> types(dtypes.begin(), dtypes.size());
    std::size_t index = core_.cached(values, types);
    if (index == FamilyCore::kUndecided) index = core_.decide(values, types, call_site(args...));
    run(index, args...);
  }

  const FamilyCore& core() const { return core_; }

  // Declares which code the variants are: code_version("2.1") for a version
  // or source hash the family keeps itself, or a loaded kernel's identity()
  // (its image's hash). Recorded with the family's timings and compared,
  // once per kernel, with the identity its table entries were timed on:
  // a table recorded on other code warns (TUNELOCK_IDENTITY=warn), fails
  // (strict) or is let be (ignore). Call it before the first call.
  KernelFamily& set_code_identity(std::string identity) {
    core_.set_code_identity(std::move(identity));
    return *this;
  }

 private:
  static std::vector<Config> configs_of(const std::vector<Variant>& variants) {
    std::vector<Config> out;
    for (const Variant& v : variants) {
      if (!v.launch) throw Error("a variant of a kernel family has no launch function");
      out.push_back(v.config);
    }
    return out;
  }

  static std::vector<bool> declared_nondeterministic(const std::vector<Variant>& variants) {
    std::vector<bool> out;
    for (const Variant& v : variants) out.push_back(v.nondeterministic);
    return out;
  }

  void run(std::size_t index, Args... args) {
    if (hooks_.pre_hook) hooks_.pre_hook(variants_[index].config, args...);
    variants_[index].launch(args...);
  }

  static constexpr bool kTakesStream = [] {
    if constexpr (sizeof...(Args) == 0) {
      return false;
    } else {
      return std::is_same_v<std::tuple_element_t<0, std::tuple<Args...>>, CUstream_st*>;
    }
  }();

  CallSite call_site(Args... args) {
    CallSite site;
    if constexpr (kTakesStream) {
      Backend& backend = core_.backend();
      site.capturing = backend.capturing(std::get<0>(std::tie(args...)));
      // The timing stream is asked for only when a timing run happens: it
      // may allocate, which a graph capture forbids.
      site.run = [this, &backend, args...](std::size_t i) {
        auto on_timing_stream = std::make_tuple(args...);
        if (auto* timing = static_cast<CUstream_st*>(backend.timing_stream()))
          std::get<0>(on_timing_stream) = timing;
        std::apply([&](auto... a) { run(i, a...); }, on_timing_stream);
      };
    } else {
      site.run = [this, args...](std::size_t i) { run(i, args...); };
    }
    if (hooks_.reset_to_zero) site.reset_to_zero = hooks_.reset_to_zero(args...);
    if (hooks_.restore) site.restore = hooks_.restore(args...);
    if (hooks_.outputs) site.outputs = hooks_.outputs(args...);
    if (hooks_.inputs && hooks_.second_input) {
      site.inputs = hooks_.inputs(args...);
      site.second_input = [this, args...] { hooks_.second_input(args...); };
    }
    if (!hooks_.batch_dim.empty()) {
      site.batch_rows = hooks_.batch_rows(args...);
      site.run_rows = [this, args...](std::size_t i, std::int64_t rows) {
        std::apply([&](auto... fewer) { run(i, fewer...); }, hooks_.first_rows(rows, args...));
      };
      site.row_outputs = [this, args...](std::int64_t rows) {
        return hooks_.row_outputs(rows, args...);
      };
    }
    return site;
  }

  std::vector<Variant> variants_;
  Hooks hooks_;
  FamilyCore core_;
};

}  // namespace tunelock::launcher
