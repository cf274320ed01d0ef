// Where each task runs and the state of every node during a run: the state a mapping
// algorithm starts from and that replacements update. Pure, not thread-safe.
#pragma once

#include <vector>

#include "model/platform.h"
#include "model/tig.h"

namespace aiac::mapping {

class Placement {
 public:
  Placement(const model::Platform& platform, const model::Tig& tig)
      : node_of_task_(tig.size(), -1),
        task_of_node_(platform.nodes().size(), -1),
        failed_(platform.nodes().size(), false),
        platform_(&platform) {}

  // Free = offered by the platform as free, alive, and running none of our tasks.
  bool IsFree(int node) const {
    return platform_->nodes()[node].free && !failed_[node] && task_of_node_[node] < 0;
  }
  void Assign(int task, int node);
  // Marks `node` dead; returns the task it ran (now unplaced), or -1.
  int Fail(int node);

  int node_of(int task) const { return node_of_task_[task]; }
  int task_on(int node) const { return task_of_node_[node]; }
  bool failed(int node) const { return failed_[node]; }
  const std::vector<int>& node_of_task() const { return node_of_task_; }
  // Free nodes of one cluster, most powerful first (ties: id).
  std::vector<int> FreeNodes(int cluster) const;
  // Free nodes of every cluster, in platform order.
  std::vector<int> AllFreeNodes() const;

 private:
  std::vector<int> node_of_task_;
  std::vector<int> task_of_node_;
  std::vector<bool> failed_;
  const model::Platform* platform_;
};

// Most powerful first, ties by id: the node order every algorithm here uses.
bool MorePowerful(const model::Node& a, const model::Node& b);

}  // namespace aiac::mapping
