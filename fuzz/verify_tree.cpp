// The tree round's messages as a rank receives them: the envelope, a
// child's partial (rank 0), the verdict (rank 1), and the conflict round's
// texts, through Runtime::verify against a scripted peer.
#include "fuzz_target.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/base/notices.hpp"
#include "tunelock/runtime/runtime.hpp"
#include "two_rank_tree.hpp"

void read_input(std::string_view bytes, const std::string&) {
  using namespace tunelock;
  static const bool quiet = [] {
    logger().set_level(spdlog::level::off);  // conflict reports are expected output
    return true;
  }();
  (void)quiet;
  fuzzing::TreeInput input = fuzzing::decode_tree_input(bytes);
  if (input.messages.empty()) return;
  Notices notices;
  Runtime runtime(input.rank, notices);
  const Config config = make_config({{"BLOCK_M", 64}}, 4, 3);
  runtime.log_choice("sm90", KernelId{"fuzz.ops", "mm"}, "M=1", config, ChoiceOrigin::pinned);
  runtime.log_choice("sm90", KernelId{"fuzz.ops", "mm"}, "M=2", config, ChoiceOrigin::pinned);
  fuzzing::ScriptedPeer peer(input.rank, std::move(input.messages));
  (void)runtime.verify(peer);
}
