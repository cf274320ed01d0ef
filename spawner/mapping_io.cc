#include "spawner/mapping_io.h"

#include <set>

#include "spawner/json_input.h"

namespace aiac::spawner {

using nlohmann::json;

namespace {

const json& ArrayAt(const json& obj, const std::string& key, Status& error,
                    const std::string& where) {
  static const json kEmpty = json::array();
  if (!obj.contains(key)) return kEmpty;
  if (!obj.at(key).is_array()) error = InvalidArgument(where + ": '" + key + "' must be an array");
  return obj.at(key).is_array() ? obj.at(key) : kEmpty;
}

}  // namespace

Result<model::Platform> PlatformFromJson(const json& j, const std::string& name) {
  AIAC_RETURN_IF_ERROR(CheckFields(j, name, {"clusters", "inter_latency"}, {"clusters"}));
  Status error;
  std::vector<model::ClusterSpec> clusters;
  const json& cs = ArrayAt(j, "clusters", error, name);
  AIAC_RETURN_IF_ERROR(error);
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::string where = name + ": clusters[" + std::to_string(i) + "]";
    AIAC_RETURN_IF_ERROR(
        CheckFields(cs[i], where, {"name", "latency", "nodes"}, {"name", "nodes"}));
    model::ClusterSpec c;
    AIAC_ASSIGN_OR_RETURN(auto cname, TextField(cs[i], "name", where));
    c.name = cname;
    if (cs[i].contains("latency")) {
      AIAC_ASSIGN_OR_RETURN(auto l, NumberField(cs[i], "latency", where));
      c.latency = l;
    }
    const json& ns = ArrayAt(cs[i], "nodes", error, where);
    AIAC_RETURN_IF_ERROR(error);
    for (size_t k = 0; k < ns.size(); ++k) {
      const std::string nwhere = where + ".nodes[" + std::to_string(k) + "]";
      AIAC_RETURN_IF_ERROR(CheckFields(ns[k], nwhere, {"id", "power", "free"}, {"id", "power"}));
      model::NodeSpec n;
      auto id = TextField(ns[k], "id", nwhere);
      if (!id.ok()) return id.status();
      auto power = NumberField(ns[k], "power", nwhere);
      if (!power.ok()) return power.status();
      n.id = *id;
      n.power = *power;
      if (ns[k].contains("free")) {
        if (!ns[k]["free"].is_boolean())
          return InvalidArgument(nwhere + ": 'free' must be true or false");
        n.free = ns[k]["free"].get<bool>();
      }
      c.nodes.push_back(std::move(n));
    }
    clusters.push_back(std::move(c));
  }
  std::vector<model::InterLatency> inter;
  const json& ls = ArrayAt(j, "inter_latency", error, name);
  AIAC_RETURN_IF_ERROR(error);
  for (size_t i = 0; i < ls.size(); ++i) {
    const std::string where = name + ": inter_latency[" + std::to_string(i) + "]";
    AIAC_RETURN_IF_ERROR(CheckFields(ls[i], where, {"a", "b", "latency"}, {"a", "b", "latency"}));
    AIAC_ASSIGN_OR_RETURN(auto a, TextField(ls[i], "a", where));
    AIAC_ASSIGN_OR_RETURN(auto b, TextField(ls[i], "b", where));
    AIAC_ASSIGN_OR_RETURN(auto l, NumberField(ls[i], "latency", where));
    inter.push_back({a, b, l});
  }
  auto platform = model::Platform::Build(std::move(clusters), std::move(inter));
  if (!platform.ok()) return InvalidArgument(name + ": " + platform.status().message());
  return platform;
}

Result<model::Tig> TigFromJson(const json& j, const std::string& name) {
  AIAC_RETURN_IF_ERROR(CheckFields(j, name, {"tasks", "edges"}, {"tasks"}));
  Status error;
  std::vector<model::TaskSpec> tasks;
  const json& ts = ArrayAt(j, "tasks", error, name);
  AIAC_RETURN_IF_ERROR(error);
  for (size_t i = 0; i < ts.size(); ++i) {
    const std::string where = name + ": tasks[" + std::to_string(i) + "]";
    AIAC_RETURN_IF_ERROR(CheckFields(ts[i], where, {"id", "cost"}, {"id", "cost"}));
    AIAC_ASSIGN_OR_RETURN(auto id, IntegerField(ts[i], "id", where));
    AIAC_ASSIGN_OR_RETURN(auto cost, NumberField(ts[i], "cost", where));
    tasks.push_back({id, cost});
  }
  std::vector<model::EdgeSpec> edges;
  const json& es = ArrayAt(j, "edges", error, name);
  AIAC_RETURN_IF_ERROR(error);
  for (size_t i = 0; i < es.size(); ++i) {
    const std::string where = name + ": edges[" + std::to_string(i) + "]";
    AIAC_RETURN_IF_ERROR(CheckFields(es[i], where, {"a", "b", "volume"}, {"a", "b", "volume"}));
    AIAC_ASSIGN_OR_RETURN(auto a, IntegerField(es[i], "a", where));
    AIAC_ASSIGN_OR_RETURN(auto b, IntegerField(es[i], "b", where));
    AIAC_ASSIGN_OR_RETURN(auto v, NumberField(es[i], "volume", where));
    edges.push_back({a, b, v});
  }
  auto tig = model::Tig::Build(std::move(tasks), std::move(edges));
  if (!tig.ok()) return InvalidArgument(name + ": " + tig.status().message());
  return tig;
}

nlohmann::ordered_json MappingToJson(const model::Platform& platform, const model::Tig& tig,
                                     std::string_view algo, const mapping::InitialMapping& initial,
                                     double predicted_et,
                                     const std::vector<mapping::Replacement>& replacements) {
  using json = nlohmann::ordered_json;
  const auto& nodes = platform.nodes();
  json out;
  out["algo"] = algo;
  out["hd"] = initial.hd;
  out["clusters"] = json::array();
  for (const auto& c : initial.clusters)
    out["clusters"].push_back({{"name", c.name}, {"mark", c.mark}});
  out["task_order"] = json::array();
  for (int t : initial.task_order) out["task_order"].push_back(tig.id(t));
  // Assignment by task id, ascending.
  std::vector<int> by_id(tig.size());
  for (size_t t = 0; t < tig.size(); ++t) by_id[t] = static_cast<int>(t);
  std::sort(by_id.begin(), by_id.end(), [&](int a, int b) { return tig.id(a) < tig.id(b); });
  out["assignment"] = json::array();
  for (int t : by_id) {
    out["assignment"].push_back(
        {{"task", tig.id(t)}, {"node", nodes[initial.placement.node_of(t)].id}});
  }
  out["reserved"] = json::array();
  for (int n : initial.reserved) out["reserved"].push_back(nodes[n].id);
  out["predicted_et"] = predicted_et;
  out["replacements"] = json::array();
  for (const auto& r : replacements) {
    out["replacements"].push_back({{"failed", nodes[r.failed].id},
                                   {"task", r.task >= 0 ? json(tig.id(r.task)) : json(nullptr)},
                                   {"node", r.node >= 0 ? json(nodes[r.node].id) : json(nullptr)}});
  }
  return out;
}

}  // namespace aiac::spawner
