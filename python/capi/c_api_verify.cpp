// Verification through the C ABI: over a caller's all-gather (and
// all-reduce) callbacks, over the UCX world from the environment, and over
// a program's process group, where TUNELOCK_VERIFY_TRANSPORT picks UCX
// bootstrapped through the group or the group's own collectives.
#include <map>
#include <memory>
#include <vector>

#include "c_api_support.hpp"
#include "tunelock/base/environment.hpp"
#include "tunelock/c_api.h"
#include "tunelock/runtime/runtime.hpp"
#include "tunelock/verify/collective.hpp"
#ifdef TUNELOCK_HAVE_UCX
#include "tunelock/launcher/ucx_collective.hpp"
#endif

using namespace tunelock;
using namespace tunelock::c_api;

namespace {

// The engine's collective over a caller's all-gather callback.
class CallbackCollective final : public Collective {
 public:
  CallbackCollective(int rank, int size, std::string id, const int* world_ranks,
                     tunelock_gather_fn gather, void* context,
                     tunelock_all_reduce_fn reduce = nullptr)
      : rank_(rank),
        size_(size),
        id_(std::move(id)),
        gather_(gather),
        all_reduce_(reduce),
        context_(context) {
    if (size < 1 || rank < 0 || rank >= size)
      throw Error("verify: rank " + std::to_string(rank) + " of a group of " +
                  std::to_string(size) + " is impossible");
    if (!gather) throw Error("verify: the all-gather callback is NULL");
    for (int r = 0; r < size; ++r) world_ranks_.push_back(world_ranks ? world_ranks[r] : r);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string group_id() const override { return id_; }
  int world_rank(int group_rank) const override { return world_ranks_.at(group_rank); }
  std::vector<std::string> all_gather(std::string_view payload) override {
    std::vector<std::string> gathered;
    if (gather_(context_, payload.data(), payload.size(), &gathered) != 0)
      throw Error("verify: the all-gather of group '" + id_ + "' failed");
    if (gathered.size() != static_cast<std::size_t>(size_))
      throw Error("verify: the all-gather of group '" + id_ + "' returned " +
                  std::to_string(gathered.size()) + " payloads for " + std::to_string(size_) +
                  " ranks");
    return gathered;
  }
  bool has_all_reduce() const override { return all_reduce_ != nullptr; }
  void all_reduce(std::span<std::int64_t> values, ReduceOp op) override {
    if (all_reduce_(context_, values.data(), values.size(), op == ReduceOp::sum ? 0 : 1) != 0)
      throw Error("verify: the all-reduce of group '" + id_ + "' failed");
  }

 private:
  int rank_, size_;
  std::string id_;
  std::vector<int> world_ranks_;
  tunelock_gather_fn gather_;
  tunelock_all_reduce_fn all_reduce_;
  void* context_;
};

int verdict_of(const std::optional<bool>& agreed) { return agreed ? (*agreed ? 1 : 0) : -1; }

// How a process group's checks travel (TUNELOCK_VERIFY_TRANSPORT).
enum class GroupTransport {
  ucx,    // UCX, its addresses gathered once through the group
  group,  // the group's all-reduce, and its all-gather for conflicts
};

constexpr bool kHaveUcx =
#ifdef TUNELOCK_HAVE_UCX
    true;
#else
    false;
#endif

GroupTransport group_transport(const Environment& env) {
  const std::string_view name = env_names::kVerifyTransport;
  const std::string value = env_value(env, name);
  if (value.empty() || value == "auto")
    return kHaveUcx ? GroupTransport::ucx : GroupTransport::group;
  if (value == "group") return GroupTransport::group;
  if (value == "ucx") {
    if (!kHaveUcx)
      throw Error(std::string(name) +
                  "=ucx: this build of tunelock has no UCX (set it to group, or build with UCX)");
    return GroupTransport::ucx;
  }
  invalid_value(name, value, "auto, ucx, group");
}

int run_check(Runtime& runtime, Collective& group, std::int64_t iteration) {
  return iteration < 0 ? (runtime.verify(group).agreed ? 1 : 0)
                       : verdict_of(runtime.maybe_verify(iteration, group));
}

#ifdef TUNELOCK_HAVE_UCX
// One UCX world per process group, connected at the group's first check:
// the addresses travel through the group's all-gather (no port, no job
// token) and every later check runs along UCX's tree without calling back.
// A group seen again with another membership (the program made a new one
// under the same ranks) connects afresh; one that failed to connect is not
// tried again, so no rank waits out the deadline twice.
class UcxGroups {
 public:
  launcher::UcxCollective& of(CallbackCollective& group, double timeout_s) {
    std::vector<int> members;
    for (int r = 0; r < group.size(); ++r) members.push_back(group.world_rank(r));
    const std::string& id = group.group_id();
    if (auto failed = failures_.find(id); failed != failures_.end()) throw Error(failed->second);
    auto found = groups_.find(id);
    if (found != groups_.end() && found->second.members == members &&
        found->second.ucx->rank() == group.rank())
      return *found->second.ucx;
    launcher::Rendezvous shape;
    shape.rank = group.rank();
    shape.world_size = group.size();
    shape.rank_names = members;
    shape.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
    // The network device toward the program's rendezvous host, where it has one.
    const Environment env = process_environment();
    shape.host = env_value(env, "MASTER_ADDR");
    shape.port = 1;
    try {
      auto ucx = std::make_unique<launcher::UcxCollective>(
          std::move(shape), [&group](std::string_view mine) { return group.all_gather(mine); }, id);
      return *(groups_[id] = Connected{std::move(members), std::move(ucx)}).ucx;
    } catch (const Error& e) {
      failures_.emplace(id, e.what());
      throw;
    }
  }

