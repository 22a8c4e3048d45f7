#include "tunelock/logs/launch_log.hpp"

#include <flatbuffers/flatbuffers.h>
#include <xxhash.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/checksum_trailer.hpp"
#include "io/json_checks.hpp"
#include "io/sealed_file.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/fb/launch_log_generated.h"
#include "tunelock/io/files.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/io/rank_files.hpp"

namespace tunelock {

std::string hex_digest(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

namespace {

using namespace json_checks;
using nlohmann::json;

// The JSON form is 1; the binary form is 1 too (it was born with its trailer).
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::string_view kReconvert = "record the run again with this tunelock's watch";
constexpr std::int64_t kMaxDim = 0xFFFFFFFFll;

std::uint64_t kernel_hash(std::string_view name, std::string_view module) {
  std::string text;
  text.reserve(name.size() + module.size() + 1);
  text.append(name).push_back('\0');
  text.append(module);
  return XXH3_64bits(text.data(), text.size());
}

// The fixed-size bytes a launch or a run contributes to a digest: the
// kernel's hash, the shape's eleven numbers, and (for a run) its count.
std::array<std::uint64_t, 8> record_of(std::uint64_t kernel, const LaunchShape& s,
                                       std::uint64_t count) {
  auto pair = [](std::uint32_t a, std::uint32_t b) { return (std::uint64_t{a} << 32) | b; };
  return {kernel,
          pair(s.grid.x, s.grid.y),
          pair(s.grid.z, s.block.x),
          pair(s.block.y, s.block.z),
          pair(s.cluster.x, s.cluster.y),
          pair(s.cluster.z, s.shared_bytes),
          std::uint64_t{s.in_graph},
          count};
}

// The digest of a step's runs, with the kernels' hashes.
std::string step_digest(const std::vector<LaunchRun>& runs,
                        const std::vector<std::uint64_t>& kernel_hashes) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (const LaunchRun& run : runs) {
    const auto record = record_of(kernel_hashes[run.kernel], run.shape, run.count);
    XXH3_64bits_update(state, record.data(), sizeof record);
  }
  const std::uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hex_digest(digest);
}

std::vector<std::uint64_t> kernel_hashes_of(const std::vector<WatchedKernel>& kernels) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(kernels.size());
  for (const WatchedKernel& k : kernels) hashes.push_back(kernel_hash(k.name, k.module));
  return hashes;
}

// What every reader checks after parsing: kernel indices in range, runs
// maximal with positive counts, each step's count and digest as stored.
void check_log(const LaunchLog& log, const std::string& origin) {
  const auto hashes = kernel_hashes_of(log.kernels);
  for (std::size_t i = 0; i < log.steps.size(); ++i) {
    const WatchStep& step = log.steps[i];
    const std::string where = origin + ": steps[" + std::to_string(i) + "]";
    std::uint64_t launches = 0;
    for (std::size_t r = 0; r < step.runs.size(); ++r) {
      const LaunchRun& run = step.runs[r];
      const std::string at = where + ".runs[" + std::to_string(r) + "]";
      if (run.kernel >= log.kernels.size())
        throw Error(at + ".kernel: " + std::to_string(run.kernel) +
                    " names no kernel (the log has " + std::to_string(log.kernels.size()) + ")");
      if (run.count == 0) throw Error(at + ".count: must be 1 or more");
      if (r > 0 && step.runs[r - 1].kernel == run.kernel && step.runs[r - 1].shape == run.shape)
        throw Error(at + ": repeats the run before it (runs are always merged)");
      if (launches + run.count < launches) throw Error(at + ".count: too large");
      launches += run.count;
    }
    if (launches != step.launches)
      throw Error(where + ".launches: stored " + std::to_string(step.launches) +
                  " but its runs hold " + std::to_string(launches));
    const std::string computed = step_digest(step.runs, hashes);
    if (computed != step.digest)
      throw Error(where + ".digest: stored " + step.digest + " does not match its launches (" +
                  computed + "); the file was changed after it was written");
  }
}

std::uint32_t dim_value(const json& value, const std::string& where, std::int64_t min) {
  return static_cast<std::uint32_t>(require_int(value, where, min, kMaxDim));
}

Dim3 dim3_from_json(const json& value, const std::string& where, std::int64_t min) {
  require_array(value, where);
  if (value.size() != 3)
    throw Error(where + ": expected [x, y, z], got " + std::to_string(value.size()) + " numbers");
  return {dim_value(value[0], index_path(where, 0), min),
          dim_value(value[1], index_path(where, 1), min),
          dim_value(value[2], index_path(where, 2), min)};
}

json dim3_to_json(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

const json& member(const json& object, std::string_view field, const std::string& where) {
  const json* value = find_member(object, field);
  if (!value) throw Error(member_path(where, field) + ": missing");
  return *value;
}

LaunchLog from_json(std::string_view text, const std::string& origin) {
  const json root = parse_json(text, origin);
  require_object(root, origin);
  const std::string top = origin + ": ";  // member_path's root form
  const std::int64_t version =
      require_int(member(root, "format_version", top), member_path(top, "format_version"), 1);
  if (version > kFormatVersion)
    throw Error(origin + ": format_version " + std::to_string(version) +
                " is newer than this tunelock supports (1); upgrade tunelock");
  LaunchLog log;
  log.rank = static_cast<int>(
      require_int(member(root, "rank", top), member_path(top, "rank"), 0, kMaxRank));
  if (const json* program = find_member(root, "program"))
    log.program = require_string(*program, member_path(top, "program"));
  if (const json* note = find_member(root, "note"))
    log.note = require_string(*note, member_path(top, "note"));
  const std::string kernels_at = member_path(top, "kernels");
  const json& kernels = require_array(member(root, "kernels", top), kernels_at);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string at = index_path(kernels_at, i);
    const json& k = require_object(kernels[i], at);
    WatchedKernel kernel{require_string(member(k, "name", at), member_path(at, "name")), ""};
    if (const json* module = find_member(k, "module"))
      kernel.module = require_string(*module, member_path(at, "module"));
    log.kernels.push_back(std::move(kernel));
  }
  const std::string steps_at = member_path(top, "steps");
  const json& steps = require_array(member(root, "steps", top), steps_at);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string at = index_path(steps_at, i);
    const json& s = require_object(steps[i], at);
    WatchStep step;
    step.digest = require_string(member(s, "digest", at), member_path(at, "digest"));
    step.launches = static_cast<std::uint64_t>(
        require_int(member(s, "launches", at), member_path(at, "launches"), 0));
    const std::string runs_at = member_path(at, "runs");
    const json& runs = require_array(member(s, "runs", at), runs_at);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const std::string run_at = index_path(runs_at, r);
      const json& j = require_object(runs[r], run_at);
      LaunchRun run;
      run.kernel = static_cast<std::uint32_t>(
          require_int(member(j, "kernel", run_at), member_path(run_at, "kernel"), 0, kMaxDim));
      run.shape.grid = dim3_from_json(member(j, "grid", run_at), member_path(run_at, "grid"), 1);
      run.shape.block = dim3_from_json(member(j, "block", run_at), member_path(run_at, "block"), 1);
      if (const json* cluster = find_member(j, "cluster"))
        run.shape.cluster = dim3_from_json(*cluster, member_path(run_at, "cluster"), 0);
      if (const json* smem = find_member(j, "smem"))
        run.shape.shared_bytes = dim_value(*smem, member_path(run_at, "smem"), 0);
      if (const json* graph = find_member(j, "graph"))
        run.shape.in_graph = require_bool(*graph, member_path(run_at, "graph"));
      if (const json* count = find_member(j, "count"))
        run.count =
            static_cast<std::uint64_t>(require_int(*count, member_path(run_at, "count"), 1));
      step.runs.push_back(run);
    }
    log.steps.push_back(std::move(step));
  }
  return log;
}

