// Reading and writing table files as the commands need them: the format
// follows the extension (.tlb binary, anything else JSON), and outputs are
// written atomically so a failure never leaves a partial file.
#pragma once

#include <filesystem>
#include <memory>

#include "tunelock/files.hpp"
#include "tunelock/table.hpp"
#include "tunelock/table_binary.hpp"
#include "tunelock/table_json.hpp"
#include "tunelock/table_search.hpp"

namespace tunelock::cli {

inline std::string table_bytes(const Table& table, const std::filesystem::path& path) {
  return path.extension() == ".tlb" ? table_to_binary(table) : table_to_json(table);
}

inline void write_table(const Table& table, const std::filesystem::path& path) {
  write_file_atomically(path, table_bytes(table, path));
}

}  // namespace tunelock::cli
