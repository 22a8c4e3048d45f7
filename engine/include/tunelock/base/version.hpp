// The tunelock version this library was built as, written into tables and
// timing sidecars as their tool_version.
#pragma once

#include <string_view>

namespace tunelock {

std::string_view tool_version();

}  // namespace tunelock