std::string fb_text(const flatbuffers::String* s, const std::string& where) {
  if (!s) return {};
  require_utf8({s->c_str(), s->size()}, where);
  return s->str();
}

Dim3 dim3_from_fb(const fb::Dim3* d) { return d ? Dim3{d->x(), d->y(), d->z()} : Dim3{}; }

LaunchLog from_binary(std::string_view bytes, const std::string& origin) {
  const fb::LaunchLog& root = detail::open_sealed<fb::LaunchLog>(
      bytes, origin, {"binary launch log", fb::LaunchLogIdentifier(), kFormatVersion, kReconvert});
  if (root.rank() > kMaxRank)
    throw Error(origin + ": rank: " + std::to_string(root.rank()) +
                " is out of range; allowed 0 to " + std::to_string(kMaxRank));
  LaunchLog log;
  log.rank = static_cast<int>(root.rank());
  log.program = fb_text(root.program(), origin + ": program");
  log.note = fb_text(root.note(), origin + ": note");
  if (root.kernels()) {
    for (flatbuffers::uoffset_t i = 0; i < root.kernels()->size(); ++i) {
      const fb::WatchedKernel* k = root.kernels()->Get(i);
      const std::string at = origin + ": kernels[" + std::to_string(i) + "]";
      log.kernels.push_back(
          {fb_text(k->name(), at + ".name"), fb_text(k->module_hash(), at + ".module")});
    }
  }
  if (root.steps()) {
    for (flatbuffers::uoffset_t i = 0; i < root.steps()->size(); ++i) {
      const fb::WatchStep* s = root.steps()->Get(i);
      WatchStep step;
      step.digest = fb_text(s->digest(), origin + ": steps[" + std::to_string(i) + "].digest");
      step.launches = s->launches();
      if (s->runs()) {
        for (const fb::LaunchRun* r : *s->runs()) {
          LaunchRun run;
          run.kernel = r->kernel();
          run.shape = {dim3_from_fb(r->grid()), dim3_from_fb(r->block()),
                       r->cluster() ? dim3_from_fb(r->cluster()) : Dim3{0, 0, 0}, r->shared_bytes(),
                       r->in_graph()};
          run.count = r->count();
          step.runs.push_back(run);
        }
      }
      log.steps.push_back(std::move(step));
    }
  }
  return log;
}

}  // namespace

