// Merge under batch invariance: for kernels whose records carry invariance
// audits (RowAudit), the table pins, per group key (the tuning key less its
// batch dim), one invariance class at every recorded size. Chosen by the
// ranks' timings over the recorded sizes, then the class's fastest config
// per size: the speed of a tuned table, and rows whose bits hold at every
// batch size. A pure function of the records, as merge is.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tunelock/records/record_file.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

// Rewrites `table`'s entries of every kernel of `arch` audited for batch
// invariance and sets the table's invariance: the class, the sizes proven
// and recorded per group, the batch-variant configs. Kernels of records
// made under TUNELOCK_BATCH_INVARIANT without audits are filed as declaring
// no batch dim. `flagged`: per kernel, the configs some audit saw change
// their own bits (never in a class). Two configs are one class only when
// every audit that classed either classed both together: one audit that
// saw their rows apart keeps them apart (the same bits at a few rows may be
// chance). Throws Error naming the kernel and the record for two batch dims
// for one kernel, a key without its batch dim, or no class timed at every
// recorded size of a group.
void apply_batch_invariance(const std::vector<RecordFile>& records, const std::string& arch,
                            const std::map<std::string, std::set<std::string>>& flagged,
                            InMemoryTable& table);

}  // namespace tunelock
