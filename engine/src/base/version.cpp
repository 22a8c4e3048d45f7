#include "tunelock/base/version.hpp"

namespace tunelock {

std::string_view tool_version() { return TUNELOCK_VERSION; }

}  // namespace tunelock
