// Pinned means the same bits: on the host backend, a family whose cheapest
// variant changes its own bits (a stand-in for float atomics). Without a
// table the first pinned call's check names it; after record -> merge the
// table carries what the audit learned, so no key, recorded or not, ever
// launches it; a user can declare it up front with the same effect.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>
#include <set>
#include <thread>

#include "captured_log.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using namespace tunelock::launcher;
using tunelock::testing::CapturedLog;
using tunelock::testing::TempDir;

namespace {

using SumFamily = KernelFamily<const std::vector<float>*, float*>;

const std::string kRacy = "ATOMIC=1,BLOCK=1;warps=1;stages=1";
const std::string kInOrder = "BLOCK=8;warps=4;stages=2";

// Launch counts per variant, shared with the variants' closures.
struct Launches {
  std::atomic<int> racy{0};
  std::atomic<int> in_order{0};
};

// The cheapest variant (BLOCK=1) adds in an order that changes with every
// run, as float atomics do; the other adds in order, slower. `racy_declared`
// marks the racy one on the variant itself.
std::vector<SumFamily::Variant> sums(const std::shared_ptr<Launches>& launches,
                                     bool racy_declared = false) {
  auto shifting = [launches, runs = std::make_shared<std::size_t>(0)](const std::vector<float>* x,
                                                                      float* out) {
    ++launches->racy;
    float total = 0;
    if ((*runs)++ % 2) {
      for (auto v = x->rbegin(); v != x->rend(); ++v) total += *v;
    } else {
      for (float v : *x) total += v;
    }
    *out = total;
  };
  auto in_order = [launches](const std::vector<float>* x, float* out) {
    ++launches->in_order;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    float total = 0;
    for (float v : *x) total += v;
    *out = total;
  };
  return {{make_config({{"ATOMIC", 1}, {"BLOCK", 1}}, 1, 1), shifting, racy_declared},
          {make_config({{"BLOCK", 8}}, 4, 2), in_order}};
}

SumFamily::Hooks declared_output() {
  SumFamily::Hooks hooks;
  hooks.outputs = [](const std::vector<float>*, float* out) {
    return std::vector<NamedBuffer>{{"out", {out, sizeof *out}}};
  };
  return hooks;
}

// In order the 1 is lost next to 1e8 (sum 0); in reverse it survives (1).
const std::vector<float> kValues{1.0f, 1e8f, -1e8f};

struct Run {
  Notices notices;
  Runtime runtime{0, notices};
  HostBackend backend;
  Launcher launcher{backend, runtime, TuningOptions{1, 3}};

