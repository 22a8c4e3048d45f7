#include "tables/table_json_fast.hpp"

#ifdef TUNELOCK_HAVE_SIMDJSON

#include <simdjson.h>

#include <limits>
#include <unordered_set>

#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/tables/table_format.hpp"

namespace tunelock::detail {
namespace {

namespace dom = simdjson::dom;

// Thrown where the full reader must decide.
struct Defer {};

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

std::int64_t integer(dom::element value, std::int64_t min,
                     std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  std::int64_t number = 0;
  if (!value.is_int64() || value.get_int64().get(number) != simdjson::SUCCESS) throw Defer{};
  if (number < min || number > max) throw Defer{};
  return number;
}

Config read_config(dom::object object) {
  Config config;
  bool warps = false, stages = false, kwargs = false, ctas = false, nreg = false, ir = false,
       algorithm = false;
  const auto once = [](bool& seen) {
    if (seen) throw Defer{};
    seen = true;
  };
  for (const dom::key_value_pair field : object) {
    const std::string_view name = field.key;
    const dom::element value = field.value;
    if (name == "kwargs") {
      once(kwargs);
      const dom::object params = value;
      config.params.reserve(params.size());
      for (const dom::key_value_pair param : params) {
        if (param.key.empty()) throw Defer{};
        const std::int64_t min =
            is_block_param(param.key) ? 1 : std::numeric_limits<std::int64_t>::min();
        config.params.push_back(Param{std::string(param.key), integer(param.value, min)});
      }
    } else if (name == "num_warps") {
      once(warps);
      config.num_warps = static_cast<int>(integer(value, 0, kIntMax));
    } else if (name == "num_stages") {
      once(stages);
      config.num_stages = static_cast<int>(integer(value, 0, kIntMax));
    } else if (name == "num_ctas") {
      once(ctas);
      config.num_ctas = static_cast<int>(integer(value, 1, kIntMax));
    } else if (name == "maxnreg") {
      once(nreg);
      if (!value.is_null()) config.maxnreg = static_cast<int>(integer(value, 1, kIntMax));
    } else if (name == "ir_override") {
      once(ir);
      if (!value.is_null()) config.ir_override = std::string(std::string_view(value));
    } else if (name == "algorithm") {
      once(algorithm);
      if (value.is_null()) continue;
      const std::string_view text = value;
      if (!is_algorithm_name(text)) throw Defer{};  // the full reader's message
      config.algorithm = std::string(text);
    } else {
      throw Defer{};  // `equivalent`, or a field the full reader refuses
    }
  }
  if (!warps || !stages) throw Defer{};
  const std::size_t count = config.params.size();
  sort_params(config.params);
  for (std::size_t i = 1; i < count; ++i)
    if (config.params[i].name == config.params[i - 1].name) throw Defer{};
  return config;
}

// simdjson's DOM parser: it validates the whole document (the On-Demand
// API checks only what is read, and accepted a stray ':' between members),
// and picks the widest SIMD the CPU has at run time. The text is parsed in
// place when `readable` leaves the padding simdjson reads past its end.
std::unique_ptr<InMemoryTable> read(std::string_view text, const std::string& origin,
                                    std::size_t readable) {
  static_assert(simdjson::SIMDJSON_PADDING <= kReadPadding);
  dom::parser parser;
  // Nesting the full reader refuses is deferred to it, for its message.
  if (parser.allocate(text.size(), /*max_depth=*/64) != simdjson::SUCCESS) throw Defer{};
  const bool padded = readable >= text.size() + simdjson::SIMDJSON_PADDING;
  const dom::object root = parser.parse(text.data(), text.size(), /*realloc_if_needed=*/!padded);
  // Everything but the kernels is small: it is handed to the full reader's
  // code as JSON text so both paths read the header the same way.
  nlohmann::json header = nlohmann::json::object();
  InMemoryTable entries("");
  bool kernels_present = false;
  for (const dom::key_value_pair field : root) {
    const std::string key(field.key);
    if (key != "kernels") {
      if (header.contains(key)) throw Defer{};
      header[key] = parse_json(simdjson::to_string(field.value), origin);
      continue;
    }
    if (kernels_present) throw Defer{};
    kernels_present = true;
    // Kernel names point into the parser's strings, alive until the end.
    std::unordered_set<std::string_view> names;
    for (const dom::key_value_pair kernel_field : dom::object(field.value)) {
      if (!names.insert(kernel_field.key).second) throw Defer{};
      const std::string kernel(kernel_field.key);
      check_kernel_name(kernel, origin);
      for (const dom::key_value_pair entry_field : dom::object(kernel_field.value)) {
        check_key(entry_field.key, origin);
        Config config = read_config(entry_field.value);
        if (!entries.set(kernel, std::string(entry_field.key), TableEntry{std::move(config)}))
          throw Defer{};  // a repeated key
      }
    }
    // Checked above, and each kernel object's entries taken: the header
    // check has nothing left to look at.
    header["kernels"] = nlohmann::json::object();
  }
  if (!kernels_present) throw Defer{};
  return table_from_json_header(header, origin, std::move(entries));
}

}  // namespace

bool fast_table_reader_built() { return true; }

std::unique_ptr<InMemoryTable> fast_table_from_json(std::string_view text,
                                                    const std::string& origin,
                                                    std::size_t readable) {
  try {
    return read(text, origin, readable);
  } catch (const Defer&) {
  } catch (const simdjson::simdjson_error&) {
  } catch (const Error&) {
  }
  return nullptr;
}

}  // namespace tunelock::detail

#else

namespace tunelock::detail {

bool fast_table_reader_built() { return false; }

std::unique_ptr<InMemoryTable> fast_table_from_json(std::string_view, const std::string&,
                                                    std::size_t) {
  return nullptr;
}

}  // namespace tunelock::detail

#endif
