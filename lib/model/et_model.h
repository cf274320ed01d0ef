// The execution-time model of MAHEVE section 3.1, which scores any mapping:
//   ET(V_i) = e_i / wn_i + sum_{j in J} c_ij * wl_ij      ET(App) = max_i ET(V_i)
// where wn_i is the power of the node task i is on and wl_ij the latency between the nodes of
// i and j. Pure.
#pragma once

#include <vector>

#include "model/platform.h"
#include "model/tig.h"

namespace aiac::model {

// node_of_task[i] = node index of task i, or -1 when unplaced. ET(V_i) of a placed task counts
// only its placed neighbours (so greedy algorithms can score partial mappings).
double TaskTime(const Platform& platform, const Tig& tig, const std::vector<int>& node_of_task,
                int task);
// ET(App) over the placed tasks; 0 when none is placed.
double AppTime(const Platform& platform, const Tig& tig, const std::vector<int>& node_of_task);

}  // namespace aiac::model