std::uint64_t LaunchLog::total_launches() const {
  std::uint64_t total = 0;
  for (const WatchStep& step : steps) total += step.launches;
  return total;
}

std::string describe(const LaunchShape& s) {
  auto dims = [](const Dim3& d) {
    return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
  };
  std::string text = "grid " + dims(s.grid) + " block " + dims(s.block) + " smem " +
                     std::to_string(s.shared_bytes);
  if (!(s.cluster == Dim3{0, 0, 0})) text += " cluster " + dims(s.cluster);
  if (s.in_graph) text += " graph";
  return text;
}

LaunchRecorder::LaunchRecorder() = default;

std::uint32_t LaunchRecorder::kernel(std::string_view name, std::string_view module) {
  const std::uint64_t hash = kernel_hash(name, module);
  const auto [first, last] = index_of_hash_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    const WatchedKernel& known = kernels_[it->second];
    if (known.name == name && known.module == module) return it->second;
  }
  const auto index = static_cast<std::uint32_t>(kernels_.size());
  kernels_.push_back({std::string(name), std::string(module)});
  kernel_hashes_.push_back(hash);
  index_of_hash_.emplace(hash, index);
  return index;
}

void LaunchRecorder::add(std::uint32_t kernel, const LaunchShape& shape) {
  if (!open_.runs.empty() && open_.runs.back().kernel == kernel && open_.runs.back().shape == shape)
    ++open_.runs.back().count;
  else
    open_.runs.push_back({kernel, shape, 1});
  ++open_.launches;
  ++total_;
  const auto record = record_of(kernel_hashes_[kernel], shape, 1);
  check_hash_ = XXH3_64bits_withSeed(record.data(), sizeof record, check_hash_);
  ++check_launches_;
}

void LaunchRecorder::step() {
  open_.digest = step_digest(open_.runs, kernel_hashes_);
  steps_.push_back(std::move(open_));
  open_ = {};
}

std::string LaunchRecorder::take_check_digest() {
  const std::string digest = check_launches_ ? hex_digest(check_hash_) : "none";
  check_hash_ = 0;
  check_launches_ = 0;
  return digest;
}

LaunchLog LaunchRecorder::log(int rank, std::string program, std::string note) const {
  LaunchLog out;
  out.rank = rank;
  out.program = std::move(program);
  out.note = std::move(note);
  out.kernels = kernels_;
  out.steps = steps_;
  if (!open_.runs.empty()) {
    WatchStep last = open_;
    last.digest = step_digest(last.runs, kernel_hashes_);
    out.steps.push_back(std::move(last));
  }
  return out;
}

