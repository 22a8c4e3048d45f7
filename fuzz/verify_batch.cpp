// A verify batch as a rank receives it from a peer.
#include "fuzz_target.hpp"
#include "tunelock/verify/verify.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  (void)tunelock::decode_batch(bytes, origin);
}
