#include "model/et_model.h"

#include <algorithm>

namespace aiac::model {

double TaskTime(const Platform& platform, const Tig& tig, const std::vector<int>& node_of_task,
                int task) {
  const int node = node_of_task[task];
  // MAHEVE section 3.1: ET(V_i) = e_i / wn_i + sum_j c_ij * wl_ij.
  double t = tig.cost(task) / platform.nodes()[node].power;
  for (const Adjacent& n : tig.neighbours(task)) {
    const int other = node_of_task[n.task];
    if (other >= 0) t += n.volume * platform.Latency(node, other);
  }
  return t;
}

double AppTime(const Platform& platform, const Tig& tig, const std::vector<int>& node_of_task) {
  double worst = 0;  // MAHEVE section 3.1: ET(App) = max_i ET(V_i)
  for (int i = 0; i < static_cast<int>(tig.size()); ++i) {
    if (node_of_task[i] >= 0) worst = std::max(worst, TaskTime(platform, tig, node_of_task, i));
  }
  return worst;
}

}  // namespace aiac::model
