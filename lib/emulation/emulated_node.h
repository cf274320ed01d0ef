// One daemon of an emulated platform (docs/emulation.md): the node of a platform file it plays
// (its id is the node's, "<cluster>-<k>"), the links from it to every other node, and how long
// its iterations take. On one machine every daemon computes at the same speed and every link
// is loopback; an emulated node makes each iteration last
//
//   cpu x slowdown / power x (1 + competing jobs)
//
// where cpu is the CPU time the iteration really used (not its wall time, which the other
// daemons sharing the cores inflate), `slowdown` (at least 1) makes these emulated times
// dominate the real ones when hundreds of daemons share a few cores (they then mostly sleep),
// and the competing jobs are the background load of Lee & Cho's model, drawn from the
// cluster's `background`: normal(mean_jobs, std_jobs) clamped at 0, redrawn every mean_size
// seconds, from a seed per node. Messages between nodes take the latency and bandwidth of their
// pair of clusters (the transport applies them, net/connection.h).
//
// Pure: times are passed in; the random draws are a function of the seed and the call order.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "core/status.h"
#include "emulation/platform_file.h"

namespace aiac::emulation {

struct LinkFigures {
  double latency_seconds = 0;
  double bytes_per_second = 0;
};

class EmulatedNode {
 public:
  // The node `node_id` of `platform`; refused when it has no such node or slowdown < 1.
  static Result<EmulatedNode> Make(const PlatformFile& platform, const std::string& node_id,
                                   double slowdown, uint64_t seed);

  const std::string& id() const { return id_; }
  const std::string& cluster() const { return cluster_; }
  double power() const { return power_; }
  double slowdown() const { return slowdown_; }
  // The link to another node of the platform, by its id; nullopt for a peer that is not one (a
  // spawner, a super-node): those messages are not delayed.
  std::optional<LinkFigures> LinkTo(const std::string& peer_id) const;
  // Wall seconds an iteration that used `cpu_seconds` of CPU takes here, `now_seconds` after the
  // node started (for the background load's draws).
  double IterationSeconds(double cpu_seconds, double now_seconds);
  // The competing jobs now (after the last IterationSeconds).
  double competing_jobs() const { return jobs_; }

 private:
  EmulatedNode() = default;

  PlatformFile platform_;
  std::string id_, cluster_;
  double power_ = 1, slowdown_ = 1;
  std::optional<BackgroundSpec> background_;
  std::mt19937_64 rng_;
  double jobs_ = 0, next_draw_ = 0;
};

// Lee & Cho's background load, as every emulated node and a daemon's --background draw it: the
// competing jobs, normal(mean_jobs, std_jobs) clamped at 0 (mean_jobs when std_jobs is 0).
double DrawCompetingJobs(const BackgroundSpec& spec, std::mt19937_64& rng);

// The cluster of a node id "<cluster>-<k>" of `platform`, or nullopt.
std::optional<std::string> ClusterOfNode(const PlatformFile& platform, const std::string& node_id);

}  // namespace aiac::emulation
