#include "tunelock/verify/tree_collective.hpp"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>

#include "tunelock/base/error.hpp"
#include "tunelock/fb/verify_tree_generated.h"
#include "tunelock/io/bounded_verifier.hpp"
#include "verify/binomial_tree.hpp"

namespace tunelock {
namespace {

// The envelope of a round's message, in a builder kept per thread: a fresh
// buffer at each check would land on untouched pages (see TreeScratch).
// The view is valid until the thread's next envelope.
std::string_view envelope(std::string_view failure, std::string_view payload) {
  thread_local flatbuffers::FlatBufferBuilder b;
  b.Clear();
  // The payload is a flatbuffer with 8-byte fields: aligned for its reader.
  b.ForceVectorAlignment(payload.size(), 1, 8);
  const auto bytes =
      b.CreateVector(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size());
  const auto why = failure.empty() ? 0 : b.CreateString(failure.data(), failure.size());
  fb::TreeMessageBuilder message(b);
  message.add_payload(bytes);
  if (!failure.empty()) message.add_failure(why);
  fb::FinishTreeMessageBuffer(b, message.Finish());
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

struct Opened {
  std::string failure;
  std::string_view payload;
};

Opened open(std::string_view bytes, const std::string& origin) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier = detail::bounded_verifier(data, bytes.size());
  // The verifier checks the identifier too, within the buffer's bounds; a
  // bare identifier check first would read past a buffer shorter than 8.
  if (!fb::VerifyTreeMessageBuffer(verifier))
    throw Error(origin + ": not a valid tree message (" + std::to_string(bytes.size()) + " bytes)");
  const fb::TreeMessage* message = fb::GetTreeMessage(data);
  if (message->format_version() != 1) {
    throw Error(origin + ": tree message format " + std::to_string(message->format_version()) +
                " is not supported (this tunelock speaks 1)");
  }
  Opened out;
  if (message->failure()) out.failure = message->failure()->str();
  if (message->payload())
    out.payload = {reinterpret_cast<const char*>(message->payload()->data()),
                   message->payload()->size()};
  return out;
}

}  // namespace

std::chrono::milliseconds tree_wait(std::chrono::milliseconds timeout, int slack_rounds) {
  const std::chrono::milliseconds per_round =
      std::min<std::chrono::milliseconds>(std::chrono::seconds(1), timeout / 10);
  return timeout + per_round * slack_rounds;
}

// Up: the children's partials folded into this rank's, or the first failure
// below. Returns the failure text, empty when the subtree is whole.
std::string TreeCollective::gather_up(TreeReduction& reduction, std::uint64_t tag) {
  const std::vector<int> children = tree_children(rank(), size());
  if (children.empty()) return {};
  try {
    const std::vector<std::string> got = receive(children, tag, tree_height(rank(), size()));
    for (std::size_t i = 0; i < children.size(); ++i) {
      const std::string origin = "verify: rank " + std::to_string(world_rank(children[i])) +
                                 " of group '" + group_id() + "'";
      const Opened child = open(got[i], origin);
      if (!child.failure.empty()) return child.failure;
      reduction.absorb(children[i], child.payload);
    }
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

std::string TreeCollective::tree_round(TreeReduction& reduction) {
  const std::uint64_t up = 2 * ++rounds_;
  const std::uint64_t down = up + 1;
  std::string failure = gather_up(reduction, up);

  std::string verdict;  // the envelope every rank passes down unchanged
  if (rank() == 0) {
    try {
      if (failure.empty()) verdict = envelope({}, reduction.verdict());
    } catch (const Error& e) {
      failure = e.what();
    }
    if (!failure.empty()) verdict = envelope(failure, {});
  } else {
    const int parent = tree_parent(rank());
    try {
      send(std::span(&parent, 1), up,
           envelope(failure, failure.empty() ? reduction.partial() : ""));
    } catch (const Error&) {
      // The parent is gone: receiving its verdict below says so.
    }
    try {
      verdict = receive(std::span(&parent, 1), down, tree_depth(size()) + 1).at(0);
      open(verdict,
           "verify: rank " + std::to_string(world_rank(parent)) + " of group '" + group_id() + "'");
    } catch (const Error& e) {
      verdict = envelope(e.what(), {});  // what this rank's subtree hears instead
    }
  }
  const std::vector<int> children = tree_children(rank(), size());
  if (!children.empty()) {
    try {
      send(children, down, verdict);
    } catch (const Error&) {
      // A lost child already failed the round in gather_up.
    }
  }
  const Opened mine = open(verdict, "verify: group '" + group_id() + "'");
  if (!mine.failure.empty()) throw Error(mine.failure);
  return std::string(mine.payload);
}

}  // namespace tunelock
