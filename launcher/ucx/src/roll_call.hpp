// Rank 0's side of the rendezvous: a roll call of the other ranks, each
// saying hello, answered with the roster once every rank is in, or with
// why not (a rank never came, or came and went, or was refused).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tunelock/launcher/rendezvous.hpp"

namespace tunelock::launcher::bootstrap {

// Rank 0: listen, collect one valid hello per other rank, answer with the
// roster. Anything else that connects is dropped. Every rank's worker
// address, by rank.
std::vector<std::string> serve(const Rendezvous& r, std::string_view my_address);

}  // namespace tunelock::launcher::bootstrap
