// What a stranger can send rank 0's rendezvous socket: bytes cut into
// frames, each hello verified and read as judge_hello reads it; and what
// rank 0 can send back (a roster).
#include "bootstrap_frames.hpp"
#include "fuzz_target.hpp"

void read_input(std::string_view bytes, const std::string&) {
  using namespace tunelock::launcher::bootstrap;
  std::string buffer(bytes);
  while (auto f = take_frame(buffer)) {
    if (f->first == kHelloFrame) {
      const tunelock::fb::Hello& hello = open_hello(f->second);
      (void)hello.token()->str();
      (void)hello.worker_address()->size();
    } else if (f->first == kRosterFrame) {
      for (const auto* entry : *open_roster(f->second).entries())
        (void)entry->worker_address()->size();
    }
  }
}
