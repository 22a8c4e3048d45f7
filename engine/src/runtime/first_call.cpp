#include "tunelock/runtime/first_call.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "runtime/candidate_trials.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/model/batch_rows.hpp"
#include "tunelock/runtime/runtime.hpp"

namespace tunelock {
namespace {

using detail::repeats_its_bits;
using detail::run_trials;
using detail::TrialNames;
using detail::Trials;
using detail::TrialTiming;

std::vector<CandidateTiming> timings_of(std::span<const Config> candidates, const Trials& trials) {
  std::vector<CandidateTiming> out;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    out.push_back({signature(candidates[i]), trials.median_ms[i], trials.nondeterministic[i],
                   i < trials.bit_class.size() ? trials.bit_class[i] : std::nullopt});
  return out;
}

std::vector<std::size_t> every(std::size_t count) {
  std::vector<std::size_t> out(count);
  std::iota(out.begin(), out.end(), std::size_t{0});
  return out;
}

class Story {
 public:
  Story(const FirstCallPorts& ports, const FirstCallRequest& request, CallRunner& runner)
      : ports_(ports),
        request_(request),
        runner_(runner),
        policy_(ports.policy),
        names_{request.kernel.qualified(), request.kernel.qualified() + " [" + request.key + "]"} {}

  FirstCallOutcome tell() {
    const std::span<const Config> candidates = request_.candidates;
    if (candidates.empty())
      throw Error("kernel family '" + names_.qualified + "' [" + request_.key +
                  "] has no candidates");
    const std::size_t declared = request_.declared ? request_.declared : candidates.size();
    outcome_.plan = plan_first_call(policy_, request_.kernel, declared);
    const FirstCall plan = outcome_.plan;
    const ChoiceOrigin origin = policy_.pins() ? ChoiceOrigin::pinned : ChoiceOrigin::timed;
    if (plan == FirstCall::single_logged)
      ports_.outputs.log_choice(request_.arch, request_.kernel, kWildcardKey, candidates[0],
                                origin);
    if (plan == FirstCall::single || plan == FirstCall::single_logged) return outcome_;
    ports_.tables.note_identity(request_.arch, request_.kernel, request_.identity);
    enumerate_once(policy_, ports_.notices, request_.kernel, plan, declared,
                   request_.candidates_are);
    if (engine_chooses(plan) && policy_.chaos && !runner_.runs_candidates() &&
        request_.own_default) {
      own_default_under_chaos();
    } else if (plan == FirstCall::pinned || plan == FirstCall::audited) {
      pinned(plan == FirstCall::audited);
    } else if (plan == FirstCall::consensus) {
      consensus();
    } else {
      timed(plan != FirstCall::untouched, plan == FirstCall::timed_recorded);
    }
    return outcome_;
  }

 private:
  // The rules' choice, then, once per key, its bits: two runs on identical
  // inputs compared. The check only reports; it never changes the choice,
  // since a rank's own observation must not split the ranks. Nothing runs
  // inside a graph capture, so a captured first call goes unchecked.
  void pinned(bool audited) {
    const Decision& decision =
        *(outcome_.decision = ports_.tables.pinned_decision(
              request_.arch, request_.kernel, request_.key, request_.candidates,
              request_.nondeterministic_variants, request_.own_default));
    const std::size_t entry = decision.choice.index;
    ports_.outputs.log_choice(request_.arch, request_.kernel, request_.key,
                              request_.candidates[entry], ChoiceOrigin::pinned);
    // Nothing is run at compile time or inside a capture; an audit still
    // takes the face's own timings at compile time.
    const bool capturing = runner_.capturing();
    const bool runs = !capturing && runner_.runs_candidates();
    outcome_.launched = entry;
    if (policy_.times_equivalents() && runs && !decision.worth_timing.empty()) {
      outcome_.launched = fastest_equivalent(entry, decision.worth_timing);
    } else if (policy_.check_bits && runs) {
      check_bits(entry);
    }
    if (runs) check_rows(outcome_.launched);
    // The audit only watches: what launches is what plain pinned launches.
    if (audited && !capturing) {
      const Trials trials =
          run_trials(runner_, request_.candidates, every(request_.candidates.size()), names_,
                     ports_.notices, /*audit=*/true);
      outcome_.audit_id = ports_.outputs.audit_key(
          request_.arch, request_.kernel, request_.key, request_.candidates, decision,
          outcome_.launched, timings_of(request_.candidates, trials), outcome_.repeats);
    }
  }

