// Batch invariance on a host family shaped like a GEMM: rows of C depend
// on rows of A only, and configs differ as GPU tilings do. Variants 0 and 1
// add each dot product in order (the same bits; 0 fast at small M, 1 at
// large M); 2 splits K in two (other bits, slow); 3 splits K by M, as a
// split-K heuristic does (4 ways below M = 8, else none: the fastest, and
// its rows change with the batch); 4 adds its split partial sums in an
// order that moves from run to run (a float atomic's race).
// Record under TUNELOCK_BATCH_INVARIANT -> merge -> pinned: rows equal at
// every size; a plain record's table pins the batch-variant config and the
// same rows differ. Sleeps set the speeds, so the clock's picks are sure.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <tuple>

#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/tables/table_invariance.hpp"
#include "tunelock/tables/table_json.hpp"
#include "tunelock/verify/verify.hpp"

#include <nlohmann/json.hpp>

using namespace tunelock;
using namespace tunelock::launcher;
using namespace tunelock::testing;

namespace {

using RowsFamily = KernelFamily<const float*, const float*, float*, int, int, int>;

constexpr int kK = 64, kN = 4, kRows = 32;

// C[i][j] = sum over K of A[i][k] B[k][j], K in `splits` chunks added in
// order (or, with `rotate`, starting from a chunk that moves every run).
void dot_rows(const float* a, const float* b, float* c, int m, int n, int k, int splits,
              bool rotate) {
  static std::atomic<int> turn{0};
  const int start = rotate ? turn++ % splits : 0;
  const int chunk = (k + splits - 1) / splits;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float total = 0;
      for (int s = 0; s < splits; ++s) {
        const int part = (start + s) % splits;
        float partial = 0;
        for (int kk = part * chunk; kk < std::min(k, (part + 1) * chunk); ++kk)
          partial += a[i * k + kk] * b[kk * n + j];
        total += partial;
      }
      c[i * n + j] = total;
    }
}

void pause_ms(int ms) {
  if (ms) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::vector<RowsFamily::Variant> variants() {
  return {
      {make_config({{"BLOCK_M", 16}, {"SPLIT_K", 1}}, 4, 2),
       [](const float* a, const float* b, float* c, int m, int n, int k) {
         pause_ms(m < 16 ? 1 : 4);
         dot_rows(a, b, c, m, n, k, 1, false);
       }},
      {make_config({{"BLOCK_M", 64}, {"SPLIT_K", 1}}, 4, 2),
       [](const float* a, const float* b, float* c, int m, int n, int k) {
         pause_ms(m < 16 ? 4 : 1);
         dot_rows(a, b, c, m, n, k, 1, false);
       }},
      {make_config({{"BLOCK_M", 16}, {"SPLIT_K", 2}}, 4, 2),
       [](const float* a, const float* b, float* c, int m, int n, int k) {
         pause_ms(8);
         dot_rows(a, b, c, m, n, k, 2, false);
       }},
      {make_config({{"BLOCK_M", 16}, {"SPLIT_K", 0}}, 4, 2),  // 0: split by M
       [](const float* a, const float* b, float* c, int m, int n, int k) {
         dot_rows(a, b, c, m, n, k, m < 8 ? 4 : 1, false);
       }},
      {make_config({{"BLOCK_M", 16}, {"SPLIT_K", 4}, {"ATOMIC", 1}}, 4, 2),
       [](const float* a, const float* b, float* c, int m, int n, int k) {
         pause_ms(2);
         dot_rows(a, b, c, m, n, k, 4, true);
       }},
  };
}

RowsFamily::Hooks hooks() {
  RowsFamily::Hooks h;
  h.outputs = [](const float*, const float*, float* c, int m, int n, int) {
    return std::vector<NamedBuffer>{{"C", {c, static_cast<std::size_t>(m) * n * sizeof(float)}}};
  };
  h.batch_dim = "M";
  h.batch_rows = [](const float*, const float*, float*, int m, int, int) {
    return std::int64_t{m};
  };
  h.first_rows = [](std::int64_t rows, const float* a, const float* b, float* c, int, int n,
                    int k) {
    return std::tuple<const float*, const float*, float*, int, int, int>(
        a, b, c, static_cast<int>(rows), n, k);
  };
  h.row_outputs = [](std::int64_t rows, const float*, const float*, float* c, int, int n, int) {
    return std::vector<NamedBuffer>{{"C", {c, static_cast<std::size_t>(rows) * n * sizeof(float)}}};
  };
  return h;
}

// Seeded values of both signs and many exponents: different summation
// orders give different bits.
std::vector<float> values(std::size_t count, std::uint64_t seed) {
  std::vector<float> out(count);
  for (float& v : out) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v = std::ldexp((seed >> 63) ? -1.0f : 1.0f, static_cast<int>((seed >> 33) % 24) - 12) *
        (1.0f + static_cast<float>((seed >> 40) % 1000) / 1000.0f);
  }
  return out;
}

