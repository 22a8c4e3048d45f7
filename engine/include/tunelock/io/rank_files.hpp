// Per-rank file names, made and read in one place: every file a rank
// writes is `<prefix>.rank<N><ending>` — its record, the record's timing
// sidecar, its choice log, its audit, its launch log — and the tools that read a run's files
// back (merge, the page, verify) take the run and the rank from the name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tunelock {

namespace rank_file_endings {
inline constexpr std::string_view kRecord = ".json";           // Megatron's record layout
inline constexpr std::string_view kTimings = ".timings.json";  // a record's sidecar
inline constexpr std::string_view kBinaryTimings = ".timings.tlrt";
inline constexpr std::string_view kChoiceLog = ".json";
inline constexpr std::string_view kBinaryChoiceLog = ".tlcl";
inline constexpr std::string_view kAudit = ".audit.json";
inline constexpr std::string_view kLaunches = ".launches.json";  // a watched run's launch log
inline constexpr std::string_view kBinaryLaunches = ".launches.tlln";
// A record's sidecar endings, in the order the sidecar is looked for.
inline constexpr std::string_view kSidecars[] = {kTimings, kBinaryTimings};
}  // namespace rank_file_endings

// The largest rank a file may name: every reader refuses more, every writer
// checks it, so a corrupt number is named rather than taken as a rank.
inline constexpr std::int64_t kMaxRank = std::int64_t{1} << 30;

// `<prefix>.rank<N><ending>`.
std::filesystem::path rank_file(const std::filesystem::path& prefix, int rank,
                                std::string_view ending);

// How one run's per-rank files are named, as `record` and the choice log
// write them: `<run>.rank<N>.json` (a record or a JSON choice log),
// `<run>.rank<N>.tlcl` (a binary choice log), and beside a record its
// sidecar `<run>.rank<N>.timings.json` or `.timings.tlrt`.
struct RankFileName {
  std::string stem;  // the name less those endings: a record and its sidecar share it
  std::string run;   // `<run>`; empty when the name is not `<run>.rank<N>.<ending>`
  int rank = -1;     // N; -1 likewise
};
RankFileName parse_rank_file_name(std::string_view name);

// `<prefix>.rank<N>.timings.json` or `.timings.tlrt`: a sidecar that is
// read beside its record file, so tools given a glob such as `rec.rank*`
// skip it rather than read it as a record.
bool is_timings_sidecar_name(std::string_view name);

}  // namespace tunelock
