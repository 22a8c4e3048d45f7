// One run's choice logs under a table (what switching to pinned would
// change), two runs compared, and bare kernel names in a manifest.
#include <boost/test/unit_test.hpp>

#include "tunelock/base/error.hpp"
#include "tunelock/decision/run_preview.hpp"
#include "tunelock/logs/run_compare.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;

namespace {

const char* kManifest = R"({"kernels": {
  "pkg.ops.mm": {"key": ["M"], "configs": [
    {"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 3},
    {"kwargs": {"BLOCK_M": 32}, "num_warps": 2, "num_stages": 2},
    {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}]},
  "other.mm": {"configs": [{"kwargs": {"BLOCK_M": 16}, "num_warps": 1, "num_stages": 1}]},
  "pkg.ops.norm": {"configs": [{"kwargs": {"BLOCK": 8}, "num_warps": 1, "num_stages": 1}]}}})";

// M=1 exact, "*" for the bare name, nothing for norm.
const char* kTable = R"({"arch": "sm90", "kernels": {
  "pkg.ops.mm": {"M=1": {"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 3}},
  "mm": {"*": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}}}})";

const std::string kBig = "BLOCK_M=128;warps=8;stages=3";
const std::string kMid = "BLOCK_M=64;warps=4;stages=3";
const std::string kSmall = "BLOCK_M=32;warps=2;stages=2";

ChoiceLogFile log_of(int rank, std::map<std::string, std::string> entries) {
  return ChoiceLogFile{rank, std::move(entries), ""};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_preview)