const std::vector<std::int64_t> kSizes{1, 2, 4, 8, 16, 32};

struct Run {
  Notices notices;
  Runtime runtime;
  HostBackend backend;
  Launcher launcher{backend, runtime, TuningOptions{1, 3}};
  RowsFamily rows;
  const std::vector<float> a = values(static_cast<std::size_t>(kRows) * kK, 1);
  const std::vector<float> b = values(static_cast<std::size_t>(kK) * kN, 2);

  explicit Run(const Policy& policy, int rank = 0)
      : runtime(rank, notices),
        rows((runtime.install(policy), launcher), {"t.ops", "rows_mm"}, {"M", "N", "K"}, variants(),
             hooks()) {}

  // C of the first m rows of A.
  std::vector<float> call(std::int64_t m) {
    std::vector<float> c(static_cast<std::size_t>(m) * kN, 0.0f);
    rows({m, kN, kK}, {"f32", "f32"}, a.data(), b.data(), c.data(), static_cast<int>(m), kN, kK);
    return c;
  }

  // How many of the first m rows differ from the same rows of the kRows call.
  std::size_t rows_differing_from_full(std::int64_t m) {
    const std::vector<float> full = call(kRows), part = call(m);
    std::size_t differ = 0;
    for (std::int64_t i = 0; i < m; ++i)
      if (!std::equal(part.begin() + i * kN, part.begin() + (i + 1) * kN, full.begin() + i * kN))
        ++differ;
    return differ;
  }
};

std::filesystem::path record_every_size(const TempDir& dir, bool batch_invariant,
                                        const std::string& name) {
  Policy record;
  record.mode = Mode::record;
  record.record_path = (dir.path() / name).string();
  record.batch_invariant = batch_invariant;
  {
    Run run(record);
    for (std::int64_t m : kSizes) run.call(m);
    run.runtime.flush();
  }
  const MergeResult merged =
      merge_records(load_record_files({dir.path() / (name + ".rank0.json")}), "", "");
  const auto tables = dir.path() / (name + "-tables");
  std::filesystem::create_directories(tables);
  write_file_atomically(tables / "host.json", table_to_json(*merged.table));
  return tables;
}

Policy pinned(const std::filesystem::path& tables) {
  Policy p;
  p.mode = Mode::pinned;
  p.table_path = {tables.string()};
  p.on_miss = OnMiss::error;
  p.batch_invariant = true;
  return p;
}

std::string pinned_at(const Table& table, std::int64_t m) {
  return signature(
      table.entry("t.ops.rows_mm", "M=" + std::to_string(m) + "|N=4|K=64|f32|f32")->config);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_invariance)

