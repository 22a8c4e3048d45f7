// One first call under every plan (first_call_cases.json), played by two
// faces in this process: the engine's driver with a scripted runner, and
// the C++ launcher's KernelFamily on the host backend (a scripted clock
// over HostBackend's buffers). Both must launch the same candidate and
// write the same choice log, audit file and record; the summary it writes
// is what the Python face (first_call_conformance.py) must match too.
//
// Usage: first_call_conformance CASES OUT_DIR -> OUT_DIR/summary.json;
// exit 0 when the faces agree and do what each case expects, 1 naming the
// first difference or unmet expectation, 2 on usage or an unreadable file.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tunelock/base/version.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/runtime/first_call.hpp"
#include "tunelock/runtime/runtime.hpp"

using namespace tunelock;
using namespace tunelock::launcher;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What a candidate's kernel does: x = [1, 1e8, -1e8] summed in order (0)
// or backwards (1), alternately (its bits change between two runs), or not
// at all (it fails).
struct Candidate {
  Config config;
  std::string sum;
  double ms = 0;
  int runs = 0;  // the racy one's runs so far

  float run(const std::vector<float>& x) {
    if (sum == "fails") throw std::runtime_error("candidate fails to run");
    const bool backwards = sum == "backwards" || (sum == "racy" && runs++ % 2);
    float total = 0;
    if (backwards) {
      for (auto v = x.rbegin(); v != x.rend(); ++v) total += *v;
    } else {
      for (float v : x) total += v;
    }
    return total;
  }
};

std::vector<float> call_inputs() { return {1.0f, 1e8f, -1e8f}; }
std::vector<float> second_inputs() { return {0.5f, -3e7f, 2e-3f}; }

struct Scenario {
  json cases;
  KernelId kernel;
  std::string key;
  std::vector<Candidate> candidates;
  std::string table;  // the table file's text

  explicit Scenario(const json& file)
      : cases(file.at("cases")),
        kernel{file.at("module"), file.at("name")},
        key("N=" + std::to_string(file.at("n").get<int>()) + "|" +
            file.at("dtype").get<std::string>() + "|" + file.at("dtype").get<std::string>()),
        table(file.at("table").dump(1) + "\n") {
    for (std::size_t i = 0; i < file.at("candidates").size(); ++i) {
      const json& c = file.at("candidates")[i];
      json config = c;
      config.erase("sum");
      config.erase("ms");
      candidates.push_back({config_from_json(config, "candidates[" + std::to_string(i) + "]"),
                            c.at("sum"), c.at("ms").get<double>()});
    }
  }
  std::vector<Config> configs() const {
    std::vector<Config> out;
    for (const Candidate& c : candidates) out.push_back(c.config);
    return out;
  }
};

// The same device on every face, so files compare byte for byte.
Provenance fixed_device() {
  Provenance device;
  device.device_name = "conformance";
  device.tool_version = std::string(tool_version());
  device.recorded_at = "2026-01-01T00:00:00Z";
  return device;
}

Policy policy_of(const json& c, const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [k, v] : c.at("policy").items()) pairs.emplace_back(k, v.get<std::string>());
  if (c.at("table").get<bool>()) pairs.emplace_back("table_path", (dir / "tables").string());
  pairs.emplace_back("record_path", (dir / "run").string());
  return policy_from_key_values(pairs, Policy{});
}

// The engine face: the driver with a runner that plays the candidates.
class ScriptedRunner final : public CallRunner {
 public:
  ScriptedRunner(std::vector<Candidate>& candidates, bool capturing)
      : candidates_(candidates), capturing_(capturing) {}
  double time(std::size_t i) override {
    ++times;
    for (int r = 0; r < 4; ++r) out_ = candidates_[i].run(x_);  // warm-up and repeats
    return candidates_[i].ms;
  }
  bool has_outputs() const override { return true; }
  std::string run_outputs(std::size_t i) override {
    ++bit_runs;
    out_ = candidates_[i].run(x_);
    return std::string(reinterpret_cast<const char*>(&out_), sizeof out_);
  }
  bool use_second_input() override {
    x_ = second_inputs();
    return true;
  }
  void put_back() override { x_ = call_inputs(); }
  bool capturing() const override { return capturing_; }