BOOST_AUTO_TEST_CASE(every_logged_key_gets_the_pinned_choice_and_its_reason) {
  const CandidateManifest manifest = candidates_from_json(kManifest, "m.json");
  const auto table = table_from_json(kTable, "t.json");
  const std::vector<ChoiceLogFile> logs{
      log_of(0, {{"sm90|pkg.ops.mm|M=1", kBig + ";timed"},
                 {"sm90|pkg.ops.mm|M=2", kSmall + ";timed"},
                 {"sm90|pkg.ops.norm|N=1", "BLOCK=8;warps=1;stages=1;timed"},
                 {"sm90|gone.kernel|M=1", kBig + ";timed"}}),
      log_of(1,
             {{"sm90|pkg.ops.mm|M=1", kMid + ";timed"}, {"sm90|pkg.ops.mm|M=2", kMid + ";timed"}})};
  const RunPreview preview = preview_run(logs, {table.get(), &manifest, {}});
  BOOST_TEST_REQUIRE(preview.keys.size() == 4u);
  const PreviewedKey& exact = preview.keys[1];  // sorted: gone.kernel first
  BOOST_TEST(exact.key == "M=1");
  BOOST_TEST(exact.pinned == kBig);
  BOOST_TEST(exact.reason == "table");
  BOOST_TEST(exact.changes);  // rank 1 ran the mid config
  BOOST_TEST((exact.ran.at(kMid) == std::vector<int>{1}));
  const PreviewedKey& wildcard = preview.keys[2];
  BOOST_TEST(wildcard.pinned == kMid);
  BOOST_TEST(wildcard.reason == "table*");
  BOOST_TEST(!preview.keys[3].changes);  // norm: the cheapest is what ran
  BOOST_TEST(preview.keys[3].reason == "min_cost");
  BOOST_TEST(preview.keys[0].problem.find("no kernel 'gone.kernel'") != std::string::npos);
  const RunPreviewSummary& s = preview.summary;
  BOOST_TEST(s.keys == 4u);
  BOOST_TEST(s.table == 1u);
  BOOST_TEST(s.table_wildcard == 1u);
  BOOST_TEST(s.min_cost == 1u);
  BOOST_TEST(s.undecided == 1u);
  BOOST_TEST(s.changes == 2u);
  // norm has one candidate: nothing to tune, so no "no tuned config ... may be slower".
  BOOST_TEST(preview.warnings.empty());
  const std::string report = run_preview_report(preview, false);
  BOOST_TEST(report.find("2 choice(s) would change") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_table_of_another_arch_is_not_used_and_block_sizes_apply) {
  const CandidateManifest manifest = candidates_from_json(kManifest, "m.json");
  const auto table = table_from_json(kTable, "t.json");
  const std::vector<ChoiceLogFile> logs{log_of(0, {{"sm100|pkg.ops.mm|M=1", kBig + ";pinned"}})};
  const RunPreview preview = preview_run(logs, {table.get(), &manifest, {{"BLOCK_M", 64}}});
  BOOST_TEST(preview.keys[0].reason == "block_sizes");
  BOOST_TEST(preview.keys[0].pinned == kMid);
}

BOOST_AUTO_TEST_CASE(bad_logs_are_clear_errors) {
  const CandidateManifest manifest = candidates_from_json(kManifest, "m.json");
  const std::vector<ChoiceLogFile> twice{log_of(0, {}), log_of(0, {})};
  BOOST_CHECK_EXCEPTION(preview_run(twice, {nullptr, &manifest, {}}), Error, [](const Error& e) {
    return std::string(e.what()).find("rank 0 appears in two logs of one run") != std::string::npos;
  });
  const std::vector<ChoiceLogFile> malformed{log_of(0, {{"no-bars", "x;timed"}})};
  BOOST_CHECK_EXCEPTION(
      preview_run(malformed, {nullptr, &manifest, {}}), Error, [](const Error& e) {
        return std::string(e.what()).find("'no-bars' is not arch|kernel|key") != std::string::npos;
      });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(run_compare)

BOOST_AUTO_TEST_CASE(runs_compare_by_signature_whatever_their_ranks_and_origin) {
  const std::vector<ChoiceLogFile> a{log_of(0, {{"k1", kBig + ";timed"}, {"k2", kMid + ";timed"}}),
                                     log_of(1, {{"k1", kBig + ";timed"}})};
  const std::vector<ChoiceLogFile> b{
      log_of(0, {{"k1", kBig + ";pinned"}, {"k2", kBig + ";pinned"}}),
      log_of(1, {{"k3", kBig + ";pinned"}})};
  const RunComparison c = compare_runs(a, b);
  BOOST_TEST(c.same == 1u);  // k1: timed and pinned ran the same config
  BOOST_TEST_REQUIRE(c.differences.size() == 2u);
  BOOST_TEST(c.differences[0].entry == "k2");
  BOOST_TEST((c.differences[0].a == std::set<std::string>{kMid}));
  BOOST_TEST((c.differences[0].b == std::set<std::string>{kBig}));
  BOOST_TEST(c.differences[1].a.empty());  // k3: only run B saw it
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(manifest_names)

BOOST_AUTO_TEST_CASE(a_bare_name_unique_in_the_manifest_finds_its_kernel) {
  const CandidateManifest manifest = candidates_from_json(kManifest, "m.json");
  BOOST_TEST(manifest.resolve("norm", "m.json") == "pkg.ops.norm");
  BOOST_TEST(manifest.find("norm", "m.json").configs.size() == 1u);
  BOOST_TEST(manifest.resolve("pkg.ops.mm", "m.json") == "pkg.ops.mm");
}

BOOST_AUTO_TEST_CASE(an_ambiguous_or_unknown_name_is_a_clear_error) {
  const CandidateManifest manifest = candidates_from_json(kManifest, "m.json");
  BOOST_CHECK_EXCEPTION(manifest.resolve("mm", "m.json"), Error, [](const Error& e) {
    return std::string(e.what()) ==
           "m.json: kernel 'mm' is ambiguous; the manifest has other.mm, pkg.ops.mm (type the "
           "qualified name)";
  });
  BOOST_CHECK_EXCEPTION(manifest.resolve("nope", "m.json"), Error, [](const Error& e) {
    return std::string(e.what()).starts_with("m.json: no kernel 'nope'; the manifest has: ");
  });
  BOOST_CHECK_EXCEPTION(manifest.resolve("ops.norm", "m.json"), Error, [](const Error& e) {
    return std::string(e.what()).starts_with("m.json: no kernel 'ops.norm'");
  });
}

BOOST_AUTO_TEST_SUITE_END()
