#include "model/platform.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace aiac::model {

Result<Platform> Platform::Build(std::vector<ClusterSpec> clusters, std::vector<InterLatency> inter,
                                 const std::vector<std::string>& given) {
  Platform p;
  std::map<std::string, int> cluster_index;
  for (auto& spec : clusters) {
    if (spec.name.empty()) return InvalidArgument("a cluster has an empty name");
    if (!cluster_index.emplace(spec.name, static_cast<int>(p.clusters_.size())).second) {
      return InvalidArgument("duplicate cluster name '" + spec.name + "'");
    }
    if (!std::isfinite(spec.latency) || spec.latency < 0) {
      return InvalidArgument("cluster '" + spec.name + "': latency must be a non-negative number");
    }
    Cluster c{spec.name, spec.latency, {}};
    for (auto& n : spec.nodes) {
      if (n.id.empty())
        return InvalidArgument("cluster '" + spec.name + "' has a node with an empty id");
      if (!std::isfinite(n.power) || n.power <= 0) {
        return InvalidArgument("node '" + n.id + "': power must be positive");
      }
      const int index = static_cast<int>(p.nodes_.size());
      if (!p.by_id_.emplace(n.id, index).second)
        return InvalidArgument("duplicate node id '" + n.id + "'");
      p.nodes_.push_back(Node{n.id, n.power, n.free, static_cast<int>(p.clusters_.size())});
      c.nodes.push_back(index);
    }
    p.clusters_.push_back(std::move(c));
  }
  const size_t nc = p.clusters_.size();
  p.latency_.assign(nc * nc, -1.0);
  for (size_t i = 0; i < nc; ++i) p.latency_[i * nc + i] = p.clusters_[i].latency;
  for (const auto& l : inter) {
    auto a = cluster_index.find(l.a), b = cluster_index.find(l.b);
    if (a == cluster_index.end())
      return InvalidArgument("inter_latency names unknown cluster '" + l.a + "'");
    if (b == cluster_index.end())
      return InvalidArgument("inter_latency names unknown cluster '" + l.b + "'");
    if (a->second == b->second) {
      return InvalidArgument("inter_latency pairs cluster '" + l.a + "' with itself");
    }
    if (!std::isfinite(l.latency) || l.latency < 0) {
      return InvalidArgument("inter_latency " + l.a + "-" + l.b + " must be a non-negative number");
    }
    double& ab = p.latency_[a->second * nc + b->second];
    if (ab >= 0) return InvalidArgument("inter_latency " + l.a + "-" + l.b + " is given twice");
    ab = l.latency;
    p.latency_[b->second * nc + a->second] = l.latency;
  }
  for (size_t i = 0; i < nc; ++i) {
    for (size_t j = i + 1; j < nc; ++j) {
      if (p.latency_[i * nc + j] < 0) {
        return InvalidArgument("no inter_latency for clusters '" + p.clusters_[i].name + "' and '" +
                               p.clusters_[j].name + "'");
      }
    }
  }
  if (given.empty()) {
    for (int n = 0; n < static_cast<int>(p.nodes_.size()); ++n) p.given_order_.push_back(n);
    return p;
  }
  std::vector<bool> seen(p.nodes_.size(), false);
  for (const std::string& id : given) {
    const int n = p.FindNode(id);
    if (n < 0) return InvalidArgument("the order given names unknown node '" + id + "'");
    if (seen[static_cast<size_t>(n)])
      return InvalidArgument("the order given names node '" + id + "' twice");
    seen[static_cast<size_t>(n)] = true;
    p.given_order_.push_back(n);
  }
  if (p.given_order_.size() != p.nodes_.size()) {
    return InvalidArgument("the order given names " + std::to_string(given.size()) + " of " +
                           std::to_string(p.nodes_.size()) + " nodes");
  }
  return p;
}

int Platform::FindNode(const std::string& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? -1 : it->second;
}

size_t Platform::free_count() const {
  return static_cast<size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.free; }));
}

}  // namespace aiac::model
