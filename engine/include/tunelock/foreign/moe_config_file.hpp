// Fused-MoE config files, as vLLM and SGLang ship and read them: one file
// per expert shape and device, named
//   E=<experts>,N=<n>,device_name=<device>[,dtype=<dtype>][,block_shape=[<n>,<k>]].json
// holding a JSON object from the batch size M ("1", "2", ... "4096") to the
// Triton config launched at that size ({"BLOCK_SIZE_M", "BLOCK_SIZE_N",
// "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages", ...}), with an
// optional "triton_version". The tools keep reading their own files; these
// readers and writers put the same entries into a tunelock table (kernel
// `fused_moe.fused_moe_kernel`, key E|N|device|dtype|block_shape|M), where
// merge votes on them and verify and coverage see them, and write the files
// back, byte for byte as the tools write them (json.dump, indent 4, then a
// newline).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunelock/model/config.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

// The kernel a fused-MoE table entry belongs to.
inline constexpr std::string_view kFusedMoeKernel = "fused_moe.fused_moe_kernel";

// What a file's name says: the expert shape, the device and the data type.
struct MoeShape {
  std::int64_t experts = 0;
  std::int64_t n = 0;
  std::string device;       // as the tools spell it: spaces replaced by '_'
  std::string dtype;        // empty: the file name has none (the model's own dtype)
  std::string block_shape;  // "128,128", empty when the file name has none

  friend bool operator==(const MoeShape&, const MoeShape&) = default;
};

struct MoeConfigFile {
  MoeShape shape;
  std::optional<std::string> triton_version;
  std::vector<std::pair<std::int64_t, Config>> by_batch;  // ascending batch size M
};

// Throws Error naming the file and the part that is wrong.
MoeShape moe_shape_from_file_name(std::string_view file_name);
std::string moe_file_name(const MoeShape& shape);

// `file_name` is the file's name (its shape) and, with the path, its origin
// in messages. Throws Error naming the file and the member that is wrong.
MoeConfigFile moe_config_file_from_json(std::string_view text, const std::string& file_name);
std::string moe_config_file_to_json(const MoeConfigFile& file);

// The table key of one batch size of a shape, and back (Error naming the key).
std::string moe_key(const MoeShape& shape, std::int64_t batch);
std::pair<MoeShape, std::int64_t> moe_key_parts(std::string_view key);

// Config files (or folders of them; other files in a folder are left) into
// one table for `arch`. Every file's triton_version must agree, and goes
// into the table's provenance. Throws Error naming the file.
InMemoryTable moe_table_from_files(std::span<const std::filesystem::path> paths,
                                   const std::string& arch);

// The table's fused-MoE entries as files, one per shape: (file name, text).
// Throws Error when the table has none.
std::vector<std::pair<std::string, std::string>> moe_files_from_table(const Table& table);

}  // namespace tunelock