  // Chaos at compile time: the kernel's own untimed default, logged as
  // pinned. A config drawn at random may not compile (Inductor offers tiles
  // beyond the device's shared memory and drops them only by compiling every
  // one), and nothing can be run there to show a divergence anyway; chaos
  // varies what runs, at launch.
  void own_default_under_chaos() {
    outcome_.launched = *request_.own_default;
    ports_.outputs.log_choice(request_.arch, request_.kernel, request_.key,
                              request_.candidates[outcome_.launched], ChoiceOrigin::pinned);
  }

  // Consensus: the deterministic choice, logged as pinned logs it, so every
  // rank launches alike from the first call; then, once per key, every
  // live candidate timed with the bits audit, for the next check. After a
  // check agreed on a winner the key launches it (a rank that reaches the
  // key only then launches it from its first call, timing nothing). Inside
  // a graph capture nothing is timed and nothing switches; the answer is
  // provisional, so the face asks again after the capture.
  void consensus() {
    const Decision& decision =
        *(outcome_.decision = ports_.tables.pinned_decision(
              request_.arch, request_.kernel, request_.key, request_.candidates,
              request_.nondeterministic_variants, request_.own_default));
    const std::size_t entry = decision.choice.index;
    const Config& first = request_.candidates[entry];
    ports_.outputs.log_choice(request_.arch, request_.kernel, request_.key, first,
                              ChoiceOrigin::pinned);
    outcome_.launched = entry;
    const bool capturing = runner_.capturing();
    ConsensusMemory& consensus = ports_.consensus;
    const RecordKey key{request_.arch, names_.qualified, request_.key};
    if (const std::optional<AgreedWinner> agreed = consensus.winner(key)) {
      const auto at =
          std::find_if(request_.candidates.begin(), request_.candidates.end(),
                       [&](const Config& c) { return signature(c) == agreed->signature; });
      if (at == request_.candidates.end()) {
        // The group's winner was pruned away here: the deterministic choice
        // stays, and the log shows no switch, so a check names this rank.
        if (ports_.notices.first("consensus-absent|" + names_.what))
          logger().warn(
              "consensus winner {} of {} is not among this call's live candidates: launching "
              "the deterministic choice {}",
              agreed->signature, names_.what, signature(first));
        return;
      }
      if (capturing) {
        outcome_.provisional = true;
        return;
      }
      outcome_.launched = static_cast<std::size_t>(at - request_.candidates.begin());
      const std::string first_signature = signature(first);
      if (agreed->signature != first_signature)
        ports_.outputs.log_consensus_switch(request_.arch, names_.qualified, request_.key,
                                            first_signature, agreed->signature, agreed->check);
      return;
    }
    if (consensus.timed(key)) return;  // timed already: waiting for the next check
    if (capturing) {
      outcome_.provisional = true;
      return;
    }
    const Trials trials =
        run_trials(runner_, request_.candidates, every(request_.candidates.size()), names_,
                   ports_.notices, /*audit=*/true);
    // The deterministic choice's own bits, as a pinned first call checks
    // them, from the audit's two runs.
    const bool compared = runner_.has_outputs() && trials.median_ms[entry].has_value();
    ports_.outputs.note_bits_check(
        request_.kernel, request_.key, first,
        compared ? std::optional<bool>(!trials.nondeterministic[entry]) : std::nullopt);
    std::vector<CandidateTiming> timings = timings_of(request_.candidates, trials);
    const Config& local_winner = request_.candidates[trials.best];
    ports_.outputs.record(request_.arch, names_.qualified, request_.key, local_winner, timings);
    consensus.add_timings(key, signature(first), local_winner, std::move(timings));
  }

  // Batch invariance, pinned: once per kernel, row 0 of the launched config
  // alone against row 0 inside this call. Reports only, as the bits check.
  void check_rows(std::size_t index) {
    if (!policy_.batch_invariant || request_.batch_dim.empty() || !policy_.check_bits) return;
    const std::int64_t rows = runner_.batch_rows();
    if (rows < 2 || !ports_.notices.first("rows-check|" + names_.qualified)) return;
    const std::string config = signature(request_.candidates[index]);
    FirstRows first;
    try {
      first = runner_.run_first_rows(index, 1);
    } catch (const std::exception& error) {
      runner_.put_back();
      logger().warn("{}: the batch-invariance check could not run {} on one row: {}", names_.what,
                    config, error.what());
      return;
    }
    runner_.put_back();
    if (first.alone == first.inside) return;
    const std::string message =
        names_.what + ": row 0 alone gave other bits than row 0 inside this call's " +
        std::to_string(rows) + " rows (" + std::string(request_.batch_dim) + ") under " + config +
        ": the launched config is not batch-invariant here; re-record the table under "
        "TUNELOCK_BATCH_INVARIANT=1 (`tunelock table invariance` names such configs)";
    if (policy_.verify_strict) throw Error(message);
    logger().warn("{}", message);
  }

