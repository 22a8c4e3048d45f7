# Header-only stand-ins for the engine's dependencies under Emscripten.
# Never -I/usr/include (it would pull the host's libc headers over
# Emscripten's): only the needed header folders are linked into one
# include directory.
set(wasm_include ${CMAKE_BINARY_DIR}/wasm-include)
file(MAKE_DIRECTORY ${wasm_include})
foreach(entry nlohmann spdlog fmt flatbuffers xxhash.h xxh3.h)
  if(NOT EXISTS /usr/include/${entry})
    message(FATAL_ERROR "wasm build: /usr/include/${entry} is missing (install the -dev package)")
  endif()
  file(CREATE_LINK /usr/include/${entry} ${wasm_include}/${entry} SYMBOLIC)
endforeach()

add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${wasm_include})

# Debian's spdlog forces an external fmt library; in wasm both are header-only.
add_library(spdlog::spdlog INTERFACE IMPORTED)
target_include_directories(spdlog::spdlog SYSTEM INTERFACE ${wasm_include})
target_compile_definitions(spdlog::spdlog INTERFACE SPDLOG_HEADER_ONLY FMT_HEADER_ONLY SPDLOG_NO_THREAD_ID)

# xxHash inlined into each user: no library to build for wasm.
add_library(PkgConfig::XXHASH INTERFACE IMPORTED)
target_include_directories(PkgConfig::XXHASH SYSTEM INTERFACE ${wasm_include})
target_compile_definitions(PkgConfig::XXHASH INTERFACE XXH_INLINE_ALL)

# C++ exceptions carry the engine's errors: Emscripten 3.1.6 needs wasm EH.
add_compile_options(-fwasm-exceptions)
add_link_options(-fwasm-exceptions)
