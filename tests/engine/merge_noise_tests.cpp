// Which votes were noise: per key the tie set (winners within the ranks'
// own spread of the best) and the flip risk (ranks whose vote, dropped
// alone, would change the kept config), checked against hand counts.
#include <boost/test/unit_test.hpp>

#include "tunelock/base/error.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/merge_report.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;

namespace {

const Config kA = make_config({{"BLOCK_M", 64}}, 4, 3);
const Config kB = make_config({{"BLOCK_M", 128}}, 8, 3);

// One rank of run "r": its vote on `key` and its medians for A and B.
void vote(std::vector<RecordFile>& records, const std::string& key, std::size_t rank,
          const Config& winner, double a_ms, double b_ms) {
  if (records.size() <= rank) records.resize(rank + 1);
  RecordFile& r = records[rank];
  r.origin = "r.rank" + std::to_string(rank) + ".json";
  r.run = "r";
  r.rank = static_cast<int>(rank);
  r.has_timings = true;
  r.winners[{"sm90", "pkg.mm", key}] = winner;
  r.timings[{"sm90", "pkg.mm", key}] = {{signature(kA), a_ms}, {signature(kB), b_ms}};
}

const KeyVerdict& verdict_of(const std::vector<KeyVerdict>& verdicts, const std::string& key) {
  for (const KeyVerdict& v : verdicts)
    if (v.key.key == key) return v;
  BOOST_FAIL("no verdict for " + key);
  return verdicts.front();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(merge_noise)

BOOST_AUTO_TEST_CASE(tie_set_and_flip_risk_match_a_hand_count) {
  std::vector<RecordFile> records;
  // close: A 3 votes, B 2. A's medians 1.00 1.01 1.02 1.10 1.12 (aggregate
  // 1.02, slowest rank 1.12); B's 1.05 1.04 1.06 1.00 0.99 (aggregate 1.04,
  // within A's spread: a tie). Drop an A voter: 2:2, and B's median without
  // that rank (1.02, 1.025, 1.02) beats A's (1.06, 1.06, 1.055): 3 flips.
  // Drop a B voter: 3:1, no flip. Hand count: 3 of 5.
  const double a[] = {1.00, 1.01, 1.02, 1.10, 1.12}, b[] = {1.05, 1.04, 1.06, 1.00, 0.99};
  for (std::size_t r = 0; r < 5; ++r) vote(records, "close", r, r < 3 ? kA : kB, a[r], b[r]);
  // clear: the same votes, B twice as slow everywhere: no tie, no flip.
  for (std::size_t r = 0; r < 5; ++r) vote(records, "clear", r, r < 3 ? kA : kB, 1.0, 2.0);
  // landslide: 4 to 1 cannot flip whatever the timings.
  for (std::size_t r = 0; r < 5; ++r) vote(records, "landslide", r, r < 4 ? kA : kB, a[r], b[r]);

  const std::vector<KeyVerdict> verdicts = tally(records);
  const KeyVerdict& close = verdict_of(verdicts, "close");
  BOOST_TEST(close.votes.at(0).signature == signature(kA));
  BOOST_TEST((close.ties == std::vector<std::string>{signature(kB), signature(kA)}));  // sorted
  BOOST_TEST(close.flips == 3);
  BOOST_TEST(close.voters == 5);
  const KeyVerdict& clear = verdict_of(verdicts, "clear");
  BOOST_TEST(clear.ties.empty());
  BOOST_TEST(clear.flips == 0);
  BOOST_TEST(verdict_of(verdicts, "landslide").flips == 0);

  // The table keeps the tie set beside the entry, in JSON and binary.
  const MergeResult merged = merge_records(records, "", "");
  const TableEntry entry = *merged.table->entry("pkg.mm", "close");
  BOOST_TEST((entry.ties == std::vector<Config>{kB}));
  BOOST_TEST(merged.table->entry("pkg.mm", "clear")->ties.empty());
  const auto from_json = table_from_json(table_to_json(*merged.table), "t.json");
  BOOST_TEST((*from_json->entry("pkg.mm", "close") == entry));
  const auto from_binary = table_from_binary(table_to_binary(*merged.table), "t.tlb");
  BOOST_TEST((*from_binary->entry("pkg.mm", "close") == entry));

  // The report names both.
  const std::string report = disagreement_report(merged.disagreements);
  BOOST_TEST(report.find("within noise (each no slower than the best's slowest rank): " +
                         signature(kB) + " " + signature(kA)) != std::string::npos);
  BOOST_TEST(report.find("flip risk 3/5") != std::string::npos);
  const auto json = verdict_to_json(close);
  BOOST_TEST(json["flip_risk"]["flips"] == 3);
  BOOST_TEST(json["ties"].size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_tied_entry_list_that_repeats_is_refused) {
  const std::string text =
      R"({"arch": "sm90", "kernels": {"k": {"M=1": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4,)"
      R"( "num_stages": 3, "ties": [{"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}]}}}})";
  try {
    table_from_json(text, "t.json");
    BOOST_FAIL("accepted");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("t.json: kernels.k[\"M=1\"].ties[0]: repeats") !=
                   std::string::npos,
               e.what());
  }
}

BOOST_AUTO_TEST_SUITE_END()
