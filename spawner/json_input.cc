#include "spawner/json_input.h"

#include <fstream>

namespace aiac::spawner {

using nlohmann::json;

Result<json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read " + path);
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    return InvalidArgument(path + ": not valid JSON (" + e.what() + ")");
  }
}

Status CheckFields(const json& obj, const std::string& where, const std::set<std::string>& allowed,
                   const std::set<std::string>& required) {
  if (!obj.is_object()) return InvalidArgument(where + " must be an object");
  for (const auto& [key, value] : obj.items()) {
    if (!allowed.count(key)) return InvalidArgument(where + ": unknown field '" + key + "'");
  }
  for (const auto& key : required) {
    if (!obj.contains(key)) return InvalidArgument(where + ": missing field '" + key + "'");
  }
  return Status::Ok();
}

Result<double> NumberField(const json& obj, const std::string& key, const std::string& where) {
  const json& v = obj.at(key);
  if (!v.is_number()) return InvalidArgument(where + ": '" + key + "' must be a number");
  return v.get<double>();
}

Result<std::string> TextField(const json& obj, const std::string& key, const std::string& where) {
  const json& v = obj.at(key);
  if (!v.is_string()) return InvalidArgument(where + ": '" + key + "' must be a string");
  return v.get<std::string>();
}

Result<int64_t> IntegerField(const json& obj, const std::string& key, const std::string& where) {
  const json& v = obj.at(key);
  if (!v.is_number_integer()) return InvalidArgument(where + ": '" + key + "' must be an integer");
  return v.get<int64_t>();
}

}  // namespace aiac::spawner