  int times = 0;     // candidates timed
  int bit_runs = 0;  // candidates run for their bits

 private:
  std::vector<Candidate>& candidates_;
  bool capturing_;
  std::vector<float> x_ = call_inputs();
  float out_ = 0;
};

// The launcher face's clock: HostBackend's buffers, scripted times (a
// wall clock would make the audit's medians differ from run to run).
class ScriptedClock final : public Backend {
 public:
  explicit ScriptedClock(const std::vector<Candidate>& candidates) : candidates_(candidates) {}
  std::string arch(std::size_t slot) const override { return host_.arch(slot); }
  Provenance device() const override { return fixed_device(); }
  bool capturing(void*) const override { return capturing_all; }
  std::vector<double> time(const std::function<void()>& before, const std::function<void()>& launch,
                           const std::function<void()>& after, int warmup, int repeats) override {
    for (int r = 0; r < warmup + repeats; ++r) {
      before();
      launch();
      after();
    }
    return std::vector<double>(static_cast<std::size_t>(repeats), candidates_[last_run].ms);
  }
  void zero(BufferRef b) override { host_.zero(b); }
  std::vector<std::byte> save(BufferRef b) override { return host_.save(b); }
  void restore(BufferRef b, const std::vector<std::byte>& s) override { host_.restore(b, s); }

  bool capturing_all = false;
  std::size_t last_run = 0;

 private:
  const std::vector<Candidate>& candidates_;
  HostBackend host_;
};

// The stream first, as a GPU family takes it: the backend says whether it
// is being captured.
using MixFamily = KernelFamily<CUstream_st*, std::vector<float>*, float*>;

json files_under(const fs::path& dir) {
  json files = json::object();
  for (const auto& item : fs::directory_iterator(dir))
    if (item.path().filename().string().rfind("run.", 0) == 0)
      files[item.path().filename().string()] = read_file(item.path());
  return files;
}

json summary_of(Runtime& runtime, const fs::path& dir, const std::optional<std::size_t>& launched,
                const std::string& error) {
  runtime.flush();
  json out{{"choice_log", runtime.choice_log().snapshot()},
           {"digest", runtime.choice_digest()},
           {"files", files_under(dir)}};
  if (launched) out["launched"] = *launched;
  if (!error.empty()) out["error"] = error;
  return out;
}

// A face that did not do what the case expects.
struct Mismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the case expects of the engine's story: the candidate launched (or
// the error's words), how many candidates were timed and run for bits.
void expect(const json& c, const json& summary, const ScriptedRunner& runner) {
  const json& want = c.at("expect");
  const std::string name = c.at("name");
  auto fail = [&](const std::string& what) {
    throw Mismatch(name + ": " + what + " (got " + summary.dump() + ", timed " +
                   std::to_string(runner.times) + ", bit runs " + std::to_string(runner.bit_runs) +
                   ")");
  };
  if (want.contains("launched") && summary.value("launched", json()) != want["launched"])
    fail("expected candidate " + want["launched"].dump() + " launched");
  if (want.contains("error") &&
      summary.value("error", std::string()).find(want["error"].get<std::string>()) ==
          std::string::npos)
    fail("expected the error " + want["error"].dump());
  if (runner.times != want.at("times").get<int>())
    fail("expected " + want["times"].dump() + " candidates timed");
  if (runner.bit_runs != want.at("bit_runs").get<int>())
    fail("expected " + want["bit_runs"].dump() + " bit runs");
}

