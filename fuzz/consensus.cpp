// Consensus mode's timings round as a rank receives it (consensus_round.hpp
// has the layout): the root reads a child's batches with the record and
// sidecar readers and tallies them with its own, then writes the tables
// merge would; rank 1 reads the root's verdict. Through
// Consensus::exchange against a scripted peer.
#include "consensus_round.hpp"
#include "fuzz_target.hpp"
#include "tunelock/tables/table_json.hpp"
#include "two_rank_tree.hpp"

void read_input(std::string_view bytes, const std::string&) {
  using namespace tunelock;
  if (bytes.empty()) return;
  const int rank = static_cast<unsigned char>(bytes[0]) % 2;
  detail::Consensus consensus;
  fuzzing::add_first_call(consensus, rank);
  fuzzing::ScriptedPeer peer(rank, {fuzzing::envelope(bytes.substr(1))});
  (void)consensus.exchange(peer, fuzzing::consensus_sender(rank), 1);
  for (const auto& table : consensus.tables()) (void)table_to_json(*table);
}
