// The launcher's call path on the host backend: what is timed, what is
// pinned, what is logged and recorded, hooks, failures, caching, threads.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <random>
#include <thread>

#include "captured_log.hpp"
#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/launcher/detail/choice_cache.hpp"
#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/records/record_file.hpp"

using namespace tunelock;
using namespace tunelock::launcher;
using tunelock::testing::CapturedLog;
using tunelock::testing::TempDir;

namespace {

// The host backend, counting how often it was asked to time something.
// It can also pretend to be a GPU backend: two arch slots, a timing stream
// and a graph capture under way.
class CountingBackend final : public Backend {
 public:
  std::size_t arch_slot() const override { return slot; }
  std::string arch(std::size_t s) const override { return s == 0 ? host.arch(s) : "sm90"; }
  void* timing_stream() override { return private_stream; }
  bool capturing(void* stream) const override { return stream == captured_stream; }
  Provenance device() const override { return host.device(); }
  std::vector<double> time(const std::function<void()>& before, const std::function<void()>& launch,
                           const std::function<void()>& after, int warmup, int repeats) override {
    ++timings;
    return host.time(before, launch, after, warmup, repeats);
  }
  void zero(BufferRef b) override { host.zero(b); }
  std::vector<std::byte> save(BufferRef b) override { return host.save(b); }
  void restore(BufferRef b, const std::vector<std::byte>& s) override { host.restore(b, s); }

  std::atomic<int> timings{0};
  HostBackend host;
  std::size_t slot = 0;
  void* private_stream = nullptr;
  void* captured_stream = nullptr;
};

using AddFamily = KernelFamily<int*>;

// Three variants that add 1 to *out; the cheapest is BLOCK=16, the
// fastest (by far) is BLOCK=64: the others sleep.
std::vector<AddFamily::Variant> adders(std::atomic<int>* launches = nullptr) {
  auto slow = [launches](int* out) {
    if (launches) ++*launches;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    *out += 1;
  };
  auto fast = [launches](int* out) {
    if (launches) ++*launches;
    *out += 1;
  };
  return {{make_config({{"BLOCK", 16}}, 4, 2), slow},
          {make_config({{"BLOCK", 64}}, 4, 2), fast},
          {make_config({{"BLOCK", 32}}, 4, 2), slow}};
}

// The adders write *out: timing runs must put it back.
AddFamily::Hooks restore_out() {
  AddFamily::Hooks hooks;
  hooks.restore = [](int* out) { return std::vector<NamedBuffer>{{"out", {out, sizeof *out}}}; };
  return hooks;
}

struct Setup {
  Notices notices;
  Runtime runtime{0, notices};
  CountingBackend backend;
  Launcher launcher{backend, runtime, TuningOptions{1, 3}};

  explicit Setup(const Policy& policy = {}) { runtime.install(policy); }
};

Policy with_mode(Mode mode) {
  Policy p;
  p.mode = mode;
  if (mode == Mode::record)
    p.record_path = (std::filesystem::temp_directory_path() / "tunelock-unused-rec").string();
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pinned_calls)

BOOST_AUTO_TEST_CASE(pinned_never_times_and_logs_each_key_once) {
  Setup s(with_mode(Mode::pinned));
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders());
  int out = 0;
  for (int i = 0; i < 5; ++i) {
    add({std::int64_t{1}}, {"i32"}, &out);
    add({std::int64_t{2}}, {"i32"}, &out);
  }
  BOOST_TEST(s.backend.timings == 0);
  BOOST_TEST(out == 10);
  const auto log = s.runtime.choice_log().snapshot();
  BOOST_TEST(log.size() == 2u);
  BOOST_TEST(log.at("host|t.ops.add|N=1|i32") ==
             "BLOCK=16;warps=4;stages=2;pinned");  // the cheapest
}

