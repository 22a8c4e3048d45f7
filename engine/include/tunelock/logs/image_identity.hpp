// The identity a launch log gives a loaded GPU image (a module), so that
// the same kernel compiled by two processes is named alike.
#pragma once

#include <cstddef>
#include <string>

namespace tunelock {

// The XXH3 (hex_digest) of an image's code: for a 64-bit ELF (a cubin),
// every section's name, type, flags and bytes, in order, except those that
// only describe the build: debug and line-info sections (".debug_*",
// ".nv_debug_*" and their relocations) and the toolkit note
// (".note.nv.tkinfo"). ptxas writes into them the path of the PTX file it
// compiled, which Triton and Inductor create under a fresh temporary name on
// every compile, so two processes compiling one kernel would otherwise load
// images that differ only there. Anything that is not a well-formed 64-bit
// ELF (a fatbin, PTX text, a truncated image) is hashed whole.
std::string image_identity(const void* image, std::size_t size);

}  // namespace tunelock
