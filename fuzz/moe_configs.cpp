// A fused-MoE config file's body under a fixed name, then its writer: what
// is read is written back and read again to the same configs.
#include "fuzz_target.hpp"
#include "tunelock/foreign/moe_config_file.hpp"

void read_input(std::string_view bytes, const std::string&) {
  const std::string name = "E=8,N=64,device_name=fuzz,dtype=fp8_w8a8,block_shape=[128,128].json";
  const tunelock::MoeConfigFile file = tunelock::moe_config_file_from_json(bytes, name);
  const tunelock::MoeConfigFile again =
      tunelock::moe_config_file_from_json(tunelock::moe_config_file_to_json(file), name);
  if (again.by_batch != file.by_batch || again.triton_version != file.triton_version)
    __builtin_trap();  // the writer lost or changed what the reader took
}
