#include "tunelock/logs/image_identity.hpp"

#include <elf.h>
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "tunelock/logs/launch_log.hpp"

namespace tunelock {
namespace {

// Sections that say how the image was built, not what it runs.
bool describes_the_build(std::string_view name) {
  return name.find("debug") != std::string_view::npos || name == ".note.nv.tkinfo";
}

struct Section {
  std::string_view name;
  Elf64_Shdr header;
};

// The image's sections, or nothing when any header or name lies outside it.
std::optional<std::vector<Section>> elf_sections(const unsigned char* bytes, std::size_t size) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(bytes, ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64 || bytes[EI_DATA] != ELFDATA2LSB)
    return std::nullopt;
  Elf64_Ehdr elf;
  std::memcpy(&elf, bytes, sizeof elf);
  if (elf.e_shentsize != sizeof(Elf64_Shdr) || elf.e_shnum == 0 || elf.e_shstrndx >= elf.e_shnum ||
      elf.e_shoff > size || (size - elf.e_shoff) / sizeof(Elf64_Shdr) < elf.e_shnum)
    return std::nullopt;
  // Copied out: an image handed over by the driver need not be aligned.
  std::vector<Elf64_Shdr> headers(elf.e_shnum);
  std::memcpy(headers.data(), bytes + elf.e_shoff, elf.e_shnum * sizeof(Elf64_Shdr));
  auto inside = [&](const Elf64_Shdr& h) {
    return h.sh_type == SHT_NOBITS || (h.sh_offset <= size && h.sh_size <= size - h.sh_offset);
  };
  const Elf64_Shdr& names = headers[elf.e_shstrndx];
  if (names.sh_type == SHT_NOBITS || !inside(names)) return std::nullopt;
  const std::string_view table(reinterpret_cast<const char*>(bytes + names.sh_offset),
                               names.sh_size);
  std::vector<Section> sections;
  for (std::uint16_t i = 0; i < elf.e_shnum; ++i) {
    const Elf64_Shdr& h = headers[i];
    if (!inside(h) || (h.sh_name >= table.size() && h.sh_type != SHT_NULL)) return std::nullopt;
    const std::string_view rest =
        h.sh_name < table.size() ? table.substr(h.sh_name) : std::string_view();
    sections.push_back({rest.substr(0, rest.find('\0')), h});
  }
  return sections;
}

}  // namespace

std::string image_identity(const void* image, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  const auto sections = elf_sections(bytes, size);
  if (!sections) return hex_digest(XXH3_64bits(image, size));
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  Elf64_Ehdr elf;
  std::memcpy(&elf, bytes, sizeof elf);
  // The target (machine, sm flags), not the offsets a debug section shifts.
  XXH3_64bits_update(state, &elf.e_machine, sizeof elf.e_machine);
  XXH3_64bits_update(state, &elf.e_flags, sizeof elf.e_flags);
  for (const Section& s : *sections) {
    if (describes_the_build(s.name)) continue;
    XXH3_64bits_update(state, s.name.data(), s.name.size());
    XXH3_64bits_update(state, "\0", 1);
    XXH3_64bits_update(state, &s.header.sh_type, sizeof s.header.sh_type);
    XXH3_64bits_update(state, &s.header.sh_flags, sizeof s.header.sh_flags);
    XXH3_64bits_update(state, &s.header.sh_size, sizeof s.header.sh_size);
    if (s.header.sh_type != SHT_NOBITS)
      XXH3_64bits_update(state, bytes + s.header.sh_offset, s.header.sh_size);
  }
  const std::uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hex_digest(digest);
}

}  // namespace tunelock
