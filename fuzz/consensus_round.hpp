// Consensus mode's timings round between two ranks, for the consensus fuzz
// target and its seeds. The round's payloads are JSON (consensus.cpp): the
// partial a child sends up (an array of batches, each a record and its
// timing sidecar as text) and the root's verdict (the new keys' winners,
// or the error every rank raises). The tree carries each inside the verify
// envelope (tree_collective.cpp), which the fuzz target puts around its
// input, so the fuzzer mutates the JSON and not the envelope.
//
// Input layout: one byte picks the side (even: rank 0, the root, receives
// rank 1's partial; odd: rank 1 receives the root's verdict), the rest is
// the payload.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <string>
#include <string_view>

#include "runtime/consensus.hpp"
#include "tunelock/fb/verify_tree_generated.h"
#include "tunelock/model/config.hpp"

namespace tunelock::fuzzing {

// The tree's envelope around one round's payload, as a peer sends it.
inline std::string envelope(std::string_view payload) {
  flatbuffers::FlatBufferBuilder b;
  const auto bytes =
      b.CreateVector(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size());
  fb::TreeMessageBuilder message(b);
  message.add_payload(bytes);
  fb::FinishTreeMessageBuffer(b, message.Finish());
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

// The payload of an envelope the engine sent (trusted: the seed writer's).
inline std::string payload_of(const std::string& message) {
  const fb::TreeMessage* opened = fb::GetTreeMessage(message.data());
  return opened->payload() ? std::string(reinterpret_cast<const char*>(opened->payload()->data()),
                                         opened->payload()->size())
                           : std::string();
}

// What rank `rank` of the round says of itself, with its kernel's code.
inline detail::ConsensusSender consensus_sender(int rank) {
  detail::ConsensusSender me;
  me.world_rank = rank;
  me.run = "run";
  me.origin = "run.rank" + std::to_string(rank) + ".json";
  me.device.device_name = "NVIDIA H200";
  me.device.sm_count = 132;
  me.identities["sm90"]["pkg.ops.mm"] = "triton:5f0e2a9c";
  return me;
}

// A first call's timings on `rank`: each rank finds another config fastest,
// and rank 1's bits audit flags one.
inline void add_first_call(detail::Consensus& consensus, int rank) {
  const Config small = make_config({{"BLOCK_M", 64}}, 4, 3);
  const Config large = make_config({{"BLOCK_M", 128}}, 8, 3);
  const bool first = rank == 0;
  consensus.add_timings({"sm90", "pkg.ops.mm", "M=1|f16"}, signature(small), first ? small : large,
                        {{signature(small), first ? 1.0 : 2.0, false, 0},
                         {signature(large), first ? 2.0 : 1.0, false, first ? 1 : 0},
                         {"BLOCK_M=256;warps=8;stages=4", std::nullopt, !first}});
}

}  // namespace tunelock::fuzzing
