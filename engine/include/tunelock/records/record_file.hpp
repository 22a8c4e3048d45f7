// The record file format, read: what a `record` run left on disk for one
// rank, `<prefix>.rank<N>.json` ({arch: {qualified: {key: config}}}, exactly
// Megatron's record layout), with its timing sidecar beside it when there is
// one (timings_sidecar.hpp). The reader and the discovery of sidecars live
// here; merging what was read is merge.hpp's business, keeping and writing
// a run's records record_store.hpp's.
#pragma once

#include <compare>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/io/rank_files.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

// What a record is kept under: one tuned key of one kernel on one arch.
struct RecordKey {
  std::string arch;
  std::string kernel;  // qualified
  std::string key;     // the tuning key's text

  // Ordered arch, then kernel, then key. The return type is spelled out so
  // the comparison is built from std::string's < and == where a standard
  // library (the wasm build's libc++) has no <=> for strings.
  std::strong_ordering operator<=>(const RecordKey&) const = default;
  bool operator==(const RecordKey&) const = default;
};

// "arch|kernel|key", as reports print a record key.
std::string to_string(const RecordKey& key);

// The batch-invariance audit of one candidate on one key (record mode under
// TUNELOCK_BATCH_INVARIANT, for a kernel that declares a batch dim): run on
// the first rows of the call's inputs at each of `sizes`, those rows were
// compared with the same rows of the full call. Exactly one of `row_class`
// (its rows held at every size; candidates with one number gave the same
// rows at every size) and `variant_at` (the first size whose rows differed:
// the candidate is batch-variant) is set.
struct RowAudit {
  std::string dim;                  // the key argument that counts rows ("M")
  std::vector<std::int64_t> sizes;  // sorted, unique, positive; the last is the call's own
  std::optional<int> row_class = std::nullopt;
  std::optional<std::int64_t> variant_at = std::nullopt;

  friend bool operator==(const RowAudit&, const RowAudit&) = default;
};

// One candidate's timing on one rank, as a record run captured it.
struct CandidateTiming {
  std::string signature;            // the candidate's config, signature(config)
  std::optional<double> median_ms;  // empty when the candidate failed to run
  bool nondeterministic = false;    // gave different bits in two runs of itself
  // The audit's bit class on this rank: candidates with one number gave
  // bit-identical outputs (on the call's inputs and a second input); empty
  // when not compared (failed, flagged, or recorded without the audit).
  std::optional<int> bit_class = std::nullopt;
  // The invariance audit, when it ran for this key; empty otherwise (and
  // for a candidate that failed to run).
  std::optional<RowAudit> rows = std::nullopt;
};

// One rank's record file, with its timing sidecar when there is one.
struct RecordFile {
  std::string origin;  // for messages
  std::map<RecordKey, Config> winners;
  bool has_timings = false;
  int rank = -1;      // from the sidecar, else the `.rank<N>.json` name; -1 unknown
  std::string run;    // `<run>` of the file name `<run>.rank<N>.json` (else its stem)
  Provenance device;  // from the sidecar
  std::map<RecordKey, std::vector<CandidateTiming>> timings;
  // arch -> kernel (qualified) -> the identity of the code it was timed on,
  // from the sidecar; kernels that declare none are absent.
  std::map<std::string, KernelIdentities> identities;
  std::string sidecar;  // the timing sidecar read beside it, when there was one
  // Recorded under TUNELOCK_BATCH_INVARIANT (the sidecar says so): a kernel
  // without invariance audits then declared no batch dim.
  bool batch_invariant = false;
};

// Throws Error when `output` is one of the records' files or their timing
// sidecars (by any spelling, links included): a merge writing there would
// replace a rank's vote with the table, and exit 0.
void refuse_output_among_inputs(const std::filesystem::path& output,
                                const std::vector<RecordFile>& records);

// The record files a command line names: each argument a file, a directory
// (every `<run>.rank<N>.json` record in it, sidecars left out) or
// `@LISTFILE` (one path per line; blank lines skipped), so a merge of
// 100,000 ranks never meets the shell's argument limit. Sorted within a
// directory; otherwise in the order given. Throws Error naming a missing
// list file or a directory without records.
std::vector<std::filesystem::path> expand_record_arguments(const std::vector<std::string>& args);

// `{arch: {qualified: {key: config}}}`. Throws Error naming origin and path.
RecordFile record_from_json(std::string_view text, const std::string& origin);

// Reads `<prefix>.rankN.json` and, when present beside it, its sidecar
// `<prefix>.rankN.timings.json` (or the binary `.timings.tlrt`).
RecordFile load_record_file(const std::filesystem::path& path);

// Loads each file; the same file named twice (by any spelling) is an Error.
std::vector<RecordFile> load_record_files(const std::vector<std::filesystem::path>& paths);

}  // namespace tunelock