 private:
  struct Connected {
    std::vector<int> members;
    std::unique_ptr<launcher::UcxCollective> ucx;
  };
  std::map<std::string, Connected> groups_;
  std::map<std::string, std::string> failures_;
};
#endif

}  // namespace

extern "C" {

int tunelock_gather_add(void* sink, const char* data, size_t size) {
  return guarded([&] {
    if (!sink || (!data && size)) throw Error("tunelock_gather_add: NULL argument");
    static_cast<std::vector<std::string>*>(sink)->emplace_back(data, size);
  });
}

int tunelock_verify_due(int64_t iteration, int* due) {
  return guarded([&] {
    if (!due) throw Error("tunelock_verify_due: the due argument is NULL");
    *due = process_runtime().verify_due(iteration) ? 1 : 0;
  });
}

int tunelock_verify(int64_t iteration, int rank, int size, const char* group_id,
                    const int* world_ranks, tunelock_gather_fn gather, void* context,
                    int* verdict) {
  return guarded([&] {
    if (!verdict) throw Error("verify: the verdict argument is NULL");
    if (iteration >= 0 && !process_runtime().verify_due(iteration)) {
      *verdict = -1;  // no check due: no group is built
      return;
    }
    CallbackCollective group(rank, size, text_of(group_id, "group_id"), world_ranks, gather,
                             context);
    Runtime& runtime = process_runtime();
    *verdict = run_check(runtime, group, iteration);
  });
}

int tunelock_verify_ucx(int64_t iteration, int* verdict) {
  return guarded([&] {
    if (!verdict) throw Error("verify: the verdict argument is NULL");
    if (iteration >= 0 && !process_runtime().verify_due(iteration)) {
      *verdict = -1;  // no check due: the rendezvous is neither read nor connected
      return;
    }
#ifdef TUNELOCK_HAVE_UCX
    Runtime& runtime = process_runtime();
    // One world connection per process, made on the first check.
    static std::unique_ptr<Collective> world =
        launcher::world_collective(process_environment(), runtime.policy()->verify_timeout_s);
    *verdict = run_check(runtime, *world, iteration);
#else
    (void)iteration;
    (void)verdict;
    throw Error("this build of tunelock has no UCX: verify over torch.distributed instead");
#endif
  });
}

int tunelock_verify_group(int64_t iteration, int rank, int size, const char* group_id,
                          const int* world_ranks, tunelock_gather_fn gather,
                          tunelock_all_reduce_fn all_reduce, void* context, int* verdict,
                          int* over_ucx) {
  return guarded([&] {
    if (!all_reduce) throw Error("verify: the all-reduce callback is NULL");
    if (!verdict) throw Error("verify: the verdict argument is NULL");
    if (iteration >= 0 && !process_runtime().verify_due(iteration)) {
      *verdict = -1;  // no check due: no transport is read or connected
      if (over_ucx) *over_ucx = 0;
      return;
    }
    CallbackCollective group(rank, size, text_of(group_id, "group_id"), world_ranks, gather,
                             context, all_reduce);
    Runtime& runtime = process_runtime();
    // Read once: a check runs at every step and the choice cannot change.
    static const GroupTransport transport = group_transport(process_environment());
    const bool ucx = size > 1 && transport == GroupTransport::ucx;
    if (over_ucx) *over_ucx = ucx ? 1 : 0;
#ifdef TUNELOCK_HAVE_UCX
    if (ucx) {
      static UcxGroups groups;
      *verdict =
          run_check(runtime, groups.of(group, runtime.policy()->verify_timeout_s), iteration);
      return;
    }
#endif
    *verdict = run_check(runtime, group, iteration);
  });
}

}  // extern "C"
