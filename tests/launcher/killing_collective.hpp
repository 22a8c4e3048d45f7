// A transport whose victim rank dies (SIGKILL) at one moment of a check,
// for the killed-rank tests of every transport: the survivors must name
// the lost rank or be stopped by their launcher, and never hang.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "tunelock/verify/collective.hpp"

namespace tunelock::testing {

// before: at the check's first collective, before this rank sends;
// during: once its first message went out (the first collective came back,
// or a tree round's partial was taken and sent);
// after: once the check is over, so the next check meets it gone.
enum class KillMoment { before, during, after };

inline KillMoment kill_moment_named(const std::string& name) {
  if (name == "before") return KillMoment::before;
  if (name == "during") return KillMoment::during;
  if (name == "after") return KillMoment::after;
  throw std::invalid_argument("unknown moment '" + name + "' (before, during, after)");
}

[[noreturn]] inline void die_now() {
  ::kill(::getpid(), SIGKILL);
  for (;;) ::pause();
}

class KillingCollective final : public Collective {
 public:
  KillingCollective(Collective& inner, bool victim, KillMoment moment)
      : inner_(inner), victim_(victim), moment_(moment) {}

  // Only the check between arm() and the next check's first call kills.
  void arm() {
    armed_ = true;
    calls_ = 0;
  }
  // Called once the armed check returned: the `after` moment.
  void check_returned() {
    if (armed_ && victim_ && moment_ == KillMoment::after) die_now();
  }

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string group_id() const override { return inner_.group_id(); }
  int world_rank(int group_rank) const override { return inner_.world_rank(group_rank); }
  bool has_tree() const override { return inner_.has_tree(); }
  bool has_all_reduce() const override { return inner_.has_all_reduce(); }

  std::vector<std::string> all_gather(std::string_view payload) override {
    before_call();
    auto out = inner_.all_gather(payload);
    after_call();
    return out;
  }
  void all_reduce(std::span<std::int64_t> values, ReduceOp op) override {
    before_call();
    inner_.all_reduce(values, op);
    after_call();
  }
  std::string tree_round(TreeReduction& reduction) override {
    before_call();
    if (!(armed_ && victim_ && moment_ == KillMoment::during)) return inner_.tree_round(reduction);
    // A leaf sends its partial, then waits for the verdict: it dies while
    // waiting, its message already out.
    DyingAfterPartial dying(reduction);
    return inner_.tree_round(dying);
  }

 private:
  class DyingAfterPartial final : public TreeReduction {
   public:
    explicit DyingAfterPartial(TreeReduction& inner) : inner_(inner) {}
    void absorb(int from, std::string_view partial) override { inner_.absorb(from, partial); }
    std::string_view partial() override {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        die_now();
      }).detach();
      return inner_.partial();
    }
    std::string_view verdict() override { return inner_.verdict(); }

   private:
    TreeReduction& inner_;
  };

  void before_call() {
    if (armed_ && victim_ && moment_ == KillMoment::before && calls_ == 0) die_now();
  }
  void after_call() {
    ++calls_;
    if (armed_ && victim_ && moment_ == KillMoment::during && calls_ == 1) die_now();
  }

  Collective& inner_;
  bool victim_;
  KillMoment moment_;
  bool armed_ = false;
  int calls_ = 0;  // collectives of the armed check so far
};

}  // namespace tunelock::testing
