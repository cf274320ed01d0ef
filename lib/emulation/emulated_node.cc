#include "emulation/emulated_node.h"

#include <algorithm>

namespace aiac::emulation {

std::optional<std::string> ClusterOfNode(const PlatformFile& platform, const std::string& node_id) {
  for (const auto& c : platform.clusters) {
    const std::string prefix = c.name + "-";
    if (node_id.size() <= prefix.size() || node_id.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string k = node_id.substr(prefix.size());
    if (k.find_first_not_of("0123456789") != std::string::npos || k[0] == '0') continue;
    if (std::stoull(k) <= c.powers.size()) return c.name;
  }
  return std::nullopt;
}

Result<EmulatedNode> EmulatedNode::Make(const PlatformFile& platform, const std::string& node_id,
                                        double slowdown, uint64_t seed) {
  if (!(slowdown >= 1)) return InvalidArgument("the emulation slowdown must be at least 1");
  auto cluster = ClusterOfNode(platform, node_id);
  if (!cluster)
    return InvalidArgument("platform " + platform.name + " has no node '" + node_id + "'");
  EmulatedNode node;
  node.platform_ = platform;
  node.id_ = node_id;
  node.cluster_ = *cluster;
  node.slowdown_ = slowdown;
  for (const auto& c : platform.clusters) {
    if (c.name != *cluster) continue;
    node.power_ = c.powers[std::stoull(node_id.substr(c.name.size() + 1)) - 1];
    node.background_ = c.background;
  }
  // A seed of this node's own: nodes of one run draw differently, runs with one seed alike.
  node.rng_.seed(seed ^ std::hash<std::string>{}(node_id));
  return node;
}

std::optional<LinkFigures> EmulatedNode::LinkTo(const std::string& peer_id) const {
  auto other = ClusterOfNode(platform_, peer_id);
  if (!other) return std::nullopt;
  const auto link = platform_.Between(cluster_, *other);
  return LinkFigures{link.latency_ms / 1000, link.bandwidth_mbps * 1e6 / 8};
}

double EmulatedNode::IterationSeconds(double cpu_seconds, double now_seconds) {
  if (background_ && now_seconds >= next_draw_) {
    jobs_ = DrawCompetingJobs(*background_, rng_);
    next_draw_ = now_seconds + background_->mean_size;
  }
  return std::max(0.0, cpu_seconds) * slowdown_ / power_ * (1 + jobs_);
}

double DrawCompetingJobs(const BackgroundSpec& spec, std::mt19937_64& rng) {
  if (!(spec.std_jobs > 0)) return std::max(0.0, spec.mean_jobs);
  std::normal_distribution<double> jobs(spec.mean_jobs, spec.std_jobs);
  return std::max(0.0, jobs(rng));
}

}  // namespace aiac::emulation
