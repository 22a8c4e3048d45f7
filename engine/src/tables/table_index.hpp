// Selection's hot-path questions to a table, kept out of Table's public
// interface: whether a kernel name of some length can be in it at all, and
// one name asked about its keys in order. Internal (detail/): selection and
// the tests use it; it may change between versions.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "tunelock/tables/table.hpp"

namespace tunelock::detail {

struct TableIndexAccess {
  static bool may_hold_kernel_name_of_length(const Table& table, std::size_t length) {
    return table.may_hold_kernel_name_of_length(length);
  }
  static NameMatch match_in_order(const Table& table, std::string_view kernel,
                                  std::span<const std::string_view> keys,
                                  std::span<const Config> candidates) {
    return table.match_in_order(kernel, keys, candidates);
  }
  // The interface's own answer (has_kernel, then match per key), for tests
  // that compare an implementation's override with it.
  static NameMatch generic_match_in_order(const Table& table, std::string_view kernel,
                                          std::span<const std::string_view> keys,
                                          std::span<const Config> candidates) {
    return table.Table::match_in_order(kernel, keys, candidates);
  }
};

}  // namespace tunelock::detail