BOOST_AUTO_TEST_CASE(pinned_uses_the_table_on_the_policy_path) {
  TempDir dir;
  dir.write(
      "host.json",
      R"({"arch": "host", "kernels": {"add": {"N=1|i32": {"kwargs": {"BLOCK": 32}, "num_warps": 4, "num_stages": 2}}}})");
  Policy p = with_mode(Mode::pinned);
  p.table_path = {dir.path().string()};
  Setup s(p);
  std::atomic<int> launches{0};
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders(&launches));
  int out = 0;
  add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(s.runtime.choice_log().snapshot().at("host|t.ops.add|N=1|i32") ==
             "BLOCK=32;warps=4;stages=2;pinned");
  BOOST_TEST(launches == 1);
}

BOOST_AUTO_TEST_CASE(chaos_picks_per_rank_without_timing) {
  Policy p = with_mode(Mode::pinned);
  p.chaos = true;
  Notices n0, n1;
  Runtime r0(0, n0), r1(1, n1);
  r0.install(p);
  r1.install(p);
  CountingBackend backend;
  Launcher l0(backend, r0), l1(backend, r1);
  AddFamily a0(l0, {"t.ops", "add"}, {"N"}, adders()), a1(l1, {"t.ops", "add"}, {"N"}, adders());
  int out = 0;
  a0({std::int64_t{1}}, {"i32"}, &out);
  a1({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(backend.timings == 0);
  BOOST_TEST(r0.choice_log().snapshot() != r1.choice_log().snapshot());
}

BOOST_AUTO_TEST_CASE(single_variant_family_logs_the_wildcard_key_once) {
  Setup s(with_mode(Mode::pinned));
  AddFamily one(s.launcher, {"t.ops", "one"}, {"N"}, {adders()[1]});
  int out = 0;
  for (std::int64_t n = 0; n < 4; ++n) one({n}, {"i32"}, &out);
  const auto log = s.runtime.choice_log().snapshot();
  BOOST_TEST(log.size() == 1u);
  BOOST_TEST(log.at("host|t.ops.one|*") == "BLOCK=64;warps=4;stages=2;pinned");
  BOOST_TEST(s.backend.timings == 0);
}

BOOST_AUTO_TEST_CASE(out_of_scope_and_invariant_families_are_timed_and_not_logged) {
  Policy p = with_mode(Mode::pinned);
  p.modules = {"other"};
  Setup scoped(p);
  AddFamily add(scoped.launcher, {"t.ops", "add"}, {"N"}, adders());
  int out = 0;
  add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(scoped.backend.timings == 3);  // one timing per candidate
  BOOST_TEST(scoped.runtime.choice_log().size() == 0u);

  Policy q = with_mode(Mode::pinned);
  q.config_invariant = {"t.ops.add"};
  Setup invariant(q);
  AddFamily add2(invariant.launcher, {"t.ops", "add"}, {"N"}, adders());
  add2({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(invariant.backend.timings == 3);
  BOOST_TEST(invariant.runtime.choice_log().size() == 0u);
}

BOOST_AUTO_TEST_CASE(enumerate_reports_each_family_once_with_its_state) {
  CapturedLog log;
  Policy p = with_mode(Mode::pinned);
  p.enumerate = true;
  p.modules = {"t.pinned"};
  Setup s(p);
  AddFamily pinned(s.launcher, {"t.pinned", "add"}, {"N"}, adders());
  AddFamily unpinned(s.launcher, {"t.other", "add"}, {"N"}, adders());
  int out = 0;
  for (std::int64_t n = 0; n < 3; ++n) {
    pinned({n}, {"i32"}, &out);
    unpinned({n}, {"i32"}, &out);
  }
  BOOST_TEST(log.count("PINNED t.pinned.add (3 variants)") == 1u);
  BOOST_TEST(log.count("UNPINNED t.other.add (3 variants)") == 1u);

  Policy r = with_mode(Mode::automatic);
  r.enumerate = true;
  Setup timed(r);
  AddFamily add(timed.launcher, {"t.timed", "add"}, {"N"}, adders());
  add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(log.count("TIMED t.timed.add (3 variants)") == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(timed_calls)

BOOST_AUTO_TEST_CASE(record_mode_times_picks_the_fastest_and_writes_both_files) {
  TempDir dir;
  Policy p;
  p.record_path = (dir.path() / "rec").string();
  Setup s(p);
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders(), restore_out());
  int out = 0;
  add({std::int64_t{7}}, {"i32"}, &out);
  BOOST_TEST(out == 1);  // timing runs did not leak into the result
  BOOST_TEST(s.backend.timings == 3);
  BOOST_TEST(s.runtime.choice_log().snapshot().at("host|t.ops.add|N=7|i32") ==
             "BLOCK=64;warps=4;stages=2;timed");
  s.launcher.flush();
  const auto record = nlohmann::json::parse(read_file(dir.path() / "rec.rank0.json"));
  BOOST_TEST(record["host"]["t.ops.add"]["N=7|i32"]["kwargs"]["BLOCK"] == 64);
  const auto timings = nlohmann::json::parse(read_file(dir.path() / "rec.rank0.timings.json"));
  const auto& list = timings["timings"]["host"]["t.ops.add"]["N=7|i32"];
  BOOST_TEST_REQUIRE(list.size() == 3u);
  for (const auto& candidate : list) BOOST_TEST(candidate["median_ms"].is_number());
  BOOST_TEST(list[0]["median_ms"].get<double>() > list[1]["median_ms"].get<double>());
  BOOST_TEST(timings["device"]["device_name"] == "host CPU");
  BOOST_TEST(!timings["device"]["recorded_at"].get<std::string>().empty());
}

BOOST_AUTO_TEST_CASE(plain_auto_mode_times_but_does_not_log) {
  Setup s;
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders());
  int out = 0;
  add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(s.backend.timings == 3);
  BOOST_TEST(s.runtime.choice_log().size() == 0u);
  Policy verify;
  verify.verify_every = 5;  // auto mode that observes
  s.runtime.install(verify);
  add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(s.runtime.choice_log().snapshot().at("host|t.ops.add|N=1|i32") ==
             "BLOCK=64;warps=4;stages=2;timed");
}

BOOST_AUTO_TEST_CASE(choices_are_cached_per_key_and_dropped_when_the_policy_changes) {
  Setup s;
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders());
  int out = 0;
  for (int i = 0; i < 3; ++i) add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(s.backend.timings == 3);     // tuned once
  add({std::int64_t{1}}, {"f32"}, &out);  // another dtype is another key
  add({std::int64_t{2}}, {"i32"}, &out);
  BOOST_TEST(s.backend.timings == 9);
  BOOST_TEST(add.core().cached_keys() == 3u);
  s.runtime.install(with_mode(Mode::pinned));
  add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(add.core().cached_keys() == 1u);
  BOOST_TEST(s.backend.timings == 9);  // pinned: no timing
}

BOOST_AUTO_TEST_CASE(a_failing_variant_is_timed_as_infinite_and_reported_once) {
  CapturedLog log;
  Setup s;
  auto variants = adders();
  variants[1].launch = [](int*) { throw std::runtime_error("out of shared memory"); };
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, variants, restore_out());
  int out = 0;
  add({std::int64_t{1}}, {"i32"}, &out);
  add({std::int64_t{2}}, {"i32"}, &out);
  BOOST_TEST(out == 2);
  BOOST_TEST(log.count("candidate 1 (BLOCK=64;warps=4;stages=2) of t.ops.add") == 1u);
  BOOST_TEST(log.count("out of shared memory; timed as infinite") == 1u);
}

BOOST_AUTO_TEST_CASE(all_variants_failing_is_a_clear_error) {
  Setup s;
  auto variants = adders();
  for (auto& v : variants) v.launch = [](int*) { throw std::runtime_error("no device"); };
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, variants);
  int out = 0;
  BOOST_CHECK_EXCEPTION(add({std::int64_t{1}}, {"i32"}, &out), Error, [](const Error& e) {
    return std::string(e.what()) ==
           "every candidate of t.ops.add [N=1|i32] failed to run (3 tried); last error: no device";
  });
}

BOOST_AUTO_TEST_CASE(bad_families_and_calls_are_errors) {
  Setup s;
  BOOST_CHECK_THROW(AddFamily(s.launcher, {"t", "none"}, {"N"}, {}), Error);
  BOOST_CHECK_THROW(AddFamily(s.launcher, {"t", "dup"}, {"N"}, {adders()[0], adders()[0]}), Error);
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders());
  int out = 0;
  BOOST_CHECK_EXCEPTION(
      add({std::int64_t{1}, std::int64_t{2}}, {"i32"}, &out), Error, [](const Error& e) {
        return std::string(e.what()).find("declares 1 key argument(s) but a call passed 2") !=
               std::string::npos;
      });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tuning_hooks)

