// Generates the parity corpus: ≥1,000 (candidates, table, key, policy)
// cases with their native decisions and log digests, for the wasm build to
// reproduce exactly. Also prints native decisions per second on the corpus.
// Usage: web_parity_native OUT.json [cases]
#include <cstdio>
#include <fstream>
#include <random>

#include "preview.hpp"
#include "tunelock/model/config_json.hpp"

using nlohmann::json;
using namespace tunelock;

namespace {

Config random_config(std::mt19937& random) {
  static const std::vector<std::string> names{"BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "GROUP"};
  std::vector<Param> params;
  for (const std::string& name : names)
    if (random() % 2) params.push_back({name, std::int64_t{1} << (random() % 9)});
  Config c = make_config(params, 1 << (random() % 4), static_cast<int>(random() % 5),
                         random() % 8 == 0 ? 2 : 1);
  if (random() % 10 == 0) c.maxnreg = 128;
  return c;
}

json make_case(std::mt19937& random, int index) {
  const std::size_t count = 1 + random() % 6;
  std::vector<Config> candidates;
  json configs = json::array();
  while (candidates.size() < count) {
    const Config c = random_config(random);
    if (std::find(candidates.begin(), candidates.end(), c) != candidates.end()) continue;
    candidates.push_back(c);
    configs.push_back(config_to_json(c));
  }
  const std::string module = random() % 3 ? "pkg.ops" : "";
  const std::string name = "k" + std::to_string(random() % 4);
  const std::string kernel = module.empty() ? name : module + "." + name;
  const std::string key =
      "M=" + std::to_string(64 << (random() % 4)) + (random() % 2 ? "|f16" : "|f32");
  json c = {{"kernel", kernel}, {"key", key}, {"candidates", json{{"configs", configs}}.dump()}};
  if (random() % 4) {
    json kernels = json::object();
    for (int e = 0; e < 1 + static_cast<int>(random() % 4); ++e) {
      const std::string entry_kernel = random() % 2 ? name : kernel;
      const std::string entry_key = random() % 3 ? key : (random() % 2 ? "*" : "M=1|f16");
      // Mostly live configs, sometimes stale ones.
      const Config config =
          random() % 4 ? candidates[random() % candidates.size()] : random_config(random);
      json entry = config_to_json(config);
      if (random() % 3 == 0) {  // a record's bit class: what TUNELOCK_EQUIVALENT=timed may time
        const Config& other = candidates[random() % candidates.size()];
        if (!(other == config)) entry["equivalent"] = json::array({config_to_json(other)});
      }
      kernels[entry_kernel][entry_key] = entry;
    }
    json table{{"arch", "sm90"}, {"kernels", kernels}};
    if (random() % 3 == 0) {  // configs a record flagged: the fallback rules skip them
      json flagged = json::array();
      for (std::size_t f = 0; f < 1 + random() % count; ++f)
        flagged.push_back(signature(candidates[random() % count]));
      table["nondeterministic"][random() % 2 ? name : kernel] = flagged;
    }
    c["table"] = table.dump();
  }
  json policy = json::object();
  if (random() % 5 == 0) policy["on_miss"] = "error";
  if (random() % 4 == 0)
    policy["block_sizes"] = "BLOCK_M=" + std::to_string(std::int64_t{1} << (random() % 9));
  if (random() % 6 == 0) {
    policy["chaos"] = true;
    policy["rank"] = random() % 8;
  }
  c["policy"] = policy;
  json log = json::object();
  for (int e = 0; e < static_cast<int>(random() % 20); ++e)
    log["sm90|" + kernel + "|M=" + std::to_string(e)] =
        signature(random_config(random)) + (e % 2 ? ";pinned" : ";timed");
  c["log"] = log;
  c["id"] = index;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: web_parity_native OUT.json [cases]\n");
    return 2;
  }
  const int count = argc > 2 ? std::atoi(argv[2]) : 1200;
  std::mt19937 random(20261129);
  json cases = json::array();
  for (int i = 0; i < count; ++i) {
    json c = make_case(random, i);
    c["expected"] = preview::decide_case(c);
    cases.push_back(std::move(c));
  }
  std::ofstream(argv[1]) << cases.dump();
  std::printf("native: %zu cases written, %.3g decisions/s\n", cases.size(),
              preview::decisions_per_second(cases, 200));
  return 0;
}
