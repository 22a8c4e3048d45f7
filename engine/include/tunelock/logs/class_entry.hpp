// Ranks or runs at different batch sizes log different keys (M=8, M=16),
// so key by key they never meet. A pinned choice of a batch-invariant
// kernel therefore also logs the invariance class it launched from, under
// the key that stands for every size of its group:
//   class|<kernel>|<arch>|M=*|N=64|... -> class{<sig> | <sig>};pinned
// Verification compares those entries as any other, so two ranks at
// M = 8 and M = 16 agree when they launched from the same class, and a
// rank pinned on a table with another class is named.
#pragma once

#include <optional>
#include <string_view>

#include "tunelock/logs/choice_log.hpp"
#include "tunelock/model/kernel_id.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

// The arch part of a class entry's key: entries filed under it are not a
// kernel's choice at one key (coverage and previews pass them over).
inline constexpr std::string_view kClassEntryArch = "class";

// The class entry for `launched` (a signature) at `key` on `arch`, when
// `table` holds `kernel` (qualified, else its name) batch-invariant with a
// group for the key and `launched` is in that group's class; else nullopt.
std::optional<ChoiceEntry> class_choice_entry(const Table& table, std::string_view arch,
                                              const KernelId& kernel, std::string_view key,
                                              std::string_view launched);

}  // namespace tunelock
