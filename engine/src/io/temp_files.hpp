// The temporary files an atomic write renames into place, named so that a
// later write can tell which ones a killed process left behind and remove
// them, while never touching a temp file another live writer still owns.
#pragma once

#include <filesystem>

namespace tunelock::temp_files {

// A name beside `target`, unique per host, process and call:
// `.<name>.tmp.<host>.<pid>.<n>`.
std::filesystem::path beside(const std::filesystem::path& target);

// Removes temp files of `target` left by processes of this host that no
// longer run (killed mid-write). Best effort: a failure is ignored, since
// the write itself does not depend on it.
void remove_stale(const std::filesystem::path& target);

}  // namespace tunelock::temp_files
