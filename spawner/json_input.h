// Reading the JSON inputs of the offline commands (map, plan): one error line naming the file,
// the place and the problem, for any malformed, unknown, missing or mistyped field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/status.h"

namespace aiac::spawner {

Result<nlohmann::json> ReadJsonFile(const std::string& path);
// `obj` is an object with only `allowed` keys and every `required` one.
Status CheckFields(const nlohmann::json& obj, const std::string& where,
                   const std::set<std::string>& allowed, const std::set<std::string>& required);
Result<double> NumberField(const nlohmann::json& obj, const std::string& key,
                           const std::string& where);
Result<std::string> TextField(const nlohmann::json& obj, const std::string& key,
                              const std::string& where);
Result<int64_t> IntegerField(const nlohmann::json& obj, const std::string& key,
                             const std::string& where);

}  // namespace aiac::spawner