BOOST_AUTO_TEST_CASE(reset_to_zero_leaves_an_accumulating_output_as_after_one_launch) {
  Setup s;
  using Accumulate = KernelFamily<std::vector<int>*>;
  auto add_one = [](std::vector<int>* v) {
    for (int& x : *v) x += 1;
  };
  Accumulate::Hooks hooks;
  hooks.reset_to_zero = [](std::vector<int>* v) {
    return std::vector<NamedBuffer>{{"out", {v->data(), v->size() * sizeof(int)}}};
  };
  Accumulate family(
      s.launcher, {"t.ops", "acc"}, {"N"},
      {{make_config({{"BLOCK", 1}}), add_one}, {make_config({{"BLOCK", 2}}), add_one}}, hooks);
  std::vector<int> out(8, 5);
  family({std::int64_t{8}}, {"i32"}, &out);
  BOOST_TEST(s.backend.timings == 2);
  BOOST_TEST((out == std::vector<int>(8, 6)));  // 5 + one launch, whatever tuning did
}

BOOST_AUTO_TEST_CASE(restore_puts_back_an_in_place_output_and_pre_hook_sees_each_config) {
  Setup s;
  using Scale = KernelFamily<std::vector<int>*>;
  auto twice = [](std::vector<int>* v) {
    for (int& x : *v) x *= 2;
  };
  std::vector<std::string> seen;
  Scale::Hooks hooks;
  hooks.restore = [](std::vector<int>* v) {
    return std::vector<NamedBuffer>{{"x", {v->data(), v->size() * sizeof(int)}}};
  };
  hooks.pre_hook = [&seen](const Config& c, std::vector<int>*) { seen.push_back(signature(c)); };
  Scale family(s.launcher, {"t.ops", "scale"}, {"N"},
               {{make_config({{"BLOCK", 1}}), twice}, {make_config({{"BLOCK", 2}}), twice}}, hooks);
  std::vector<int> x{1, 2, 3};
  family({std::int64_t{3}}, {"i32"}, &x);
  BOOST_TEST((x == std::vector<int>{2, 4, 6}));
  // warm-up 1 + repeats 3, per candidate, then the real launch.
  BOOST_TEST(seen.size() == 2u * 4 + 1);
  family({std::int64_t{3}}, {"i32"}, &x);
  BOOST_TEST((x == std::vector<int>{4, 8, 12}));
}

