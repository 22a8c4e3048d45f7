#include "tunelock/tables/table_files.hpp"

#if !defined(__EMSCRIPTEN__)
#include <dlfcn.h>
#endif

#include "tables/table_json_fast.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"

namespace tunelock {

namespace fs = std::filesystem;

namespace {

#if defined(TUNELOCK_TABLES_FROM_BINDIR) && !defined(__EMSCRIPTEN__)
// The file this code was loaded from: the library that carries the engine,
// or the program (whose name the loader records as typed, so /proc/self/exe
// when it holds no folder).
fs::path loaded_from() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&installed_tables_dir), &info) || !info.dli_fname) return {};
  fs::path file(info.dli_fname);
  std::error_code ec;
  if (!file.has_parent_path()) file = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : fs::weakly_canonical(file, ec);
}
#endif

}  // namespace

fs::path installed_tables_dir() {
#ifdef TUNELOCK_INSTALLED_TABLES_DIR
  static const fs::path dir = [] {
#if defined(TUNELOCK_TABLES_FROM_BINDIR) && !defined(__EMSCRIPTEN__)
    // An install under another prefix than the configured one reads its own tables.
    if (const fs::path module = loaded_from(); !module.empty()) {
      for (const char* relative : {TUNELOCK_TABLES_FROM_BINDIR, TUNELOCK_TABLES_FROM_LIBDIR}) {
        const fs::path candidate = (module.parent_path() / relative).lexically_normal();
        std::error_code ec;
        if (fs::is_directory(candidate, ec)) return candidate;
      }
    }
#endif
    return fs::path(TUNELOCK_INSTALLED_TABLES_DIR);
  }();
  return dir;
#else
  return {};
#endif
}

std::optional<fs::path> table_file_in(const fs::path& dir, std::string_view arch) {
  for (std::string_view extension : {".tlb", ".json"}) {
    fs::path candidate = dir / (std::string(arch) + std::string(extension));
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

std::unique_ptr<Table> table_from_bytes(std::string bytes, const std::string& origin) {
  const DetectedFile file = detect_file_kind(origin, bytes);
  if (file.kind == FileKind::table && file.encoding == FileEncoding::binary)
    return table_from_binary(std::move(bytes), origin);
  if (file.kind != FileKind::table && file.kind != FileKind::unknown) {
    throw Error(origin + ": a " + describe(file) +
                ", not a table; name a table file (.tlb, or JSON with \"arch\" and \"kernels\")");
  }
  // Unknown bytes are read as JSON: the reader names the problem and where.
  // read_file's spare capacity lets the fast reader parse in place.
  if (auto table = detail::fast_table_from_json(bytes, origin, bytes.capacity())) return table;
  return detail::full_table_from_json(bytes, origin);
}

std::unique_ptr<Table> load_table_file(const fs::path& path) {
  return table_from_bytes(read_file(path), path.string());
}

namespace {

// Names tunelock's own arch tags take: `host`, and `sm` then digits (and a
// letter suffix, as in sm90a). Other names (`table.json`) are not searched
// for as an arch, so any table may be written there.
bool names_an_arch(const std::string& stem) {
  if (stem == "host") return true;
  if (stem.size() < 3 || !stem.starts_with("sm") ||
      !std::isdigit(static_cast<unsigned char>(stem[2])))
    return false;
  return std::all_of(stem.begin() + 2, stem.end(),
                     [](unsigned char c) { return std::isdigit(c) || std::islower(c); });
}

}  // namespace

void write_table_file(const Table& table, const fs::path& path) {
  const std::string stem = path.stem().string();
  if (names_an_arch(stem) && stem != table.arch()) {
    throw Error(path.string() + ": the table is for " + std::string(table.arch()) +
                ", but the search reads a file of this name as " + stem + "'s table; name it " +
                std::string(table.arch()) + path.extension().string() + " (or give merge --arch " +
                stem + ")");
  }
  write_file_atomically(path,
                        path.extension() == ".tlb" ? table_to_binary(table) : table_to_json(table));
}

std::unique_ptr<Table> load_table_for_arch(std::string_view arch,
                                           std::span<const std::string> search_path,
                                           bool include_installed) {
  std::vector<fs::path> entries(search_path.begin(), search_path.end());
  if (include_installed && !installed_tables_dir().empty())
    entries.push_back(installed_tables_dir());
  for (const fs::path& entry : entries) {
    std::error_code ec;
    if (fs::is_directory(entry, ec)) {
      auto file = table_file_in(entry, arch);
      if (!file) continue;
      auto table = load_table_file(*file);
      // Found by its name: a table for another arch there is a mistake, never
      // a table to use for this one.
      if (table->arch() != arch) {
        throw Error(file->string() + ": found as the table for " + std::string(arch) +
                    ", but its arch field says " + std::string(table->arch()) +
                    "; rename the file or fix its arch");
      }
      return table;
    }
    if (!fs::exists(entry, ec)) {
      logger().debug("table path entry {} does not exist", entry.string());
      continue;
    }
    auto table = load_table_file(entry);
    if (table->arch() == arch) return table;
    logger().warn("{} holds a table for {}, not {}; not used", entry.string(), table->arch(), arch);
  }
  return nullptr;
}

namespace {

// Why no table can be read from `entry`, or nothing when one may be.
std::optional<std::string> unreadable(const fs::path& entry) {
  std::error_code ec;
  const fs::file_status status = fs::status(entry, ec);
  if (!fs::exists(status)) return entry.string() + " does not exist";
  if (fs::is_directory(status)) {
    fs::directory_iterator listing(entry, ec);
    if (ec) return entry.string() + " cannot be read (" + ec.message() + ")";
    return std::nullopt;
  }
  std::ifstream file(entry, std::ios::binary);
  if (!file) return entry.string() + " cannot be read (" + std::strerror(errno) + ")";
  return std::nullopt;
}

}  // namespace

std::vector<std::string> unreadable_table_path(std::span<const std::string> search_path) {
  std::vector<std::string> out;
  for (const std::string& entry : search_path)
    if (auto why = unreadable(entry)) out.push_back(*why);
  return out;
}

std::string table_search_text(std::span<const std::string> search_path, bool include_installed) {
  std::string out;
  auto add = [&out](const fs::path& entry) {
    std::error_code ec;
    out += (out.empty() ? "" : ", ") + entry.string() +
           (fs::exists(entry, ec) ? "" : " (does not exist)");
  };
  for (const std::string& entry : search_path) add(entry);
  if (include_installed && !installed_tables_dir().empty()) add(installed_tables_dir());
  return out;
}

}  // namespace tunelock
