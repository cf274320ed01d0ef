// Moving items between tasks spread over clusters (docs/balancing.md; distpm-workload-migration.md
// section 4): the tasks' clusters are DistPM's groups. Each cluster's net surplus goes over the
// inter-cluster channels as the LP (3) plans it (or greedily, section 5.1, for comparison); each
// channel's amount is then taken from the cluster's giving tasks and handed to the receiving
// cluster's taking tasks, in task order, and what is left inside a cluster moves inside it.
// Every task ends at its target; items cross between clusters only as the plan says.
//
// Pure: a function of its inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "redistribution/distpm.h"

namespace aiac::redistribution {

enum class ChannelPlanner { kDistPM, kGreedy };

struct ClusterMoveInput {
  std::vector<int> cluster;      // per task: its cluster, an index into alpha / beta
  std::vector<int64_t> items;    // per task: the items it holds
  std::vector<int64_t> surplus;  // per task: items to give (> 0) or to take (< 0); they sum to 0
  std::vector<std::vector<double>> alpha;  // clusters x clusters: a channel's latency, seconds
  std::vector<std::vector<double>> beta;   // clusters x clusters: seconds per item
};

struct TaskTransfer {
  size_t from = 0, to = 0;  // tasks
  int64_t items = 0;
  bool operator==(const TaskTransfer&) const = default;
};

struct ClusterMoves {
  std::vector<Flow> channels;           // items between clusters, as planned
  double makespan = 0;                  // the plan's: max over channels of alpha + beta amount
  std::vector<TaskTransfer> transfers;  // inter-cluster ones first (by channel), then the rest
};

// Errors name the problem (sizes, a surplus above the items held, sums not zero, a cluster
// index out of range).
Result<ClusterMoves> PlanClusterMoves(const ClusterMoveInput& in, ChannelPlanner planner);

}  // namespace aiac::redistribution
