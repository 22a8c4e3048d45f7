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

// Kernel names and tuning keys: any non-empty text. Every reader and every
// writer (merge) applies the same checks, so nothing is written that a
// reader then refuses.
void check_kernel_name(std::string_view kernel, const std::string& where);
void check_key(std::string_view key, const std::string& where);

}  // namespace tunelock
