// Other tools' tuning files through the C ABI (engine/src/foreign/): into a
// table file, and back into the files those tools read.
#include <filesystem>
#include <vector>

#include "c_api_support.hpp"
#include "tunelock/c_api.h"
#include "tunelock/foreign/foreign_files.hpp"
#include "tunelock/foreign/moe_config_file.hpp"
#include "tunelock/tables/table_files.hpp"

using namespace tunelock;
using namespace tunelock::c_api;
using nlohmann::json;

extern "C" {

int tunelock_import(const char* paths_json, const char* arch, const char* output,
                    int64_t* entries) {
  return guarded([&] {
    const json list = json_of(paths_json, "paths");
    if (!list.is_array()) throw Error("import: paths: expected a JSON array of paths");
    std::vector<std::filesystem::path> paths;
    for (const json& path : list) {
      if (!path.is_string()) throw Error("import: paths: expected strings, got " + path.dump());
      paths.emplace_back(path.get<std::string>());
    }
    const InMemoryTable table = import_foreign_files(paths, text_of(arch, "arch"));
    write_table_file(table, text_of(output, "output"));
    if (entries) *entries = static_cast<int64_t>(table.keys(kFusedMoeKernel).size());
  });
}

int tunelock_export(const char* table, const char* folder, int64_t* files) {
  return guarded([&] {
    const std::string name = text_of(table, "table");
    const std::size_t written =
        export_foreign_files(*load_table_file(name), text_of(folder, "folder"), name);
    if (files) *files = static_cast<int64_t>(written);
  });
}

}  // extern "C"
