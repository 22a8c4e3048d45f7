#include "table_json_fast.hpp"

#ifdef TUNELOCK_HAVE_SIMDJSON

#include <simdjson.h>

#include <limits>
#include <unordered_set>

#include "tunelock/error.hpp"
#include "tunelock/files.hpp"
#include "tunelock/json_config.hpp"
#include "tunelock/table_format.hpp"

namespace tunelock::detail {
namespace {

namespace od = simdjson::ondemand;

// Thrown where the full reader must decide.
struct Defer {};

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

std::int64_t integer(od::value value, std::int64_t min,
                     std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  std::int64_t number = 0;
  if (value.get_int64().get(number) != simdjson::SUCCESS) throw Defer{};
  if (number < min || number > max) throw Defer{};
  return number;
}

Config read_config(od::object object) {
  Config config;
  bool warps = false, stages = false, kwargs = false, ctas = false, nreg = false, ir = false;
  const auto once = [](bool& seen) {
    if (seen) throw Defer{};
    seen = true;
  };
  for (auto field : object) {
    const std::string_view name = field.unescaped_key();
    od::value value = field.value();
    if (name == "kwargs") {
      once(kwargs);
      for (auto param : value.get_object()) {
        std::string param_name(std::string_view(param.unescaped_key()));
        if (param_name.empty()) throw Defer{};
        const std::int64_t min =
            is_block_param(param_name) ? 1 : std::numeric_limits<std::int64_t>::min();
        config.params.push_back(Param{std::move(param_name), integer(param.value(), min)});
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
      if (!value.is_null()) config.ir_override = std::string(std::string_view(value.get_string()));
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

// simdjson's On-Demand API: one pass, no document tree, so the peak is the
// text, its structural index and the table being built.
std::unique_ptr<InMemoryTable> read(std::string_view text, const std::string& origin,
                                    std::size_t readable) {
  static_assert(simdjson::SIMDJSON_PADDING <= kReadPadding);
  simdjson::padded_string copy;
  if (readable < text.size() + simdjson::SIMDJSON_PADDING) {
    copy = simdjson::padded_string(text);
    text = copy;
  }
  od::parser parser;
  od::document document =
      parser.iterate(simdjson::padded_string_view(text, text.size() + simdjson::SIMDJSON_PADDING));
  // Everything but the kernels is small: it is handed to the full reader's
  // code as JSON text so both paths read the header the same way.
  nlohmann::json header = nlohmann::json::object();
  InMemoryTable entries("");
  bool kernels_present = false;
  for (auto field : document.get_object()) {
    const std::string key(std::string_view(field.unescaped_key()));
    od::value value = field.value();
    if (key != "kernels") {
      if (header.contains(key)) throw Defer{};
      header[key] = parse_json(std::string_view(simdjson::to_json_string(value)), origin);
      continue;
    }
    if (kernels_present) throw Defer{};
    kernels_present = true;
    std::unordered_set<std::string> names;
    for (auto kernel_field : value.get_object()) {
      std::string kernel(std::string_view(kernel_field.unescaped_key()));
      check_kernel_name(kernel, origin);
      for (auto entry_field : kernel_field.value().get_object()) {
        std::string key_text(std::string_view(entry_field.unescaped_key()));
        check_key(key_text, origin);
        Config config = read_config(entry_field.value().get_object());
        if (!entries.set(kernel, std::move(key_text), TableEntry{std::move(config)}))
          throw Defer{};  // a repeated key
      }
      if (!names.insert(std::move(kernel)).second) throw Defer{};
    }
    // Checked above, and each kernel object's entries taken: the header
    // check has nothing left to look at.
    header["kernels"] = nlohmann::json::object();
  }
  // Nothing may follow the root object.
  if (document.current_location().error() != simdjson::OUT_OF_BOUNDS) throw Defer{};
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
