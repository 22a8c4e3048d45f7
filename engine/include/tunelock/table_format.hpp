// Facts shared by every table format: the version this build writes and
// reads, and what counts as an architecture name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tunelock {

// Tables with a newer format_version are refused rather than misread.
inline constexpr std::int64_t kTableFormatVersion = 1;

// Arch tags name files (`<arch>.json`), so they are short identifiers such
// as `sm90` or `host`. Throws Error("<where>: ...") otherwise.
void check_arch_name(std::string_view arch, const std::string& where);

}  // namespace tunelock
