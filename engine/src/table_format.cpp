#include "tunelock/table_format.hpp"

#include <algorithm>
#include <cctype>

#include "tunelock/error.hpp"

namespace tunelock {

void check_arch_name(std::string_view arch, const std::string& where) {
  const bool valid = !arch.empty() && arch.size() <= 64 &&
                     std::all_of(arch.begin(), arch.end(), [](unsigned char c) {
                       return std::isalnum(c) || c == '_' || c == '-';
                     });
  if (!valid) {
    throw Error(where + ": '" + std::string(arch) +
                "' is not an architecture tag; expected letters, digits, '_' or '-' (e.g. sm90)");
  }
}

}  // namespace tunelock
