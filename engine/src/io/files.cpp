#include "tunelock/io/files.hpp"

#include <unistd.h>

#include <fstream>
#include <new>
#include <sstream>

#include "io/temp_files.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock {

namespace {

// What a path that is not a regular file is, for a message.
std::string_view kind_of(const std::filesystem::file_status& status) {
  namespace fs = std::filesystem;
  switch (status.type()) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

}  // namespace

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(path.string() + ": no such file");
  // Opening a FIFO waits for a writer and a device may never end: refuse
  // both before opening, so a bad path is an error, never a hang.
  if (!std::filesystem::is_regular_file(status))
    throw Error(path.string() + ": is " + std::string(kind_of(status)) + ", expected a file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path.string() + ": cannot be opened for reading");
  // One read into a buffer of the right size: tables can be tens of MB.
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path.string() + ": cannot tell its size");
  // A sparse 100 GB file, or a device-sized one, would be refused only by
  // the allocator, with no file named: refuse it first.
  if (static_cast<std::uintmax_t>(size) > kMaxReadBytes) {
    throw Error(path.string() + ": " + std::to_string(size) +
                " bytes; tunelock reads files of at most " + std::to_string(kMaxReadBytes >> 30) +
                " GiB (store a table that large as .tlb, or split it)");
  }
  // Room past the end for a SIMD parser's padding, so a large JSON table is
  // read without a second copy of its text (kReadPadding, files.hpp).
  std::string bytes;
  try {
    bytes.reserve(static_cast<std::size_t>(size) + kReadPadding);
    bytes.resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    throw Error(path.string() + ": " + std::to_string(size) +
                " bytes do not fit in this process's memory");
  }
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

// Where a write to `requested` must land: a symlink's final target (the
// link is a user's pointer to the real file and must keep pointing there),
// and never anything but a regular file or nothing at all, since the
// rename would replace a device or FIFO (`-o /dev/null` as root).
std::filesystem::path output_target(const std::filesystem::path& requested) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path = requested;
  // Link by link, so a dangling link still names the file to create.
  for (int hops = 0; fs::is_symlink(fs::symlink_status(path, ec)); ++hops) {
    const fs::path target = fs::read_symlink(path, ec);
    if (ec || hops == 40)
      throw Error(requested.string() + ": cannot resolve the symlink" +
                  (ec ? ": " + ec.message() : std::string(" (a loop?)")));
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  const auto status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw Error(requested.string() + ": is " + std::string(kind_of(status)) +
                ", not a regular file; refusing to replace it");
  return path;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& requested, std::string_view bytes) {
  namespace fs = std::filesystem;
  const fs::path path = output_target(requested);
  const fs::path dir = make_parent_folder(path);
  std::error_code ec;
  // A writer killed mid-write leaves its temp file; the next write clears it.
  temp_files::remove_stale(path);
  // Unique per host, process and call, so concurrent writers never share one.
  const fs::path temp = temp_files::beside(path);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path.string() + ": cannot write (temp file " + temp.string() + ")");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();  // close reports what flush may not: a full disk shows at close
    if (!out) {
      fs::remove(temp, ec);
      throw Error(path.string() + ": write failed (disk full?); the previous file is unchanged");
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
