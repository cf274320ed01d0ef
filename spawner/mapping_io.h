// JSON in and out of `aiac-spawner map`: the platform file, the TIG file, the answer.
//
//   P.json: {"clusters": [{"name": "c1", "latency": 0.0001,
//                          "nodes": [{"id": "n1", "power": 1.5, "free": true}, ...]}, ...],
//            "inter_latency": [{"a": "c1", "b": "c2", "latency": 0.02}, ...]}
//   T.json: {"tasks": [{"id": 0, "cost": 120.0}, ...],
//            "edges": [{"a": 0, "b": 1, "volume": 30.0}, ...]}
// Unknown fields, wrong types and missing fields are errors naming the file and the place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "mapping/failure_replay.h"
#include "model/platform.h"
#include "model/tig.h"
#include "spawner/json_input.h"

namespace aiac::spawner {

Result<model::Platform> PlatformFromJson(const nlohmann::json& j, const std::string& name);
Result<model::Tig> TigFromJson(const nlohmann::json& j, const std::string& name);

nlohmann::ordered_json MappingToJson(const model::Platform& platform, const model::Tig& tig,
                                     std::string_view algo, const mapping::InitialMapping& initial,
                                     double predicted_et,
                                     const std::vector<mapping::Replacement>& replacements);

}  // namespace aiac::spawner
