// Binary tables no tunelock writes, sealed with a correct checksum: inputs
// for the tests and fuzz seeds of the reader's defences.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <string>
#include <vector>

#include "io/checksum_trailer.hpp"
#include "tunelock/fb/table_generated.h"
#include "tunelock/tables/table_binary.hpp"

namespace tunelock::testing {

// A well-sealed .tlb whose root lists `kernels` offsets all pointing at one
// kernel of `keys` keys, all pointing at one string: K x M verifier work in
// a file of K + M words.
inline std::string aliased_table(int kernels, int keys, bool share_kernel) {
  flatbuffers::FlatBufferBuilder builder;
  const auto key = builder.CreateString("M=1");
  std::vector<flatbuffers::Offset<flatbuffers::String>> key_list(static_cast<std::size_t>(keys),
                                                                 key);
  const auto key_vector = builder.CreateVector(key_list);
  const auto config_vector =
      builder.CreateVector(std::vector<std::uint32_t>(static_cast<std::size_t>(keys), 0));
  std::vector<flatbuffers::Offset<fb::Kernel>> kernel_list;
  for (int k = 0; k < (share_kernel ? 1 : kernels); ++k)
    kernel_list.push_back(fb::CreateKernel(builder, builder.CreateString("k" + std::to_string(k)),
                                           key_vector, config_vector));
  while (static_cast<int>(kernel_list.size()) < kernels) kernel_list.push_back(kernel_list[0]);
  const auto configs = builder.CreateVector(
      std::vector<flatbuffers::Offset<fb::TableConfig>>{fb::CreateTableConfig(builder, 0, 4, 3)});
  // The format_version of what this tunelock writes.
  const std::string current = table_to_binary(InMemoryTable("sm90"));
  const auto version = flatbuffers::GetRoot<fb::TunedTable>(current.data())->format_version();
  const auto root = fb::CreateTunedTable(builder, version, builder.CreateString("sm90"), 0, configs,
                                         builder.CreateVector(kernel_list));
  builder.Finish(root, fb::TunedTableIdentifier());
  return checksum_trailer::seal(
      {reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize()});
}

}  // namespace tunelock::testing
