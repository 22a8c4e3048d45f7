// The engine's face in the browser: embind functions that take and return
// JSON text (files arrive as bytes), so the page never depends on C++ types.
// Errors come back as {"error": "..."}, never as exceptions into JavaScript.
#include <emscripten/bind.h>

#include <map>
#include <memory>

#include "preview.hpp"
#include "tunelock/candidates.hpp"
#include "tunelock/error.hpp"
#include "tunelock/table_binary.hpp"
#include "tunelock/table_json.hpp"

namespace {

using nlohmann::json;
using namespace tunelock;

std::map<int, std::unique_ptr<Table>> tables;
std::map<int, CandidateManifest> manifests;
int next_id = 1;

// A page must stay responsive: refuse what could not be previewed anyway.
constexpr std::size_t kMaxBytes = 256u << 20;

std::string guarded(const std::function<json()>& body) {
  try {
    return body().dump();
  } catch (const Error& e) {
    return json{{"error", e.what()}}.dump();
  } catch (const json::exception& e) {
    return json{{"error", std::string("malformed request: ") + e.what()}}.dump();
  } catch (const std::bad_alloc&) {
    return json{{"error", "out of memory: the file is too large to preview"}}.dump();
  }
}

void check_size(const std::string& name, const std::string& bytes) {
  if (bytes.size() > kMaxBytes)
    throw Error(name + ": " + std::to_string(bytes.size() >> 20) +
                " MB is more than this page previews (256 MB)");
}

std::string load_table(const std::string& name, const std::string& bytes) {
  return guarded([&] {
    check_size(name, bytes);
    const bool binary = name.ends_with(".tlb") || looks_like_binary_table(bytes);
    std::unique_ptr<Table> table = binary ? table_from_binary(bytes, name)
                                          : std::unique_ptr<Table>(table_from_json(bytes, name));
    json summary = preview::table_summary(*table);
    summary["id"] = next_id;
    tables[next_id++] = std::move(table);
    return summary;
  });
}

std::string load_candidates(const std::string& name, const std::string& text) {
  return guarded([&] {
    check_size(name, text);
    CandidateManifest manifest = candidates_from_json(text, name);
    json summary = preview::manifest_summary(manifest);
    summary["id"] = next_id;
    manifests[next_id++] = std::move(manifest);
    return summary;
  });
}

std::string decide(int table_id, int candidates_id, const std::string& kernel,
                   const std::string& key, const std::string& policy) {
  return guarded([&] {
    auto manifest = manifests.find(candidates_id);
    if (manifest == manifests.end()) throw Error("load a candidate manifest first");
    auto table = tables.find(table_id);
    const Table* chosen = table == tables.end() ? nullptr : table->second.get();
    return preview::decide(chosen, manifest->second.find(kernel, "candidates").configs, kernel, key,
                           json::parse(policy));
  });
}

std::string diff_tables(int a, int b) {
  return guarded([&] {
    if (!tables.count(a) || !tables.count(b)) throw Error("pick two loaded tables");
    return preview::diff(*tables.at(a), *tables.at(b));
  });
}

std::string report(const std::string& files) {
  return guarded([&] { return preview::report(json::parse(files)); });
}
std::string verify_logs(const std::string& logs) {
  return guarded([&] { return preview::verify_logs(json::parse(logs)); });
}
std::string decide_case(const std::string& c) {
  return guarded([&] { return preview::decide_case(json::parse(c)); });
}
double decisions_per_second(const std::string& cases, int repeats) {
  return preview::decisions_per_second(json::parse(cases), repeats);
}
void unload(int id) {
  tables.erase(id);
  manifests.erase(id);
}

}  // namespace

EMSCRIPTEN_BINDINGS(tunelock) {
  emscripten::function("loadTable", &load_table);
  emscripten::function("loadCandidates", &load_candidates);
  emscripten::function("decide", &decide);
  emscripten::function("diffTables", &diff_tables);
  emscripten::function("report", &report);
  emscripten::function("verifyLogs", &verify_logs);
  emscripten::function("decideCase", &decide_case);
  emscripten::function("decisionsPerSecond", &decisions_per_second);
  emscripten::function("unload", &unload);
}
