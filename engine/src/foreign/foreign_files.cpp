#include "tunelock/foreign/foreign_files.hpp"

#include "tunelock/base/error.hpp"
#include "tunelock/foreign/moe_config_file.hpp"
#include "tunelock/io/files.hpp"

namespace tunelock {

namespace fs = std::filesystem;

InMemoryTable import_foreign_files(std::span<const fs::path> paths, const std::string& arch) {
  if (arch.empty()) throw Error("import: the table's architecture is needed (sm90, ...)");
  for (const fs::path& path : paths) {
    if (!fs::exists(path)) throw Error(path.string() + ": no such file or folder");
    if (!fs::is_directory(path) && !path.filename().string().starts_with("E="))
      throw Error(path.string() +
                  ": not a file tunelock imports (a fused-MoE config file, "
                  "E=<experts>,N=<n>,device_name=<device>...json, or a folder of them)");
  }
  return moe_table_from_files(paths, arch);
}

std::size_t export_foreign_files(const Table& table, const fs::path& folder,
                                 const std::string& table_name) {
  const auto files = moe_files_from_table(table);
  for (const auto& [name, text] : files) {
    const fs::path path = folder / name;
    if (fs::exists(path) && read_file(path) != text)
      throw Error(path.string() + " exists and differs from what " + table_name +
                  " holds for it; export into an empty folder, or remove it first");
  }
  fs::create_directories(folder);
  for (const auto& [name, text] : files) write_file_atomically(folder / name, text);
  return files.size();
}

}  // namespace tunelock
