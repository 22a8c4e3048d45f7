// Signatures, costs and config equality: the data every rank must agree on.
#include <boost/test/unit_test.hpp>

#include <limits>

#include "tunelock/base/error.hpp"
#include "tunelock/model/config.hpp"

using namespace tunelock;

BOOST_AUTO_TEST_SUITE(config)

BOOST_AUTO_TEST_CASE(signature_sorts_params_and_appends_launch_options) {
  Config c = make_config({{"BLOCK_N", 64}, {"BLOCK_M", 128}, {"SPLIT_K", 4}}, 8, 3);
  BOOST_TEST(signature(c) == "BLOCK_M=128,BLOCK_N=64,SPLIT_K=4;warps=8;stages=3");
}

BOOST_AUTO_TEST_CASE(signature_names_ctas_only_when_not_one_and_maxnreg_only_when_set) {
  BOOST_TEST(signature(make_config({{"BLOCK", 32}}, 4, 2, 1)) == "BLOCK=32;warps=4;stages=2");
  BOOST_TEST(signature(make_config({{"BLOCK", 32}}, 4, 2, 2)) ==
             "BLOCK=32;warps=4;stages=2;ctas=2");
  BOOST_TEST(signature(make_config({{"BLOCK", 32}}, 4, 2, 1, 128)) ==
             "BLOCK=32;warps=4;stages=2;maxnreg=128");
  BOOST_TEST(signature(make_config({}, 4, 2)) == ";warps=4;stages=2");
}

BOOST_AUTO_TEST_CASE(configs_that_differ_anywhere_have_different_signatures) {
  const Config base = make_config({{"BLOCK_M", 64}}, 4, 3);
  std::vector<Config> variants{make_config({{"BLOCK_M", 128}}, 4, 3),
                               make_config({{"BLOCK_M", 64}}, 8, 3),
                               make_config({{"BLOCK_M", 64}}, 4, 4),
                               make_config({{"BLOCK_M", 64}}, 4, 3, 2),
                               make_config({{"BLOCK_M", 64}}, 4, 3, 1, 96),
                               make_config({{"BLOCK_N", 64}}, 4, 3),
                               make_config({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, 4, 3)};
  Config with_ir = base;
  with_ir.ir_override = "kernel.ttgir";
  variants.push_back(with_ir);
  for (const Config& v : variants) {
    BOOST_TEST(signature(v) != signature(base));
    BOOST_TEST(!(v == base));
  }
}

BOOST_AUTO_TEST_CASE(duplicate_param_names_are_rejected) {
  BOOST_CHECK_THROW(make_config({{"BLOCK_M", 64}, {"BLOCK_M", 32}}), Error);
}

BOOST_AUTO_TEST_CASE(param_lookup_finds_by_name) {
  const Config c = make_config({{"BLOCK_N", 64}, {"BLOCK_M", 128}});
  BOOST_TEST(*c.param("BLOCK_M") == 128);
  BOOST_TEST(!c.param("BLOCK_K").has_value());
}

BOOST_AUTO_TEST_CASE(cost_multiplies_block_params_and_stages_then_compares_warps) {
  const Config c = make_config({{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"SPLIT_K", 4}}, 8, 3);
  BOOST_TEST(estimate_cost(c).block == 64 * 32 * 3);  // SPLIT_K is not a block size
  BOOST_TEST(estimate_cost(c).warps == 8);
  // Zero stages and warps count as one: a config never looks free.
  const Config zero = make_config({{"BLOCK_M", 64}}, 0, 0);
  BOOST_TEST(estimate_cost(zero).block == 64);
  BOOST_TEST(estimate_cost(zero).warps == 1);
  BOOST_TEST((estimate_cost(make_config({{"BLOCK_M", 64}}, 2, 1)) <
              estimate_cost(make_config({{"BLOCK_M", 64}}, 4, 1))));
}

BOOST_AUTO_TEST_CASE(cost_saturates_instead_of_overflowing) {
  const std::int64_t big = std::int64_t{1} << 40;
  const Config huge = make_config({{"BLOCK_M", big}, {"BLOCK_N", big}, {"BLOCK_K", big}}, 4, 4);
  BOOST_TEST(estimate_cost(huge).block == std::numeric_limits<std::int64_t>::max());
  // Saturated stays the most expensive: wrap-around would have made it cheap.
  BOOST_TEST((estimate_cost(make_config({{"BLOCK_M", 256}}, 4, 4)) < estimate_cost(huge)));
}

BOOST_AUTO_TEST_SUITE_END()
