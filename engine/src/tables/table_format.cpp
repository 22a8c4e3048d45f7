#include "tunelock/tables/table_format.hpp"

#include <algorithm>
#include <cctype>

#include "tunelock/base/error.hpp"

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

void check_kernel_name(std::string_view kernel, const std::string& where) {
  if (kernel.empty()) throw Error(where + ": empty kernel name");
}

void check_key(std::string_view key, const std::string& where) {
  if (key.empty()) throw Error(where + ": empty key; a key is `name=value|...` or \"*\"");
}

}  // namespace tunelock
