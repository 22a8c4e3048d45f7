// A table's batch invariance, checked and judged. The check refuses data
// that contradicts itself or the entries (a reader runs it on every table
// it loads, merge on every table it writes); the report is the gate
// `tunelock table invariance` prints: per kernel, proven over which sizes,
// extrapolated, or unproven, with its batch-variant configs named.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/tables/table.hpp"

namespace tunelock {

// Throws Error naming `origin`, the kernel and the group for invariance
// data that cannot be true: a bad dim, a class that is empty, unsorted or
// not signatures, sizes that are not sorted positive integers, a recorded
// size never proven that still claims the class, a config both in a class
// and batch-variant, or an entry of the group that pins a config outside
// its class or at a size the group does not list as recorded.
void check_invariance(const Table& table, const std::string& origin);

// The table's "invariance" member: {kernel: {"dim": "M", "groups": {group
// key: {"class": [signature, ...], "proven": [size, ...], "recorded":
// [size, ...]}}, "variant": [signature, ...]}}; a kernel that declares no
// batch dim is {"dim": null}. Errors name `where` and the member.
nlohmann::json batch_invariance_to_json(const BatchInvariance& invariance);
BatchInvariance batch_invariance_from_json(const nlohmann::json& value, const std::string& where);

enum class InvarianceVerdict {
  proven,        // every entry's size proven: rows compared at every size listed
  no_batch_dim,  // recorded under batch invariance; the kernel declares no batch dim
  extrapolated,  // some entry's rows were never compared at its size
  unproven,      // no invariance audit: recorded without TUNELOCK_BATCH_INVARIANT
};

// "proven", "no batch dim", "extrapolated", "unproven".
std::string_view to_string(InvarianceVerdict verdict);

struct KernelInvarianceReport {
  std::string kernel;
  InvarianceVerdict verdict = InvarianceVerdict::unproven;
  std::string dim = {};
  std::vector<std::int64_t> proven = {};   // every group's proven sizes, sorted, unique
  std::vector<std::string> variant = {};   // batch-variant configs, never pinned
  std::vector<std::string> unproven = {};  // keys whose entries were not proven at their size
  std::size_t groups = 0;
};

// One report per kernel of the table, sorted by kernel.
std::vector<KernelInvarianceReport> invariance_report(const Table& table);

// The gate passes when no kernel is extrapolated or unproven and at least
// one kernel is proven: a table where nothing was compared proves nothing.
bool invariance_passes(const std::vector<KernelInvarianceReport>& reports);

// One line per kernel, for people: "demo.ops.matmul_splitk: proven over M in
// {1, 2, 4, ..., 64} (1 group); batch-variant, never pinned: SPLIT_K=0 ...".
std::string invariance_report_text(const std::vector<KernelInvarianceReport>& reports);
nlohmann::json invariance_report_to_json(const std::vector<KernelInvarianceReport>& reports);

// What a table holds about batch invariance, one line per group and per
// batch-variant config, as `tunelock table show` and the page list them:
// "demo.ops.mm [N=64|f32] over M: class <sig> <sig>; proven at 6 size(s),
// up to 32", "demo.ops.mm <sig> is batch-variant, never pinned",
// "demo.ops.sum declares no batch dim".
std::vector<std::string> invariance_lines(const Table& table);

}  // namespace tunelock