  explicit Run(const Policy& policy) { runtime.install(policy); }
};

Policy pinned(std::vector<std::string> table_path = {}) {
  Policy p;
  p.mode = Mode::pinned;
  p.table_path = std::move(table_path);
  return p;
}

// One call of a fresh "process" with this policy; the sum it left.
float one_call(const Policy& policy, const std::shared_ptr<Launches>& launches, std::int64_t n,
               bool racy_declared = false) {
  Run run(policy);
  SumFamily sum(run.launcher, {"t.ops", "sum"}, {"N"}, sums(launches, racy_declared),
                declared_output());
  float out = -1;
  sum({n}, {"f32"}, &kValues, &out);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pinned_bits)

BOOST_AUTO_TEST_CASE(without_a_table_the_first_call_names_the_racy_cheapest_and_keeps_it) {
  auto launches = std::make_shared<Launches>();
  CapturedLog log;
  one_call(pinned(), launches, 3);
  // The cheapest fallback says what it has not seen, and never "deterministic".
  BOOST_TEST(log.count("is not known to repeat its bits") == 1u);
  BOOST_TEST(log.count("which is deterministic") == 0u);
  // The check ran the pinned config twice more and named kernel, key, config and the fix.
  BOOST_TEST(log.count("pinned config " + kRacy +
                       " of kernel 't.ops.sum' [N=3|f32] gave "
                       "different bits in two runs") == 1u);
  BOOST_TEST(log.count("TUNELOCK_NONDETERMINISTIC='t.ops.sum@" + kRacy + "'") == 1u);
  // The choice stands: a rank's own observation must not split the ranks.
  BOOST_TEST(launches->racy == 3);
  BOOST_TEST(launches->in_order == 0);
}

BOOST_AUTO_TEST_CASE(strict_verification_makes_changed_bits_an_error) {
  Policy p = pinned();
  p.verify_strict = true;
  auto launches = std::make_shared<Launches>();
  BOOST_CHECK_EXCEPTION(one_call(p, launches, 3), Error, [](const Error& e) {
    return std::string(e.what()).find("gave different bits") != std::string::npos;
  });
}

BOOST_AUTO_TEST_CASE(check_bits_off_launches_once_and_a_repeating_config_passes_quietly) {
  Policy off = pinned();
  off.check_bits = false;
  auto launches = std::make_shared<Launches>();
  CapturedLog log;
  one_call(off, launches, 3);
  BOOST_TEST(launches->racy == 1);
  BOOST_TEST(log.count("different bits") == 0u);

  // Declared racy: the rules pick the in-order variant; its check passes.
  auto declared = std::make_shared<Launches>();
  one_call(pinned(), declared, 3, /*racy_declared=*/true);
  BOOST_TEST(declared->racy == 0);
  BOOST_TEST(declared->in_order == 3);  // two check runs and the real launch
  BOOST_TEST(log.count("different bits") == 0u);
  BOOST_TEST(log.count("1 config(s) known to be nondeterministic skipped") == 1u);
}

BOOST_AUTO_TEST_CASE(a_family_with_nothing_declared_says_its_bits_are_unchecked) {
  Run run(pinned());
  auto launches = std::make_shared<Launches>();
  SumFamily sum(run.launcher, {"t.ops", "sum"}, {"N"}, sums(launches));
  CapturedLog log;
  float out = 0;
  sum({std::int64_t{3}}, {"f32"}, &kValues, &out);
  sum({std::int64_t{4}}, {"f32"}, &kValues, &out);
  BOOST_TEST(log.count("kernel 't.ops.sum' declares no output buffers") == 1u);
  BOOST_TEST(launches->racy == 2);  // nothing to compare: nothing run twice
}

BOOST_AUTO_TEST_CASE(a_policy_declaration_is_skipped_on_every_key) {
  Policy p = pinned();
  p.nondeterministic = {{"sum", kRacy}};  // the bare name matches too
  auto launches = std::make_shared<Launches>();
  for (std::int64_t n : {3, 4, 5}) BOOST_TEST(one_call(p, launches, n) == 0.0f);
  BOOST_TEST(launches->racy == 0);
}

BOOST_AUTO_TEST_CASE(record_merge_then_pinned_repeats_bits_on_recorded_and_unseen_keys) {
  TempDir dir;
  Policy record;
  record.mode = Mode::record;
  record.record_path = (dir.path() / "rec").string();
  {
    auto launches = std::make_shared<Launches>();
    Run run(record);
    SumFamily sum(run.launcher, {"t.ops", "sum"}, {"N"}, sums(launches), declared_output());
    float out = 0;
    sum({std::int64_t{3}}, {"f32"}, &kValues, &out);
    run.runtime.flush();
  }
  const MergeResult merged =
      merge_records(load_record_files({dir.path() / "rec.rank0.json"}), "", "");
  BOOST_TEST(signature(merged.table->entry("t.ops.sum", "N=3|f32")->config) == kInOrder);
  const auto flagged = merged.table->nondeterministic("t.ops.sum");
  BOOST_TEST((std::vector<std::string>(flagged.begin(), flagged.end()) ==
              std::vector<std::string>{kRacy}));
  std::filesystem::create_directories(dir.path() / "tables");
  write_file_atomically(dir.path() / "tables" / "host.json", table_to_json(*merged.table));

  // Three fresh pinned "processes", on the recorded key and on two it never saw.
  const Policy with_table = pinned({(dir.path() / "tables").string()});
  auto launches = std::make_shared<Launches>();
  for (std::int64_t n : {3, 4, 7}) {
    std::set<float> sums_seen;
    for (int process = 0; process < 3; ++process)
      sums_seen.insert(one_call(with_table, launches, n));
    BOOST_TEST(sums_seen.size() == 1u);
  }
  BOOST_TEST(launches->racy == 0);  // never launched, not even by a check
}

BOOST_AUTO_TEST_SUITE_END()
