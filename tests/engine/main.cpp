#define BOOST_TEST_MODULE tunelock engine
#include <boost/test/unit_test.hpp>
