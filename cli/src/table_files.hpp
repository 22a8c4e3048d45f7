// Reading and writing table files as the commands need them: the format
// follows the extension (.tlb binary, anything else JSON), and outputs are
// written atomically so a failure never leaves a partial file.
#pragma once

#include <filesystem>
#include <memory>

#include "tunelock/io/files.hpp"
#include "tunelock/tables/table.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"

namespace tunelock::cli {

inline void write_table(const Table& table, const std::filesystem::path& path) {
  write_table_file(table, path);
}

}  // namespace tunelock::cli
