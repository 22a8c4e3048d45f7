// The engine's only file-system edge: whole-file reads with errors a user
// can act on. Kept apart so the rules stay pure and portable.
#pragma once

#include <filesystem>
#include <string>

namespace tunelock {

// The file's bytes. Throws Error naming the path when it is missing, a
// directory, or unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace tunelock
