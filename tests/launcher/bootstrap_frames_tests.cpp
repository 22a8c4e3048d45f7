// The rendezvous frames' defences, without a network: what rank 0 buffers
// for a stranger, how a peer's text is printed, how refusals are counted.
#include <boost/test/unit_test.hpp>

#include "bootstrap_frames.hpp"
#include "tunelock/base/error.hpp"

using namespace tunelock::launcher::bootstrap;

BOOST_AUTO_TEST_SUITE(rendezvous_frames)

BOOST_AUTO_TEST_CASE(a_frame_header_announcing_more_than_the_limit_is_refused_before_its_body) {
  std::string header = "TLBH";
  for (int i = 0; i < 4; ++i) header += static_cast<char>(((1u << 20) >> (8 * i)) & 0xff);
  std::string buffer = header;  // the header alone: nothing of the body has arrived
  BOOST_CHECK_EXCEPTION(
      take_frame(buffer, kMaxHelloFrame), tunelock::Error, [](const tunelock::Error& e) {
        return std::string(e.what()) == "frame too large (1048576 bytes announced, at most 16384)";
      });
  // A roster may be that large.
  std::string roster = header;
  BOOST_TEST(!take_frame(roster).has_value());  // incomplete, not refused
  std::string hello = frame('H', std::string(100, 'x'));
  const auto taken = take_frame(hello, kMaxHelloFrame);
  BOOST_TEST_REQUIRE(taken.has_value());
  BOOST_TEST(taken->second.size() == 100u);
}

BOOST_AUTO_TEST_CASE(a_peers_text_is_printed_escaped_on_one_line_and_cut) {
  BOOST_TEST(printable_peer_text("rank(s) 2 never arrived") == "rank(s) 2 never arrived");
  BOOST_TEST(printable_peer_text("\x1b[31mred\nline\\ \xc3\xa9") ==
             "\\x1b[31mred\\x0aline\\x5c \\xc3\\xa9");
  const std::string cut = printable_peer_text(std::string(10'000, 'A'), 100);
  BOOST_TEST(cut == std::string(100, 'A') + "... (9900 more bytes not shown)");
}

BOOST_AUTO_TEST_CASE(repeated_refusals_are_named_once_with_a_count) {
  std::vector<std::string> refusals(500, "a hello from rank 1 with another job token");
  refusals.push_back("rank 2 has WORLD_SIZE=4 (this job has 3)");
  BOOST_TEST(summarise_refusals(refusals) ==
             "a hello from rank 1 with another job token (x500); "
             "rank 2 has WORLD_SIZE=4 (this job has 3)");
  std::vector<std::string> many;
  for (int i = 0; i < 20; ++i) many.push_back("refusal " + std::to_string(i));
  const std::string summary = summarise_refusals(many);
  BOOST_TEST(summary.ends_with("refusal 7; and 12 other kinds of refusal"));
}

BOOST_AUTO_TEST_SUITE_END()
