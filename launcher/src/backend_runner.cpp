#include "backend_runner.hpp"

#include <algorithm>
#include <initializer_list>

#include "tunelock/base/median.hpp"

namespace tunelock::launcher {
namespace {

std::vector<std::pair<BufferRef, std::vector<std::byte>>> save_all(
    Backend& backend, std::initializer_list<const std::vector<NamedBuffer>*> lists) {
  std::vector<std::pair<BufferRef, std::vector<std::byte>>> saved;
  for (const auto* list : lists)
    for (const NamedBuffer& b : *list) saved.emplace_back(b.buffer, backend.save(b.buffer));
  return saved;
}

}  // namespace

BackendRunner::BackendRunner(Backend& backend, const CallSite& site, const TuningOptions& options)
    : backend_(backend), site_(site), options_(options) {}

const BackendRunner::Saved& BackendRunner::written() {
  if (!written_) {
    backend_.synchronize();
    written_ = save_all(backend_, {&site_.reset_to_zero, &site_.restore, &site_.outputs});
  }
  return *written_;
}

void BackendRunner::reset() {
  for (const auto& [buffer, bytes] : written()) backend_.restore(buffer, bytes);
  for (const NamedBuffer& b : site_.reset_to_zero) backend_.zero(b.buffer);
}

double BackendRunner::time(std::size_t i) {
  written();
  const auto samples = backend_.time([this] { reset(); }, [&] { site_.run(i); }, [] {},
                                     options_.warmup, std::max(options_.repeats, 1));
  return median(samples);
}

bool BackendRunner::has_outputs() const {
  return !site_.reset_to_zero.empty() || !site_.restore.empty() || !site_.outputs.empty();
}

std::string BackendRunner::run_outputs(std::size_t i) {
  reset();
  site_.run(i);
  std::string bits;  // every written buffer's bytes, in order (their sizes are the call's)
  for (const auto* list : {&site_.reset_to_zero, &site_.restore, &site_.outputs}) {
    for (const NamedBuffer& b : *list) {
      const std::vector<std::byte> bytes = backend_.save(b.buffer);
      bits.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
  }
  return bits;
}

// The first `rows` rows' output bytes, as they are now.
std::string BackendRunner::row_bytes(std::int64_t rows) {
  std::string bits;
  for (const NamedBuffer& b : site_.row_outputs(rows)) {
    const std::vector<std::byte> bytes = backend_.save(b.buffer);
    bits.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return bits;
}

FirstRows BackendRunner::run_first_rows(std::size_t i, std::int64_t rows) {
  FirstRows out;
  reset();
  site_.run(i);
  out.inside = row_bytes(rows);
  reset();
  site_.run_rows(i, rows);
  out.alone = row_bytes(rows);
  return out;
}

bool BackendRunner::use_second_input() {
  if (!site_.second_input) return false;
  if (!inputs_) inputs_ = save_all(backend_, {&site_.inputs});
  site_.second_input();
  return true;
}

void BackendRunner::put_back() {
  if (inputs_) {
    for (const auto& [buffer, bytes] : *inputs_) backend_.restore(buffer, bytes);
    inputs_.reset();
  }
  if (written_)
    for (const auto& [buffer, bytes] : *written_) backend_.restore(buffer, bytes);
}

}  // namespace tunelock::launcher
