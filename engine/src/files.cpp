#include "tunelock/files.hpp"

#include <unistd.h>

#include <atomic>
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
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path.string() + ": cannot be opened for reading");
  // One read into a buffer of the right size: tables can be tens of MB.
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path.string() + ": cannot tell its size");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (in.gcount() != size) throw Error(path.string() + ": read failed");
  return bytes;
}

namespace {

// The folder `path` goes in, created when missing.
std::filesystem::path make_parent_folder(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(path.string() + ": cannot create folder " + dir.string() + ": " + ec.message());
  return dir;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  namespace fs = std::filesystem;
  const fs::path dir = make_parent_folder(path);
  std::error_code ec;
  // Unique per process and call, so concurrent writers never share a temp file.
  static std::atomic<unsigned> counter{0};
  const fs::path temp = dir / ("." + path.filename().string() + ".tmp." +
                               std::to_string(::getpid()) + "." + std::to_string(counter++));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path.string() + ": cannot write (temp file " + temp.string() + ")");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      fs::remove(temp, ec);
      throw Error(path.string() + ": write failed (disk full?)");
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw Error(path.string() + ": cannot replace: " + ec.message());
  }
}

void ensure_writable_parent(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const fs::path dir = make_parent_folder(path);
  std::error_code ec;
  const fs::path probe = dir / (".tunelock-probe." + std::to_string(::getpid()));
  {
    std::ofstream out(probe, std::ios::binary);
    if (!out) throw Error(path.string() + ": folder " + dir.string() + " is not writable");
  }
  fs::remove(probe, ec);
}

}  // namespace tunelock
