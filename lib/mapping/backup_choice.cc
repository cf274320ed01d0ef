#include "mapping/backup_choice.h"

#include <algorithm>
#include <tuple>

namespace aiac::mapping {

std::vector<std::vector<int>> ChooseBackups(const std::vector<int>& daemon_of_task,
                                            const std::vector<int>& cluster_of_daemon, int k) {
  const int tasks = static_cast<int>(daemon_of_task.size());
  std::vector<int> keeps(cluster_of_daemon.size(), 0);  // checkpoints each daemon keeps so far
  std::vector<std::vector<int>> out(tasks);
  for (int t = 0; t < tasks; ++t) {
    const int own = daemon_of_task[t];
    const int cluster = cluster_of_daemon[own];
    // Candidates: the daemons of the other tasks. Same cluster first, nearest after the task in
    // ring order: each of a cluster's m daemons is then chosen by its min(k, m - 1) predecessors.
    // The rest, for clusters too small, go to the least loaded daemons of other clusters.
    std::vector<std::tuple<bool, int, int, int>> candidates;
    for (int step = 1; step < tasks; ++step) {
      const int d = daemon_of_task[(t + step) % tasks];
      if (d == own) continue;
      const bool other = cluster_of_daemon[d] != cluster;
      candidates.emplace_back(other, other ? keeps[d] : 0, step, d);
    }
    std::sort(candidates.begin(), candidates.end());
    for (const auto& c : candidates) {
      if (static_cast<int>(out[t].size()) >= k) break;
      const int d = std::get<3>(c);
      out[t].push_back(d);
      ++keeps[d];
    }
  }
  return out;
}

}  // namespace aiac::mapping