BOOST_AUTO_TEST_CASE(record_merge_pinned_gives_every_row_the_same_bits_at_every_size) {
  TempDir dir;
  const auto tables = record_every_size(dir, true, "rec");
  const auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  const KernelInvariance& invariance = *table->invariance("t.ops.rows_mm");
  BOOST_TEST(invariance.dim == "M");
  // The split-by-M config is named batch-variant; the racy one is flagged
  // (its rows move too), and neither is in a class.
  const auto& variant = invariance.variant;
  BOOST_TEST((std::find(variant.begin(), variant.end(), "BLOCK_M=16,SPLIT_K=0;warps=4;stages=2") !=
              variant.end()));
  BOOST_TEST(table->nondeterministic("t.ops.rows_mm").size() == 1u);
  const InvariantGroup& group = invariance.groups.at("N=4|K=64|f32|f32");
  BOOST_TEST(
      group.class_configs == (std::vector<std::string>{"BLOCK_M=16,SPLIT_K=1;warps=4;stages=2",
                                                       "BLOCK_M=64,SPLIT_K=1;warps=4;stages=2"}),
      boost::test_tools::per_element());
  BOOST_TEST(group.recorded == kSizes, boost::test_tools::per_element());
  BOOST_TEST(group.proven == kSizes, boost::test_tools::per_element());
  // Tuned inside the class: the fast member at each size.
  for (std::int64_t m : {1, 2, 4, 8})
    BOOST_TEST(pinned_at(*table, m) == "BLOCK_M=16,SPLIT_K=1;warps=4;stages=2");
  for (std::int64_t m : {16, 32})
    BOOST_TEST(pinned_at(*table, m) == "BLOCK_M=64,SPLIT_K=1;warps=4;stages=2");
  BOOST_TEST(invariance_passes(invariance_report(*table)));

  Run run(pinned(tables));
  for (std::int64_t m : kSizes) BOOST_TEST(run.rows_differing_from_full(m) == 0u);
  // A size never recorded takes the class config of the nearest recorded.
  BOOST_TEST(run.rows_differing_from_full(3) == 0u);
  BOOST_TEST(run.rows_differing_from_full(24) == 0u);
}

BOOST_AUTO_TEST_CASE(a_plain_record_pins_the_variant_config_and_fails_the_gate) {
  TempDir dir;
  const auto tables = record_every_size(dir, false, "plain");
  const auto table = table_from_json(read_file(tables / "host.json"), "host.json");
  BOOST_TEST(!table->invariance("t.ops.rows_mm"));
  // The clock picks the fastest deterministic config: split by M.
  for (std::int64_t m : kSizes)
    BOOST_TEST(pinned_at(*table, m) == "BLOCK_M=16,SPLIT_K=0;warps=4;stages=2");
  const auto reports = invariance_report(*table);
  BOOST_TEST(!invariance_passes(reports));
  BOOST_TEST(invariance_report_text(reports).find("t.ops.rows_mm: unproven") == 0);
  Policy plain = pinned(tables);
  plain.batch_invariant = false;
  Run run(plain);
  std::size_t differing = 0;
  for (std::int64_t m : kSizes) differing += run.rows_differing_from_full(m);
  BOOST_TEST(differing == 1u + 2u + 4u);  // every row below M = 8
}

BOOST_AUTO_TEST_CASE(pinned_checks_row_zero_once_and_strict_refuses_a_variant_entry) {
  TempDir dir;
  const auto tables = record_every_size(dir, false, "plain");
  Policy strict = pinned(tables);
  strict.verify_strict = true;
  Run run(strict);
  // At M = 32 the split-by-M config adds in order, and alone (M = 1) in 4.
  BOOST_CHECK_EXCEPTION(run.call(32), Error, [](const Error& e) {
    return std::string(e.what()).find(
               "row 0 alone gave other bits than row 0 inside this call's "
               "32 rows (M) under BLOCK_M=16,SPLIT_K=0") != std::string::npos;
  });
}

