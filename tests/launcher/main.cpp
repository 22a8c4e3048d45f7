#define BOOST_TEST_MODULE tunelock launcher
#include <boost/test/unit_test.hpp>
