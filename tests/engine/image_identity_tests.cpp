// The identity a launch log gives a loaded image: the same code compiled
// twice, whose line info names two temporary PTX files, is named alike;
// other code is named apart; anything not a well-formed ELF is hashed
// whole, without reading outside it.
#include <elf.h>
#include <xxhash.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tunelock/logs/image_identity.hpp"
#include "tunelock/logs/launch_log.hpp"

using namespace tunelock;

namespace {

// A minimal 64-bit ELF as ptxas lays out a cubin: the sections' bytes, then
// the section headers (index 0 null, the last one the name table).
std::string elf(const std::vector<std::pair<std::string, std::string>>& sections,
                std::uint32_t flags = 0x5a0590) {
  std::string names(1, '\0'), body;
  std::vector<Elf64_Shdr> headers(1);  // the null section
  for (const auto& [name, bytes] : sections) {
    Elf64_Shdr h{};
    h.sh_name = static_cast<Elf64_Word>(names.size());
    h.sh_type = name.rfind(".note", 0) == 0 ? SHT_NOTE : SHT_PROGBITS;
    h.sh_flags = name.rfind(".text", 0) == 0 ? SHF_ALLOC | SHF_EXECINSTR : 0;
    h.sh_offset = sizeof(Elf64_Ehdr) + body.size();
    h.sh_size = bytes.size();
    names += name + '\0';
    body += bytes;
    headers.push_back(h);
  }
  Elf64_Shdr table{};
  table.sh_name = static_cast<Elf64_Word>(names.size());
  names += std::string(".shstrtab") + '\0';
  table.sh_type = SHT_STRTAB;
  table.sh_offset = sizeof(Elf64_Ehdr) + body.size();
  table.sh_size = names.size();
  body += names;
  headers.push_back(table);
  Elf64_Ehdr e{};
  std::memcpy(e.e_ident, ELFMAG, SELFMAG);
  e.e_ident[EI_CLASS] = ELFCLASS64;
  e.e_ident[EI_DATA] = ELFDATA2LSB;
  e.e_machine = EM_CUDA;
  e.e_flags = flags;
  e.e_shoff = sizeof(Elf64_Ehdr) + body.size();
  e.e_shentsize = sizeof(Elf64_Shdr);
  e.e_shnum = static_cast<Elf64_Half>(headers.size());
  e.e_shstrndx = static_cast<Elf64_Half>(headers.size() - 1);
  std::string image(reinterpret_cast<const char*>(&e), sizeof e);
  image += body;
  image.append(reinterpret_cast<const char*>(headers.data()), headers.size() * sizeof(Elf64_Shdr));
  return image;
}

std::string cubin(const std::string& code, const std::string& ptx_file) {
  return elf({{".note.nv.tkinfo", "ptxas -lineinfo " + ptx_file},
              {".text.triton_poi_fused_add_0", code},
              {".nv.constant0.triton_poi_fused_add_0", std::string(16, '\1')},
              {".debug_line", "/cache/ab/cab.py\0" + ptx_file},
              {".nv_debug_line_sass", ptx_file + ":12"},
              {".rel.debug_line", std::string(8, '\2')}});
}

std::string identity(const std::string& image) {
  return image_identity(image.data(), image.size());
}
std::string whole(const std::string& image) {
  return hex_digest(XXH3_64bits(image.data(), image.size()));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(image_identities)

BOOST_AUTO_TEST_CASE(one_kernel_compiled_from_two_temporary_ptx_files_is_named_alike) {
  const std::string first = cubin("SASS-add", "/tmp/tmpa81k2x.ptx");
  const std::string second = cubin("SASS-add", "/tmp/tmpq0-long-name.ptx");
  BOOST_REQUIRE(first != second);
  BOOST_CHECK_NE(whole(first), whole(second));  // what a hash of the bytes said
  BOOST_CHECK_EQUAL(identity(first), identity(second));
}

BOOST_AUTO_TEST_CASE(other_code_other_constants_or_another_target_are_named_apart) {
  const std::string add = identity(cubin("SASS-add", "/tmp/a.ptx"));
  BOOST_CHECK_NE(add, identity(cubin("SASS-mul", "/tmp/a.ptx")));
  BOOST_CHECK_NE(add,
                 identity(elf({{".text.triton_poi_fused_add_0", "SASS-add"},
                               {".nv.constant0.triton_poi_fused_add_0", std::string(16, '\3')}})));
  BOOST_CHECK_NE(identity(elf({{".text.k", "SASS"}}, 0x5a0590)),
                 identity(elf({{".text.k", "SASS"}}, 0x640064)));
  // The name of a section is part of what it is.
  BOOST_CHECK_NE(identity(elf({{".text.k", "SASS"}})), identity(elf({{".text.j", "SASS"}})));
}

BOOST_AUTO_TEST_CASE(an_image_that_is_not_a_well_formed_elf_is_hashed_whole) {
  const std::string ptx = ".version 8.7\n.target sm_90a\n.entry k() { ret; }\n";
  BOOST_CHECK_EQUAL(identity(ptx), whole(ptx));
  const std::string good = cubin("SASS-add", "/tmp/a.ptx");
  // Cut anywhere: the headers or a section now lie outside the image.
  for (std::size_t size :
       {std::size_t{0}, std::size_t{4}, sizeof(Elf64_Ehdr), good.size() / 2, good.size() - 1}) {
    const std::string cut = good.substr(0, size);
    BOOST_CHECK_EQUAL(identity(cut), whole(cut));
  }
  // A section header pointing past the end, or a name past the name table.
  std::string bad_offset = good;
  Elf64_Ehdr e;
  std::memcpy(&e, bad_offset.data(), sizeof e);
  Elf64_Shdr h;
  const std::size_t second = e.e_shoff + sizeof(Elf64_Shdr) * 2;
  std::memcpy(&h, bad_offset.data() + second, sizeof h);
  h.sh_offset = bad_offset.size() - 2;
  std::memcpy(bad_offset.data() + second, &h, sizeof h);
  BOOST_CHECK_EQUAL(identity(bad_offset), whole(bad_offset));
  std::string bad_name = good;
  h.sh_offset = sizeof(Elf64_Ehdr);
  h.sh_name = 1u << 30;
  std::memcpy(bad_name.data() + second, &h, sizeof h);
  BOOST_CHECK_EQUAL(identity(bad_name), whole(bad_name));
  // Unaligned, as a driver may hand it over: the same identity.
  std::string shifted = " " + good;
  BOOST_CHECK_EQUAL(image_identity(shifted.data() + 1, good.size()), identity(good));
}

BOOST_AUTO_TEST_SUITE_END()
