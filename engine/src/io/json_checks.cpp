#include "io/json_checks.hpp"

#include "tunelock/base/error.hpp"

namespace tunelock::json_checks {

std::string member_path(const std::string& where, std::string_view field) {
  // At the root the path is "file.json: " and takes no dot.
  if (where.ends_with(' ')) return where + std::string(field);
  return where + "." + std::string(field);
}

std::string index_path(const std::string& where, std::size_t index) {
  return where + "[" + std::to_string(index) + "]";
}

std::string describe(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + text;
}

const nlohmann::json& require_object(const nlohmann::json& value, const std::string& where) {
  if (!value.is_object()) throw Error(where + ": expected an object, got " + describe(value));
  return value;
}

const nlohmann::json& require_array(const nlohmann::json& value, const std::string& where) {
  if (!value.is_array()) throw Error(where + ": expected an array, got " + describe(value));
  return value;
}

std::string require_string(const nlohmann::json& value, const std::string& where) {
  if (!value.is_string()) throw Error(where + ": expected a string, got " + describe(value));
  return value.get<std::string>();
}

bool require_bool(const nlohmann::json& value, const std::string& where) {
  if (!value.is_boolean()) throw Error(where + ": expected true or false, got " + describe(value));
  return value.get<bool>();
}

std::int64_t require_int(const nlohmann::json& value, const std::string& where, std::int64_t min,
                         std::int64_t max) {
  if (!value.is_number_integer())
    throw Error(where + ": expected an integer, got " + describe(value));
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw Error(where + ": " + value.dump() + " is out of range");
  const std::int64_t number = value.get<std::int64_t>();
  if (number < min || number > max) {
    throw Error(where + ": " + std::to_string(number) + " is out of range; allowed " +
                std::to_string(min) + " to " + std::to_string(max));
  }
  return number;
}

void require_utf8(std::string_view text, const std::string& where) {
  // nlohmann's serializer is the check JSON output will make; asking it now
  // moves the failure to the file that holds the bytes. ASCII, the common
  // case, needs no serializer.
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return;
  try {
    (void)nlohmann::json(std::string(text)).dump();
  } catch (const nlohmann::json::type_error&) {
    throw Error(where + ": invalid UTF-8 in text");
  }
}

const nlohmann::json* find_member(const nlohmann::json& object, std::string_view field) {
  auto it = object.find(field);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace tunelock::json_checks
