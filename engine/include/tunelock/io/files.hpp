// The engine's file-system edge: whole-file reads and atomic writes, with
// errors a user can act on. Kept apart so the rules stay pure and portable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tunelock {

// The file's bytes. Throws Error naming the path when it is missing, a
// directory, or unreadable.
std::string read_file(const std::filesystem::path& path);

// Bytes read_file leaves allocated past the end of what it returns.
constexpr std::size_t kReadPadding = 64;
// The largest file read_file reads; beyond it, Error naming the file and
// the limit. A 1,000,000-entry JSON table is about 230 MB.
constexpr std::uintmax_t kMaxReadBytes = std::uintmax_t{4} << 30;

// Writes `bytes` to a temporary file beside `path`, then renames it over
// `path`, so readers see the old file or the whole new one, never a part.
// Throws Error naming the path when it cannot.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// Creates the parent folders of `path` and proves the folder is writable by
// creating and removing a probe file. Throws Error naming what failed.
void ensure_writable_parent(const std::filesystem::path& path);

}  // namespace tunelock
