// Batch-like key dims: a kernel whose rows are independent (M of a GEMM,
// the rows of a norm, the tokens of a step) declares which key argument
// counts them. Its tuning key then splits into that size and the rest (the
// "group key": every other argument and dtype), and batch invariance asks
// one question per group: do the same rows give the same bits at every size?
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunelock {

// The value of `dim` in a tuning key's text ("M=128|N=64|float16", "M"):
// nullopt when the key has no such argument or its value is not a
// positive integer.
std::optional<std::int64_t> batch_size_of(std::string_view key, std::string_view dim);

// The key without its `dim=<size>` part: "M=128|N=64|float16" -> "N=64|float16";
// "M=128" -> "" (a kernel keyed on the batch alone has one group).
std::string group_key_of(std::string_view key, std::string_view dim);

// The key for `size` rows of the same group: `dim=<size>` in place of the
// key's own. REQUIRES: batch_size_of(key, dim).
std::string key_at_size(std::string_view key, std::string_view dim, std::int64_t size);

// The key that stands for every size of the group: `dim=*` in place of the
// key's own ("M=128|N=64" -> "M=*|N=64"), as class entries of a choice log
// name it. REQUIRES: batch_size_of(key, dim).
std::string key_at_every_size(std::string_view key, std::string_view dim);

// The sizes the invariance audit compares for a call of `rows` rows: 1, 2,
// 4, ... below `rows`, every `also` below `rows` (recorded sizes seen
// earlier), and `rows` itself; sorted and unique. Empty for rows < 1.
std::vector<std::int64_t> row_ladder(std::int64_t rows, const std::vector<std::int64_t>& also = {});

// A declared batch dim's name: a key argument's name (letters, digits,
// '_'), or an Error naming `where`.
void check_batch_dim_name(std::string_view dim, const std::string& where);

}  // namespace tunelock