std::filesystem::path launch_log_path(const std::filesystem::path& prefix, int rank, bool binary) {
  return rank_file(prefix, rank,
                   binary ? rank_file_endings::kBinaryLaunches : rank_file_endings::kLaunches);
}

std::string launch_log_to_json(const LaunchLog& log) {
  json kernels = json::array();
  for (const WatchedKernel& k : log.kernels) {
    json item = {{"name", k.name}};
    if (!k.module.empty()) item["module"] = k.module;
    kernels.push_back(std::move(item));
  }
  const auto hashes = kernel_hashes_of(log.kernels);
  json steps = json::array();
  for (const WatchStep& step : log.steps) {
    json runs = json::array();
    for (const LaunchRun& run : step.runs) {
      json item = {{"kernel", run.kernel},
                   {"grid", dim3_to_json(run.shape.grid)},
                   {"block", dim3_to_json(run.shape.block)},
                   {"smem", run.shape.shared_bytes}};
      if (!(run.shape.cluster == Dim3{0, 0, 0})) item["cluster"] = dim3_to_json(run.shape.cluster);
      if (run.shape.in_graph) item["graph"] = true;
      if (run.count != 1) item["count"] = run.count;
      runs.push_back(std::move(item));
    }
    steps.push_back({{"digest", step_digest(step.runs, hashes)},
                     {"launches", step.launches},
                     {"runs", std::move(runs)}});
  }
  json out = {{"format_version", kFormatVersion},
              {"rank", log.rank},
              {"program", log.program},
              {"kernels", std::move(kernels)},
              {"steps", std::move(steps)}};
  if (!log.note.empty()) out["note"] = log.note;
  // Compact: a log is read by tools, and its runs keep it small already.
  return out.dump() + "\n";
}

std::string launch_log_to_binary(const LaunchLog& log) {
  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::WatchedKernel>> kernels;
  for (const WatchedKernel& k : log.kernels)
    kernels.push_back(fb::CreateWatchedKernel(b, b.CreateString(k.name), b.CreateString(k.module)));
  const auto hashes = kernel_hashes_of(log.kernels);
  std::vector<flatbuffers::Offset<fb::WatchStep>> steps;
  for (const WatchStep& step : log.steps) {
    std::vector<flatbuffers::Offset<fb::LaunchRun>> runs;
    for (const LaunchRun& run : step.runs) {
      const auto& s = run.shape;
      const fb::Dim3 grid(s.grid.x, s.grid.y, s.grid.z), block(s.block.x, s.block.y, s.block.z),
          cluster(s.cluster.x, s.cluster.y, s.cluster.z);
      runs.push_back(fb::CreateLaunchRun(b, run.kernel, &grid, &block, &cluster, s.shared_bytes,
                                         s.in_graph, run.count));
    }
    const auto digest = b.CreateString(step_digest(step.runs, hashes));
    steps.push_back(fb::CreateWatchStep(b, digest, step.launches, b.CreateVector(runs)));
  }
  const auto program = b.CreateString(log.program);
  const auto note = b.CreateString(log.note);
  const auto kernel_vector = b.CreateVector(kernels);
  const auto step_vector = b.CreateVector(steps);
  fb::FinishLaunchLogBuffer(
      b, fb::CreateLaunchLog(b, kFormatVersion, static_cast<std::uint32_t>(log.rank), program, note,
                             kernel_vector, step_vector));
  return checksum_trailer::seal(
      std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()));
}

LaunchLog launch_log_from_bytes(std::string_view bytes, const std::string& origin) {
  const bool binary = bytes.size() >= 8 &&
                      flatbuffers::BufferHasIdentifier(bytes.data(), fb::LaunchLogIdentifier());
  LaunchLog log = binary ? from_binary(bytes, origin) : from_json(bytes, origin);
  check_log(log, origin);
  log.origin = origin;
  return log;
}

LaunchLog load_launch_log(const std::filesystem::path& path) {
  return launch_log_from_bytes(read_file(path), path.string());
}

void write_launch_log(const LaunchLog& log, const std::filesystem::path& path) {
  const bool binary = path.extension() == ".tlln";
  write_file_atomically(path, binary ? launch_log_to_binary(log) : launch_log_to_json(log));
}

}  // namespace tunelock
