// Entries that contradict their own table: the config an entry pins, or
// one it lists as equivalent or tied, is also in the table's nondeterministic
// list for that kernel. Merge never writes such a file; a hand-edited,
// foreign or older one can. Selection skips such an entry as it skips a
// stale one, and never times such an equivalent; `tunelock table validate`
// and the page name each one.
#pragma once

#include <string>
#include <vector>

#include "tunelock/tables/table.hpp"

namespace tunelock {

struct Contradiction {
  std::string kernel;  // as filed
  std::string key;
  std::string config;  // the flagged config's signature
  std::string role;    // "pinned", "equivalent" or "tied"

  // "kernel demo.ops.matmul [M=1]: pinned config C is also listed as nondeterministic"
  std::string text() const;
};

// Every contradiction, by kernel and key as the table lists them.
std::vector<Contradiction> table_contradictions(const Table& table);

}  // namespace tunelock