  // Batch invariance, record: every candidate on the first rows of the
  // call at a ladder of sizes (1, 2, 4, ... and the call's own), alone and
  // inside the full call. A candidate whose rows change with the batch is
  // batch-variant; the others fall into classes of equal rows at every
  // size (RowAudit). Nothing of it changes what launches.
  void audit_rows(std::vector<CandidateTiming>& timings) {
    if (!policy_.batch_invariant || request_.batch_dim.empty()) return;
    const std::string dim(request_.batch_dim);
    const std::int64_t rows = runner_.batch_rows();
    const std::optional<std::int64_t> keyed = batch_size_of(request_.key, dim);
    if (rows < 1 || keyed != rows) {
      if (ports_.notices.first("rows-audit|" + names_.qualified))
        logger().warn(
            "{}: declares batch dim {}, but {}: no invariance audit, so a table merged from this "
            "record cannot prove its rows",
            names_.what, dim,
            rows < 1 ? std::string("its call cannot run on fewer rows")
                     : "its key says " + dim + "=" +
                           (keyed ? std::to_string(*keyed) : std::string("nothing")) +
                           " and the call has " + std::to_string(rows) + " rows");
      return;
    }
    const std::vector<std::int64_t> sizes = row_ladder(rows);
    std::map<std::vector<std::string>, int> classes;  // rows alone at every size -> class
    for (std::size_t i = 0; i < timings.size(); ++i) {
      if (!timings[i].median_ms) continue;  // failed to run
      RowAudit audit{dim, sizes};
      std::vector<std::string> alone;
      try {
        for (std::int64_t size : sizes) {
          FirstRows first = runner_.run_first_rows(i, size);
          if (first.alone != first.inside) {
            audit.variant_at = size;
            break;
          }
          alone.push_back(std::move(first.alone));
        }
      } catch (const std::exception& error) {
        logger().warn("{}: the invariance audit could not run {} on fewer rows: {}", names_.what,
                      timings[i].signature, error.what());
        continue;
      }
      if (!audit.variant_at)
        audit.row_class =
            classes.try_emplace(std::move(alone), static_cast<int>(classes.size())).first->second;
      timings[i].rows = std::move(audit);
    }
    runner_.put_back();
  }

  void check_bits(std::size_t index) {
    outcome_.repeats = repeats_its_bits(runner_, index);
    ports_.outputs.note_bits_check(request_.kernel, request_.key, request_.candidates[index],
                                   outcome_.repeats);
  }

  // TUNELOCK_EQUIVALENT=timed: the entry's config and the equivalents worth
  // timing (same bits by the record's audit; its tie set and the fastest
  // recorded, equivalents_worth_timing) timed, the fastest launched from
  // then on, and remembered for this machine, so another process launches
  // it untimed. The log already names the entry's config, so digests and
  // verification are those of plain pinned. A member that fails to run
  // (timed as infinite) or fails the bits check is dropped; the entry's own
  // config is the last resort, checked as plain pinned checks it.
  std::size_t fastest_equivalent(std::size_t entry, std::span<const std::size_t> members) {
    if (const std::optional<std::size_t> cached = cached_pick(entry, members)) return *cached;
    std::size_t pick = timed_pick(entry, members);
    ports_.equivalents.remember_equivalent(request_.arch, names_.qualified, request_.key,
                                           signature(request_.candidates[pick]));
    return pick;
  }

  // This machine's earlier pick, when it is still the entry or one of the
  // members; its bits are checked as a fresh pick's are.
  std::optional<std::size_t> cached_pick(std::size_t entry, std::span<const std::size_t> members) {
    const std::optional<std::string> cached =
        ports_.equivalents.cached_equivalent(request_.arch, names_.qualified, request_.key);
    if (!cached) return std::nullopt;
    std::vector<std::size_t> allowed{entry};
    allowed.insert(allowed.end(), members.begin(), members.end());
    for (std::size_t index : allowed) {
      if (signature(request_.candidates[index]) != *cached) continue;
      if (index == entry) {
        if (policy_.check_bits) check_bits(entry);
        return entry;
      }
      if (policy_.check_bits && repeats_its_bits(runner_, index) == false) return std::nullopt;
      outcome_.timed = true;
      return index;
    }
    return std::nullopt;  // the table or the candidates changed: time again
  }

