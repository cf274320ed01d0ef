// Which daemons keep each task's checkpoints (docs/fault-tolerance.md): for every
// task, up to `k` daemons that run *other* tasks of the job (a backup dies with its task
// otherwise, and a spare may be taken away as a replacement), preferring daemons of the task's
// own cluster (checkpoints cross no slow link), and spreading the work so that each daemon
// keeps about k checkpoints. Within the cluster: the next daemons after the task's in task
// order (a ring restricted to the cluster, so each daemon of a cluster of m keeps exactly
// min(k, m - 1) of its cluster's checkpoints). Beyond it, for clusters too small: the daemons
// of other clusters keeping the fewest so far, then the nearest in task order.
//
// Pure: a function of the placement and the daemons' clusters.
#pragma once

#include <vector>

namespace aiac::mapping {

// daemon_of_task[t]: the daemon running task t (indices into cluster_of_daemon, one task per
// daemon). Returns, per task, the daemons keeping its checkpoints, best first.
std::vector<std::vector<int>> ChooseBackups(const std::vector<int>& daemon_of_task,
                                            const std::vector<int>& cluster_of_daemon, int k);

}  // namespace aiac::mapping
