#define BOOST_TEST_MODULE tunelock cli
#include <boost/test/unit_test.hpp>
