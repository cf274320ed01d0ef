#include "mapping/placement.h"

#include <algorithm>

namespace aiac::mapping {

bool MorePowerful(const model::Node& a, const model::Node& b) {
  if (a.power != b.power) return a.power > b.power;
  return a.id < b.id;
}

void Placement::Assign(int task, int node) {
  AIAC_CHECK(IsFree(node));
  AIAC_CHECK(node_of_task_[task] < 0);
  node_of_task_[task] = node;
  task_of_node_[node] = task;
}

int Placement::Fail(int node) {
  failed_[node] = true;
  const int task = task_of_node_[node];
  if (task >= 0) {
    node_of_task_[task] = -1;
    task_of_node_[node] = -1;
  }
  return task;
}

std::vector<int> Placement::FreeNodes(int cluster) const {
  std::vector<int> out;
  for (int n : platform_->clusters()[cluster].nodes) {
    if (IsFree(n)) out.push_back(n);
  }
  const auto& nodes = platform_->nodes();
  std::sort(out.begin(), out.end(), [&](int a, int b) { return MorePowerful(nodes[a], nodes[b]); });
  return out;
}

std::vector<int> Placement::AllFreeNodes() const {
  std::vector<int> out;
  for (int n = 0; n < static_cast<int>(platform_->nodes().size()); ++n) {
    if (IsFree(n)) out.push_back(n);
  }
  return out;
}

}  // namespace aiac::mapping
