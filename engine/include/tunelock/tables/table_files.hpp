// Finding and loading the table for an architecture: `<arch>.tlb`, then
// `<arch>.json`, in each directory of the table path in order, then in the
// installed share/tunelock/tables. The first file found is the table.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/tables/table.hpp"

namespace tunelock {

// Where the installed tables live (empty when the build has none).
std::filesystem::path installed_tables_dir();

// `<dir>/<arch>.tlb`, else `<dir>/<arch>.json`, when one exists.
std::optional<std::filesystem::path> table_file_in(const std::filesystem::path& dir,
                                                   std::string_view arch);

// A table from a file's bytes, binary or JSON as detect_file_kind tells them
// apart (by the bytes; by the name only where they cannot tell). Another
// kind of file (a manifest, a record, a log) is an Error naming `origin`
// and what it holds; a damaged table, the reader's Error.
std::unique_ptr<Table> table_from_bytes(std::string bytes, const std::string& origin);

// table_from_bytes of the file at `path`.
std::unique_ptr<Table> load_table_file(const std::filesystem::path& path);

// Writes `table` to `path` atomically, in the form its name says (`.tlb`
// binary, anything else JSON): the one writer of table files, beside the
// reader. A file named like an architecture's table (`sm90.json`,
// `host.tlb`), which the search would find for that arch, must hold that
// arch: another is refused here, at write, not at the next load.
void write_table_file(const Table& table, const std::filesystem::path& path);

// The arch's table along `search_path`, or null when there is none. Each
// entry is a directory (searched with table_file_in) or a table file named
// directly. A table never applies to another architecture: a file named
// directly that holds another arch's is skipped with a warning; a file found
// as `<arch>.json|.tlb` whose arch field differs is an Error naming the file
// and both archs.
std::unique_ptr<Table> load_table_for_arch(std::string_view arch,
                                           std::span<const std::string> search_path,
                                           bool include_installed);

// The entries of `search_path` no table can ever be read from, each as
// "PATH does not exist" or "PATH cannot be read (why)": a mistyped path
// would otherwise only show as every kernel falling back to the cheapest.
std::vector<std::string> unreadable_table_path(std::span<const std::string> search_path);

// Where load_table_for_arch looks, for messages: the entries (and the
// installed tables' directory), each missing one marked so.
std::string table_search_text(std::span<const std::string> search_path, bool include_installed);

}  // namespace tunelock