BOOST_AUTO_TEST_SUITE_END()

// The cache read on every launch: raw keys, the last-hit shortcut, clears.
BOOST_AUTO_TEST_SUITE(choice_cache)

std::string raw(std::initializer_list<KeyValue> values,
                std::initializer_list<std::string_view> dtypes = {}) {
  return std::string(
      RawKey({values.begin(), values.size()}, {dtypes.begin(), dtypes.size()}).bytes());
}

BOOST_AUTO_TEST_CASE(raw_keys_tell_apart_calls_that_differ_anywhere) {
  const std::string long_text(300, 'x');
  const std::vector<std::string> keys{raw({std::int64_t{1}}),
                                      raw({true}),
                                      raw({false}),
                                      raw({std::string_view("1")}),
                                      raw({}, {"f32"}),
                                      raw({std::string_view("f32")}),
                                      raw({}, {"ab", "c"}),
                                      raw({}, {"a", "bc"}),
                                      raw({}, {std::string_view(long_text).substr(0, 254)}),
                                      raw({}, {std::string_view(long_text).substr(0, 255)}),
                                      raw({}, {std::string_view(long_text).substr(0, 256)}),
                                      raw({}, {long_text}),
                                      raw({std::int64_t{1}, std::int64_t{2}}),
                                      raw({std::int64_t{2}, std::int64_t{1}})};
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      BOOST_TEST(keys[i] != keys[j], "keys " << i << " and " << j);
  BOOST_TEST(raw({}, {long_text}) == raw({}, {long_text}));  // a key on the heap is still the key
}

