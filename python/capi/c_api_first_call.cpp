// A first call through the C ABI: the caller's callbacks become the
// engine's CallRunner, and the engine's driver tells the whole story.
#include <array>
#include <vector>

#include "c_api_support.hpp"
#include "tunelock/c_api.h"
#include "tunelock/model/batch_rows.hpp"
#include "tunelock/runtime/first_call.hpp"
#include "tunelock/runtime/runtime.hpp"

using namespace tunelock;
using namespace tunelock::c_api;
using nlohmann::json;

namespace {

class CallbackRunner final : public CallRunner {
 public:
  explicit CallbackRunner(const tunelock_call_runner& callbacks) : callbacks_(callbacks) {
    if (!callbacks.time || !callbacks.run_outputs || !callbacks.use_second_input ||
        !callbacks.put_back)
      throw Error(
          "first call: every runner callback (time, run_outputs, use_second_input, put_back) is "
          "needed");
  }
  double time(std::size_t i) override { return timed(callbacks_.time, i); }
  double time_briefly(std::size_t i) override {
    return timed(callbacks_.time_briefly ? callbacks_.time_briefly : callbacks_.time, i);
  }
  bool has_outputs() const override { return callbacks_.has_outputs != 0; }
  std::string run_outputs(std::size_t i) override {
    std::array<char, 256> outputs{};
    if (callbacks_.run_outputs(callbacks_.context, static_cast<int64_t>(i), outputs.data(),
                               outputs.size(), error_.data(), error_.size()) != 0)
      throw Error(failure());
    outputs.back() = '\0';
    return outputs.data();
  }
  bool use_second_input() override { return callbacks_.use_second_input(callbacks_.context) == 1; }
  void put_back() override {
    if (callbacks_.put_back(callbacks_.context) != 0)
      throw Error("the runner could not put the call's buffers back");
  }
  bool capturing() const override { return callbacks_.capturing != 0; }
  bool runs_candidates() const override { return callbacks_.runs_candidates != 0; }
  std::int64_t batch_rows() const override {
    return callbacks_.run_first_rows && callbacks_.batch_dim ? callbacks_.batch_rows : 0;
  }
  FirstRows run_first_rows(std::size_t i, std::int64_t rows) override {
    if (!callbacks_.run_first_rows) return CallRunner::run_first_rows(i, rows);
    std::array<char, 256> alone{}, inside{};
    if (callbacks_.run_first_rows(callbacks_.context, static_cast<int64_t>(i), rows, alone.data(),
                                  alone.size(), inside.data(), inside.size(), error_.data(),
                                  error_.size()) != 0)
      throw Error(failure());
    alone.back() = inside.back() = '\0';
    return {alone.data(), inside.data()};
  }

 private:
  using TimeCallback = int (*)(void*, int64_t, double*, char*, size_t);

  double timed(TimeCallback callback, std::size_t i) {
    double median_ms = 0;
    if (callback(callbacks_.context, static_cast<int64_t>(i), &median_ms, error_.data(),
                 error_.size()) != 0)
      throw Error(failure());
    if (!(median_ms >= 0))
      throw Error("the runner timed candidate " + std::to_string(i) + " as " +
                  std::to_string(median_ms) + " ms; expected a non-negative number");
    return median_ms;
  }

  std::string failure() {
    error_.back() = '\0';
    std::string text = error_.data();
    error_.front() = '\0';
    return text.empty() ? std::string("the candidate failed to run") : text;
  }

  const tunelock_call_runner& callbacks_;
  std::array<char, 1024> error_{};
};

// A plan as a face reads it: its name and what it means for the face, so
// no face compares plan or mode names.
json plan_json(FirstCall plan) {
  return json{{"plan", std::string(to_string(plan))},
              {"engine_chooses", engine_chooses(plan)},
              {"intercepts", intercepts(plan)},
              {"counts_calls", counts_calls(plan)}};
}

}  // namespace

extern "C" {

int tunelock_call_plan(const char* module, const char* name, int64_t config_count, char** plan) {
  return guarded([&] {
    if (config_count < 0) throw Error("config_count: expected 0 or more");
    const KernelId id{text_of(module, "module"), text_of(name, "name")};
    put(plan, plan_json(plan_first_call(*process_runtime().policy(), id,
                                        static_cast<std::size_t>(config_count)))
                  .dump());
  });
}

int tunelock_first_call(const char* arch, const char* module, const char* name, const char* key,
                        const char* candidates_json, int64_t config_count, int64_t own_default,
                        const char* identity, const tunelock_call_runner* runner,
                        char** outcome_json) {
  return guarded([&] {
    if (!runner) throw Error("first call: the runner is NULL");
    if (config_count < 0) throw Error("config_count: expected 0 or more");
    const std::vector<Config> candidates = configs_of(candidates_json);
    if (own_default < -1 || own_default >= static_cast<int64_t>(candidates.size()))
      throw Error("own_default: " + std::to_string(own_default) + " is not -1 or a candidate (" +
                  std::to_string(candidates.size()) + " given)");
    FirstCallRequest request;
    request.arch = text_of(arch, "arch");
    request.kernel = KernelId{text_of(module, "module"), text_of(name, "name")};
    request.key = text_of(key, "key");
    request.candidates = candidates;
    request.declared = static_cast<std::size_t>(config_count);
    if (own_default >= 0) request.own_default = static_cast<std::size_t>(own_default);
    const std::string code = identity ? text_of(identity, "identity") : std::string();
    request.identity = code;
    const std::string batch_dim =
        runner->batch_dim ? text_of(runner->batch_dim, "runner.batch_dim") : std::string();
    if (!batch_dim.empty()) check_batch_dim_name(batch_dim, "runner.batch_dim");
    request.batch_dim = batch_dim;
    CallbackRunner callbacks(*runner);
    const FirstCallOutcome outcome = run_first_call(process_runtime(), request, callbacks);
    json out{{"plan", plan_json(outcome.plan)},
             {"launched", outcome.launched},
             {"timed", outcome.timed},
             {"provisional", outcome.provisional},
             {"audit_id", nullptr}};
    if (outcome.decision) out["reason"] = std::string(to_string(outcome.decision->choice.reason));
    if (outcome.audit_id) out["audit_id"] = *outcome.audit_id;
    put(outcome_json, out.dump());
  });
}

int tunelock_enumerate(const char* module, const char* name, int64_t config_count) {
  return guarded([&] {
    if (config_count < 0) throw Error("config_count: expected 0 or more");
    Runtime& runtime = process_runtime();
    const KernelId id{text_of(module, "module"), text_of(name, "name")};
    const auto count = static_cast<std::size_t>(config_count);
    enumerate_once(runtime, id, plan_first_call(*runtime.policy(), id, count), count);
  });
}

}  // extern "C"
