#include "tunelock/files.hpp"

#include <fstream>
#include <sstream>

#include "tunelock/error.hpp"

namespace tunelock {

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(path.string() + ": no such file");
  if (std::filesystem::is_directory(status))
    throw Error(path.string() + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot be opened for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error(path.string() + ": read failed");
  return std::move(buffer).str();
}

}  // namespace tunelock