// A cache lookup as a launch does it: the call's values and dtypes.
std::size_t find(const ChoiceCache& cache, std::int64_t n) {
  const KeyValue values[] = {n};
  const std::string_view dtypes[] = {"f32"};
  return cache.find(values, dtypes);
}

BOOST_AUTO_TEST_CASE(a_stored_key_is_read_in_place_as_its_bytes_compare) {
  std::mt19937_64 random(11);
  const std::string text(300, 'q');
  auto random_call = [&](std::vector<KeyValue>& values, std::vector<std::string_view>& dtypes) {
    values.clear();
    dtypes.clear();
    for (std::size_t i = random() % 4; i > 0; --i) {
      switch (random() % 3) {
        case 0:
          values.emplace_back(static_cast<std::int64_t>(random() % 3));
          break;
        case 1:
          values.emplace_back(random() % 2 == 0);
          break;
        default:
          values.emplace_back(
              std::string_view(text).substr(0, random() % 3 ? random() % 3 : 250 + random() % 10));
      }
    }
    for (std::size_t i = random() % 3; i > 0; --i)
      dtypes.push_back(std::string_view(text).substr(0, random() % 3));
  };
  std::vector<KeyValue> a_values, b_values;
  std::vector<std::string_view> a_dtypes, b_dtypes;
  int equal = 0;
  for (int i = 0; i < 20000; ++i) {
    random_call(a_values, a_dtypes);
    random_call(b_values, b_dtypes);
    const RawKey a(a_values, a_dtypes), b(b_values, b_dtypes);
    BOOST_TEST(RawKey::same_key(a.bytes(), b_values, b_dtypes) == (a.bytes() == b.bytes()));
    BOOST_TEST(RawKey::same_key(a.bytes(), a_values, a_dtypes));
    equal += a.bytes() == b.bytes();
  }
  BOOST_TEST(equal > 100);  // equal keys were drawn too, not only different ones
}

BOOST_AUTO_TEST_CASE(keys_asked_in_turn_each_find_their_own_choice) {
  ChoiceCache cache;
  const std::string_view f32[] = {"f32"};
  for (std::int64_t n = 0; n < 100; ++n) {
    const KeyValue values[] = {n};
    cache.insert(values, f32, static_cast<std::size_t>(n % 7));
  }
  BOOST_TEST(cache.size() == 100u);
  // Threads asking different keys at once keep moving the last hit.
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2000; ++round) {
        const std::int64_t n = (round * 7 + t) % 100;
        if (find(cache, n) != static_cast<std::size_t>(n % 7)) ++wrong;
        if (find(cache, 1000 + t) != ChoiceCache::kNone) ++wrong;  // never inserted
      }
    });
  }
  for (auto& thread : threads) thread.join();
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(a_clear_forgets_the_last_hit_too) {
  ChoiceCache cache;
  const KeyValue values[] = {std::int64_t{42}};
  const std::string_view f32[] = {"f32"};
  cache.insert(values, f32, 2);
  BOOST_TEST(find(cache, 42) == 2u);
  BOOST_TEST(find(cache, 42) == 2u);  // now from the last hit
  cache.clear();
  BOOST_TEST(find(cache, 42) == ChoiceCache::kNone);
  cache.insert(values, f32, 1);
  BOOST_TEST(find(cache, 42) == 1u);
}