json engine_face(Scenario& s, const json& c, const fs::path& dir) {
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(policy_of(c, dir));
  runtime.set_device(fixed_device());
  const std::vector<Config> configs = s.configs();
  FirstCallRequest request;
  request.arch = "host";
  request.kernel = s.kernel;
  request.key = s.key;
  request.candidates = configs;
  ScriptedRunner runner(s.candidates, c.value("capturing", false));
  std::optional<std::size_t> launched;
  std::string error;
  try {
    const FirstCallOutcome outcome = run_first_call(runtime, request, runner);
    launched = outcome.launched;
    if (outcome.audit_id) runtime.count_audited_call(*outcome.audit_id);  // as a face's hot path
  } catch (const std::exception& e) {
    error = e.what();
  }
  json summary = summary_of(runtime, dir, launched, error);
  expect(c, summary, runner);
  return summary;
}

json launcher_face(Scenario& s, const json& c, const fs::path& dir) {
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(policy_of(c, dir));
  ScriptedClock clock(s.candidates);
  clock.capturing_all = c.value("capturing", false);
  Launcher launcher(clock, runtime, TuningOptions{1, 3});
  runtime.set_device(fixed_device());
  std::vector<MixFamily::Variant> variants;
  for (std::size_t i = 0; i < s.candidates.size(); ++i) {
    variants.push_back(
        {s.candidates[i].config, [&s, &clock, i](CUstream_st*, std::vector<float>* x, float* out) {
           clock.last_run = i;
           *out = s.candidates[i].run(*x);
         }});
  }
  MixFamily::Hooks hooks;
  hooks.outputs = [](CUstream_st*, std::vector<float>*, float* out) {
    return std::vector<NamedBuffer>{{"out", {out, sizeof *out}}};
  };
  hooks.inputs = [](CUstream_st*, std::vector<float>* x, float*) {
    return std::vector<NamedBuffer>{{"x", {x->data(), x->size() * sizeof(float)}}};
  };
  hooks.second_input = [](CUstream_st*, std::vector<float>* x, float*) {
    const std::vector<float> second = second_inputs();  // into x's own storage: it is a buffer
    std::copy(second.begin(), second.end(), x->begin());
  };
  MixFamily mix(launcher, s.kernel, {"N"}, std::move(variants), std::move(hooks));
  std::vector<float> x = call_inputs();
  float out = -1;
  std::optional<std::size_t> launched;
  std::string error;
  try {
    mix({std::int64_t{3}}, {"f32", "f32"}, nullptr, &x, &out);
    launched = clock.last_run;  // the real launch is the last run
  } catch (const std::exception& e) {
    error = e.what();
  }
  return summary_of(runtime, dir, launched, error);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: first_call_conformance CASES OUT_DIR\n";
    return 2;
  }
  try {
    Scenario scenario(parse_json(read_file(argv[1]), argv[1]));
    const fs::path out = argv[2];
    json summary = json::object();
    int status = 0;
    for (const json& c : scenario.cases) {
      const std::string name = c.at("name");
      json faces = json::object();
      for (const std::string face : {"engine", "launcher"}) {
        const fs::path dir = out / face / name;
        fs::create_directories(dir / "tables");
        write_file_atomically(dir / "tables" / "host.json", scenario.table);
        for (Candidate& candidate : scenario.candidates) candidate.runs = 0;
        faces[face] =
            face == "engine" ? engine_face(scenario, c, dir) : launcher_face(scenario, c, dir);
      }
      if (faces["engine"] != faces["launcher"]) {
        std::cerr << name << ": the engine's runner and the launcher differ:\n  engine:   "
                  << faces["engine"].dump() << "\n  launcher: " << faces["launcher"].dump() << "\n";
        status = 1;
      }
      summary[name] = faces["launcher"];
    }
    write_file_atomically(out / "summary.json", summary.dump(1) + "\n");
    return status;
  } catch (const Mismatch& e) {
    std::cerr << "first_call_conformance: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "first_call_conformance: " << e.what() << "\n";
    return 2;
  }
}
