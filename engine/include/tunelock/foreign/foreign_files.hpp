// Other tools' tuning files in and out of tunelock tables, by kind: what
// `tunelock import` / `export`, the C ABI's tunelock_import /
// tunelock_export and Python's tunelock.import_files / export_files do.
// A new format adds its branch here, beside its codec in this room.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "tunelock/tables/table.hpp"

namespace tunelock {

// Files or folders of one format into one table for `arch`. Today:
// fused-MoE config files (moe_config_file.hpp). Throws Error naming a path
// that is no such file or of no format tunelock imports.
InMemoryTable import_foreign_files(std::span<const std::filesystem::path> paths,
                                   const std::string& arch);

// The table's entries of every format it holds, as those tools' files in
// `folder` (created). A file already there is left when equal and refused
// (Error naming it, nothing written) when not: a tool's config folder is
// never overwritten behind its owner's back. Returns the files written.
std::size_t export_foreign_files(const Table& table, const std::filesystem::path& folder,
                                 const std::string& table_name);

}  // namespace tunelock