BOOST_AUTO_TEST_CASE(a_new_policy_is_not_answered_from_the_old_last_hit) {
  Setup s(with_mode(Mode::pinned));
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"},
                {{make_config({{"BLOCK", 16}}), [](int* ran) { *ran = 16; }},
                 {make_config({{"BLOCK", 32}}), [](int* ran) { *ran = 32; }}});
  int ran = 0;
  for (int i = 0; i < 3; ++i) add({std::int64_t{8}}, {"f32"}, &ran);
  BOOST_TEST(ran == 16);  // the cheapest, then twice from the cache
  Policy blocks = with_mode(Mode::pinned);
  blocks.block_sizes = {{"BLOCK", 32}};
  s.runtime.install(blocks);
  add({std::int64_t{8}}, {"f32"}, &ran);
  BOOST_TEST(ran == 32);
  add({std::int64_t{8}}, {"f32"}, &ran);
  BOOST_TEST(ran == 32);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(launcher_threads)

BOOST_AUTO_TEST_CASE(sixteen_threads_on_one_key_make_one_choice_logged_once) {
  for (Mode mode : {Mode::automatic, Mode::pinned}) {
    Policy p = with_mode(mode);
    p.verify_every = 1;  // observe in auto mode too
    Setup s(p);
    std::atomic<int> launches{0};
    AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders(&launches), restore_out());
    std::atomic<int> total{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 50; ++i) {
          int out = 0;
          add({std::int64_t{42}}, {"f32"}, &out);
          total += out;
        }
      });
    }
    for (auto& t : threads) t.join();
    BOOST_TEST(total == 16 * 50);
    BOOST_TEST(s.backend.timings == (mode == Mode::pinned ? 0 : 3));
    // Real launches plus, when timed, one tuning: 3 candidates x (1 warm-up + 3 repeats);
    // when pinned, one bits check of the pinned config (two runs), however many threads race.
    BOOST_TEST(launches == 16 * 50 + (mode == Mode::pinned ? 2 : 12));
    BOOST_TEST(s.runtime.choice_log().size() == 1u);
    BOOST_TEST(add.core().cached_keys() == 1u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(manifest)

BOOST_AUTO_TEST_CASE(registered_families_write_a_candidate_manifest_tools_read) {
  TempDir dir;
  Setup s;
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders());
  { AddFamily gone(s.launcher, {"t.ops", "gone"}, {"N"}, adders()); }
  s.launcher.write_manifest(dir.path() / "m.json");
  const auto manifest = nlohmann::json::parse(read_file(dir.path() / "m.json"));
  BOOST_TEST(manifest["kernels"].size() == 1u);
  BOOST_TEST(manifest["kernels"]["t.ops.add"]["key"] == nlohmann::json::parse(R"(["N"])"));
  BOOST_TEST(manifest["kernels"]["t.ops.add"]["configs"].size() == 3u);
  BOOST_TEST(manifest["kernels"]["t.ops.add"]["configs"][1] ==
             nlohmann::json::parse(R"({"kwargs": {"BLOCK": 64}, "num_warps": 4, "num_stages": 2,
                                "num_ctas": 1, "maxnreg": null, "ir_override": null})"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gpu_shaped_calls)

// Streams are opaque to the launcher: fake ones are enough to prove which
// stream each run got.
CUstream_st* fake_stream(std::uintptr_t n) { return reinterpret_cast<CUstream_st*>(n); }

using StreamFamily = KernelFamily<CUstream_st*, std::vector<CUstream_st*>*>;

std::vector<StreamFamily::Variant> stream_recorders() {
  auto variant = [](int delay_ms) {
    return [delay_ms](CUstream_st* stream, std::vector<CUstream_st*>* seen) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      seen->push_back(stream);
    };
  };
  return {{make_config({{"BLOCK", 16}}, 4, 2), variant(2)},
          {make_config({{"BLOCK", 64}}, 4, 2), variant(0)}};
}

