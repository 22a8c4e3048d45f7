// The per-machine equivalents cache (TUNELOCK_EQUIVALENT=timed): a file
// that is not a cache this tunelock reads is named, with the member that is
// wrong, in one warning; it is never trusted nor overwritten, and what the
// cache writes reads back.
#include <boost/test/unit_test.hpp>

#include "captured_log.hpp"
#include "runtime/equivalent_cache.hpp"
#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"

using namespace tunelock;
using tunelock::detail::EquivalentCache;
using tunelock::testing::CapturedLog;
using tunelock::testing::TempDir;

namespace {

const std::string kKey =
    detail::equivalent_cache_key("NVIDIA H200", "550.54", "0123abcd", "sm90", "pkg.mm", "M=1");

std::string cache_text(const std::string& members) {
  return R"({"format": "tunelock equivalent cache", )" + members + "}";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(equivalent_cache)

BOOST_AUTO_TEST_CASE(a_written_cache_reads_back_in_the_next_process) {
  TempDir dir;
  const auto file = dir.path() / "machine" / "equivalents.json";
  EquivalentCache first;
  first.open(file);
  BOOST_TEST(!first.find(kKey).has_value());
  first.remember(kKey, "BLOCK=64;warps=4;stages=3");
  first.write();
  CapturedLog log;
  EquivalentCache next;
  next.open(file);
  BOOST_TEST(next.find(kKey).value_or("") == "BLOCK=64;warps=4;stages=3");
  BOOST_TEST(log.text().empty(), log.text());
}

BOOST_AUTO_TEST_CASE(a_malformed_cache_is_named_with_its_member_once_and_kept) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"format\": ", "equivalents.json: "},  // truncated: the JSON reader's position
      {R"({"format": 3, "format_version": 1, "picks": {}})", "not a tunelock equivalent cache"},
      {cache_text(R"("format_version": "1", "picks": {})"),
       "equivalents.json: format_version: expected an integer, got string"},
      {cache_text(R"("format_version": 2, "picks": {})"),
       "equivalents.json: format_version 2 is not 1"},
      {cache_text(R"("picks": {})"), "equivalents.json: format_version: missing"},
      {cache_text(R"("format_version": 1, "%icks": {})"), "equivalents.json: picks: missing"},
      {cache_text(R"("format_version": 1, "picks": [])"),
       "equivalents.json: picks: expected an object, got array"},
      {cache_text(R"("format_version": 1, "picks": {"k": 5})"),
       "equivalents.json: picks[\"k\"]: expected a config signature"},
  };
  for (const auto& [text, expected] : cases) {
    TempDir dir;
    const auto file = dir.write("equivalents.json", text);
    CapturedLog log;
    EquivalentCache cache;
    cache.open(file);
    BOOST_TEST(!cache.find(kKey).has_value());
    BOOST_TEST(!cache.find(kKey).has_value());
    cache.remember(kKey, "BLOCK=64;warps=4;stages=3");
    cache.write();
    BOOST_TEST(log.count(expected) == 1u, text << " -> " << log.text());
    BOOST_TEST(log.count(file.string()) == 1u, log.text());
    BOOST_TEST(log.count("the equivalents cache is ignored") == 1u, log.text());
    BOOST_TEST(log.count("[json.exception") == 0u, log.text());
    BOOST_TEST(read_file(file) == text);  // left as it is
  }
}

BOOST_AUTO_TEST_SUITE_END()