  std::size_t timed_pick(std::size_t entry, std::span<const std::size_t> members) {
    std::vector<std::size_t> order{entry};
    order.insert(order.end(), members.begin(), members.end());
    const Trials trials = run_trials(runner_, request_.candidates, order, names_, ports_.notices,
                                     /*audit=*/false, TrialTiming::brief);
    std::vector<std::size_t> by_time;  // positions in `order`, fastest first, failures left out
    for (std::size_t j = 0; j < order.size(); ++j)
      if (trials.median_ms[j]) by_time.push_back(j);
    std::stable_sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) {
      return *trials.median_ms[a] < *trials.median_ms[b];
    });
    for (std::size_t j : by_time) {
      const std::size_t index = order[j];
      if (index == entry) break;  // the entry itself: checked below as plain pinned
      if (!policy_.check_bits || repeats_its_bits(runner_, index) != false) {
        outcome_.timed = true;
        return index;
      }
      const std::string config = signature(request_.candidates[index]);
      if (ports_.notices.first("equivalent-dropped|" + names_.qualified + "|" + config)) {
        logger().warn(
            "equivalent config {} of {} gave different bits in two runs: dropped, never launched "
            "in place of the entry's config",
            config, names_.what);
      }
    }
    if (policy_.check_bits) check_bits(entry);
    return entry;
  }

  // Timed as the autotuner would (never inside a graph capture), logged
  // when observed, recorded and audited in record mode.
  void timed(bool logged, bool recorded) {
    if (runner_.capturing()) {
      throw Error("kernel family '" + names_.qualified + "' [" + request_.key + "] on " +
                  request_.arch +
                  ": its first call for this key is inside a CUDA graph capture, and the " +
                  std::string(to_string(policy_.effective_mode())) +
                  " policy would time its candidates, which cannot run during a capture; warm up "
                  "(call it once for this key) before capturing, or capture under pinned");
    }
    const Trials trials =
        run_trials(runner_, request_.candidates, every(request_.candidates.size()), names_,
                   ports_.notices, /*audit=*/recorded);
    outcome_.launched = trials.best;
    outcome_.timed = true;
    const Config& winner = request_.candidates[trials.best];
    if (logged)
      ports_.outputs.log_choice(request_.arch, request_.kernel, request_.key, winner,
                                ChoiceOrigin::timed);
    if (recorded) {
      std::vector<CandidateTiming> timings = timings_of(request_.candidates, trials);
      audit_rows(timings);
      ports_.outputs.record(request_.arch, names_.qualified, request_.key, winner,
                            std::move(timings));
    }
  }

  const FirstCallPorts& ports_;
  const FirstCallRequest& request_;
  CallRunner& runner_;
  const Policy& policy_;
  const TrialNames names_;
  FirstCallOutcome outcome_;
};

}  // namespace

FirstRows CallRunner::run_first_rows(std::size_t, std::int64_t) {
  throw Error("this call cannot run on fewer rows");
}

FirstCallOutcome run_first_call(const FirstCallPorts& ports, const FirstCallRequest& request,
                                CallRunner& runner) {
  return Story(ports, request, runner).tell();
}

FirstCallOutcome run_first_call(Runtime& runtime, const FirstCallRequest& request,
                                CallRunner& runner) {
  const std::shared_ptr<const Policy> policy = runtime.policy();  // held for the call
  const FirstCallPorts ports{*policy, runtime.notices(),          runtime,
                             runtime, runtime.consensus_memory(), runtime};
  return run_first_call(ports, request, runner);
}

void enumerate_once(const Policy& policy, Notices& notices, const KernelId& kernel, FirstCall plan,
                    std::size_t count, std::string_view candidates_are) {
  if (!policy.enumerate) return;
  const std::string qualified = kernel.qualified();
  if (!notices.first("enumerate|" + qualified)) return;
  logger().info("{} {} ({} {})", enumerate_state(plan), qualified, count, candidates_are);
}

void enumerate_once(Runtime& runtime, const KernelId& kernel, FirstCall plan, std::size_t count,
                    std::string_view candidates_are) {
  enumerate_once(*runtime.policy(), runtime.notices(), kernel, plan, count, candidates_are);
}

}  // namespace tunelock