BOOST_AUTO_TEST_CASE(timing_runs_use_the_backends_stream_and_the_real_call_the_callers) {
  Setup s(with_mode(Mode::automatic));
  s.backend.private_stream = fake_stream(0x100);
  StreamFamily family(s.launcher, {"t.gpu", "streams"}, {"N"}, stream_recorders());
  std::vector<CUstream_st*> seen;
  family({std::int64_t{1}}, {"f32"}, fake_stream(0x200), &seen);
  BOOST_TEST_REQUIRE(seen.size() ==
                     2u * (1 + 3) + 1);  // 2 configs x (warm-up + repeats), then the call
  for (std::size_t i = 0; i + 1 < seen.size(); ++i) BOOST_TEST(seen[i] == fake_stream(0x100));
  BOOST_TEST(seen.back() == fake_stream(0x200));
}

BOOST_AUTO_TEST_CASE(a_first_call_inside_a_capture_is_an_error_unless_pinned) {
  for (Mode mode : {Mode::automatic, Mode::record}) {
    TempDir dir;
    Setup s(with_mode(mode));
    if (mode == Mode::record) {
      Policy p = with_mode(mode);
      p.record_path = (dir.path() / "rec").string();
      s.runtime.install(p);
    }
    s.backend.captured_stream = fake_stream(0x300);
    StreamFamily family(s.launcher, {"t.gpu", "captured"}, {"N"}, stream_recorders());
    std::vector<CUstream_st*> seen;
    std::string message;
    try {
      family({std::int64_t{7}}, {"f32"}, fake_stream(0x300), &seen);
    } catch (const Error& e) {
      message = e.what();
    }
    BOOST_TEST_INFO("mode " << to_string(mode) << ": " << message);
    BOOST_TEST(message.find("kernel family 't.gpu.captured' [N=7|f32] on host") !=
               std::string::npos);
    BOOST_TEST(message.find("warm up (call it once for this key) before capturing") !=
               std::string::npos);
    BOOST_TEST(seen.empty());
    BOOST_TEST(s.backend.timings == 0);
    // Warmed up outside the capture, the same key is a cached launch inside it.
    family({std::int64_t{7}}, {"f32"}, fake_stream(0x400), &seen);
    seen.clear();
    family({std::int64_t{7}}, {"f32"}, fake_stream(0x300), &seen);
    BOOST_TEST(seen == std::vector<CUstream_st*>{fake_stream(0x300)});
  }
  Setup pinned(with_mode(Mode::pinned));
  pinned.backend.captured_stream = fake_stream(0x300);
  StreamFamily family(pinned.launcher, {"t.gpu", "captured"}, {"N"}, stream_recorders());
  std::vector<CUstream_st*> seen;
  family({std::int64_t{7}}, {"f32"}, fake_stream(0x300), &seen);
  BOOST_TEST(seen == std::vector<CUstream_st*>{fake_stream(0x300)});
  BOOST_TEST(pinned.backend.timings == 0);
}

