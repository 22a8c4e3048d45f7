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

inline void write_table(const Table& table, const std::filesystem::path& path) {
  write_table_file(table, path);
}

}  // namespace tunelock::cli
