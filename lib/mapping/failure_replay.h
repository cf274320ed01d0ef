// Failing nodes one after the other and asking the algorithm for each replacement: what the
// spawner does during a run, and what `aiac-spawner map --fail` shows. Pure.
#pragma once

#include <vector>

#include "mapping/mapper.h"

namespace aiac::mapping {

struct Replacement {
  int failed;  // node index
  int task;    // task it ran, or -1 (it ran none of ours)
  int node;    // node that took the task over, or -1 (no task to move, or no free node left)
};

// Fails `nodes` in order on `placement` (updated in place). Requires each node to be alive.
std::vector<Replacement> ReplayFailures(const model::Platform& platform, const model::Tig& tig,
                                        const Mapper& mapper, Placement& placement,
                                        const std::vector<int>& nodes);

}  // namespace aiac::mapping