BOOST_AUTO_TEST_CASE(each_arch_slot_keeps_its_own_choices_and_log_entries) {
  Setup s(with_mode(Mode::pinned));
  AddFamily add(s.launcher, {"t.ops", "add"}, {"N"}, adders());
  int out = 0;
  add({std::int64_t{1}}, {"i32"}, &out);
  s.backend.slot = 1;
  add({std::int64_t{1}}, {"i32"}, &out);
  add({std::int64_t{1}}, {"i32"}, &out);
  BOOST_TEST(add.core().cached_keys() == 2u);
  const auto log = s.runtime.choice_log().snapshot();
  BOOST_TEST(log.count("host|t.ops.add|N=1|i32") == 1u);
  BOOST_TEST(log.count("sm90|t.ops.add|N=1|i32") == 1u);
  BOOST_TEST(out == 3);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(determinism_audit)

using TotalFamily = KernelFamily<const std::vector<float>*, float*>;

// Two ways to add up floats: in order (repeats its bits), and in an order
// that changes every run (a stand-in for float atomics). The changing one
// is the fastest, so only the audit keeps it from winning.
std::vector<TotalFamily::Variant> totals() {
  auto in_order = [](const std::vector<float>* x, float* out) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    float total = 0;
    for (float v : *x) total += v;
    *out = total;
  };
  auto shifting = [runs = std::make_shared<std::size_t>(0)](const std::vector<float>* x,
                                                            float* out) {
    float total = 0;
    if ((*runs)++ % 2) {
      for (auto v = x->rbegin(); v != x->rend(); ++v) total += *v;
    } else {
      for (float v : *x) total += v;
    }
    *out = total;
  };
  return {{make_config({{"BLOCK", 1}}, 1, 1), in_order},
          {make_config({{"ATOMIC", 1}, {"BLOCK", 8}}, 4, 4), shifting}};
}

TotalFamily::Hooks total_outputs() {
  TotalFamily::Hooks hooks;
  hooks.outputs = [](const std::vector<float>*, float* out) {
    return std::vector<NamedBuffer>{{"out", {out, sizeof *out}}};
  };
  return hooks;
}

// In order the 1 is lost next to 1e8 (sum 0); in reverse it survives (sum 1).
std::vector<float> mixed_values() { return {1.0f, 1e8f, -1e8f}; }

BOOST_AUTO_TEST_CASE(record_mode_flags_a_config_whose_bits_change_and_never_picks_it) {
  TempDir dir;
  Policy p = with_mode(Mode::record);
  p.record_path = (dir.path() / "rec").string();
  const std::vector<float> x = mixed_values();
  {
    Setup s(p);
    TotalFamily total(s.launcher, {"t.ops", "total"}, {"N"}, totals(), total_outputs());
    CapturedLog log;
    float out = 0;
    total({std::int64_t{3}}, {"f32"}, &x, &out);
    // The engine's one wording, the same from the C++ launcher and Python.
    BOOST_TEST(log.count("config ATOMIC=1,BLOCK=8;warps=4;stages=4 of t.ops.total "
                         "[N=3|f32] gave different bits") == 1u);
    BOOST_TEST(s.runtime.choice_log().snapshot().at("host|t.ops.total|N=3|f32") ==
               "BLOCK=1;warps=1;stages=1;timed");
    s.runtime.flush();
  }
  const RecordFile record = load_record_file(dir.path() / "rec.rank0.json");
  const auto& candidates = record.timings.at({"host", "t.ops.total", "N=3|f32"});
  BOOST_TEST(!candidates[0].nondeterministic);
  BOOST_TEST(candidates[1].nondeterministic);
  BOOST_TEST(read_file(dir.path() / "rec.rank0.timings.json").find("\"nondeterministic\": true") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(auto_mode_does_not_audit_and_plain_timing_may_pick_the_changing_config) {
  Setup s(with_mode(Mode::automatic));
  TotalFamily total(s.launcher, {"t.ops", "total"}, {"N"}, totals(), total_outputs());
  CapturedLog log;
  const std::vector<float> x = mixed_values();
  float out = 0;
  total({std::int64_t{3}}, {"f32"}, &x, &out);
  BOOST_TEST(log.count("different bits") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
