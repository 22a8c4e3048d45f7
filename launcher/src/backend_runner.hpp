// The launcher's CallRunner: the engine's first-call driver says what to
// run (time a candidate, run it for its bits, a second input, put back);
// this runs it on a Backend with a call's CallSite.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunelock/launcher/backend.hpp"
#include "tunelock/launcher/tuner.hpp"
#include "tunelock/runtime/first_call.hpp"

namespace tunelock::launcher {

class BackendRunner final : public CallRunner {
 public:
  BackendRunner(Backend& backend, const CallSite& site, const TuningOptions& options);

  double time(std::size_t i) override;
  bool has_outputs() const override;
  std::string run_outputs(std::size_t i) override;
  bool use_second_input() override;
  void put_back() override;
  bool capturing() const override { return site_.capturing; }
  std::int64_t batch_rows() const override { return site_.run_rows ? site_.batch_rows : 0; }
  FirstRows run_first_rows(std::size_t i, std::int64_t rows) override;

 private:
  // Buffers as they were when saved.
  using Saved = std::vector<std::pair<BufferRef, std::vector<std::byte>>>;

  // The call's written buffers as it came in, saved at the first run (the
  // call's inputs may still be in flight on the caller's stream until then).
  const Saved& written();
  void reset();  // the written buffers as saved, reset_to_zero zeroed
  std::string row_bytes(std::int64_t rows);

  Backend& backend_;
  const CallSite& site_;
  const TuningOptions options_;
  std::optional<Saved> written_;
  std::optional<Saved> inputs_;  // saved by use_second_input, put back by put_back
};

}  // namespace tunelock::launcher