BOOST_AUTO_TEST_CASE(an_invariant_kernel_never_falls_back_outside_its_class) {
  TempDir dir;
  const auto tables = record_every_size(dir, true, "rec");
  Notices notices;
  Runtime runtime(0, notices);
  runtime.install(pinned(tables));
  HostBackend backend;
  Launcher launcher(backend, runtime, TuningOptions{1, 3});
  std::vector<RowsFamily::Variant> others = variants();
  others.erase(others.begin(), others.begin() + 2);  // the class's configs gone
  RowsFamily rows(launcher, {"t.ops", "rows_mm"}, {"M", "N", "K"}, std::move(others), hooks());
  std::vector<float> a(static_cast<std::size_t>(3) * kK, 1.0f), b(kK * kN, 1.0f), c(3 * kN);
  BOOST_CHECK_EXCEPTION(rows({3, kN, kK}, {"f32", "f32"}, a.data(), b.data(), c.data(), 3, kN, kK),
                        Error, [](const Error& e) {
                          return std::string(e.what()).find(
                                     "none of the 3 live candidates is in its invariance "
                                     "class") != std::string::npos;
                        });
}

BOOST_AUTO_TEST_CASE(ranks_at_other_sizes_agree_by_class_and_a_table_of_another_class_is_named) {
  TempDir dir;
  const auto tables = record_every_size(dir, true, "rec");
  // Rank 0 at M = 2 and rank 1 at M = 16 pin different members of one
  // class and share no key: the class entry is what they agree on.
  Run rank0(pinned(tables), 0), rank1(pinned(tables), 1);
  rank0.call(2);
  rank1.call(16);
  const std::string class_key = "class|t.ops.rows_mm|host|M=*|N=4|K=64|f32|f32";
  const ChoiceLogFile log0{0, rank0.runtime.choice_log().snapshot(), {}};
  const ChoiceLogFile log1{1, rank1.runtime.choice_log().snapshot(), {}};
  BOOST_TEST(log0.entries.size() == 2u);
  BOOST_TEST(log0.entries.count(class_key) == 1u);
  BOOST_TEST(log0.entries.at(class_key) == log1.entries.at(class_key));
  const std::vector<NamedLog> same_class{{"rank0", &log0}, {"rank1", &log1}};
  const ChoiceLogCheck agreed = check_choice_logs(same_class);
  BOOST_TEST(agreed.result.agreed);
  BOOST_TEST(agreed.result.compared == 4u);

  // Rank 1 on a table whose class is the split-K one (its rows agree too,
  // in other bits): at another size, still named.
  nlohmann::json table = nlohmann::json::parse(read_file(tables / "host.json"));
  const std::string split = "BLOCK_M=16,SPLIT_K=2;warps=4;stages=2";
  for (auto& [key, entry] : table["kernels"]["t.ops.rows_mm"].items())
    entry = {{"kwargs", {{"BLOCK_M", 16}, {"SPLIT_K", 2}}}, {"num_warps", 4}, {"num_stages", 2}};
  table["invariance"]["t.ops.rows_mm"]["groups"]["N=4|K=64|f32|f32"]["class"] = {split};
  const auto other_tables = dir.path() / "other-tables";
  std::filesystem::create_directories(other_tables);
  write_file_atomically(other_tables / "host.json", table.dump());
  Run other(pinned(other_tables), 1);
  other.call(16);
  const ChoiceLogFile other_log{1, other.runtime.choice_log().snapshot(), {}};
  const std::vector<NamedLog> other_class{{"rank0", &log0}, {"rank1", &other_log}};
  const ChoiceLogCheck conflict = check_choice_logs(other_class);
  BOOST_TEST(!conflict.result.agreed);
  BOOST_REQUIRE(conflict.result.conflicts.size() == 1u);
  const std::string report = conflict_report(conflict.result.conflicts);
  BOOST_TEST_MESSAGE(report);
  BOOST_TEST(report.find(class_key + ": 'class{BLOCK_M=16,SPLIT_K=1") != std::string::npos);
  BOOST_TEST(report.find("'class{" + split + "};pinned' on rank 1") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
