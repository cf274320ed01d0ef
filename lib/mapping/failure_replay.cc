#include "mapping/failure_replay.h"

namespace aiac::mapping {

std::vector<Replacement> ReplayFailures(const model::Platform& platform, const model::Tig& tig,
                                        const Mapper& mapper, Placement& placement,
                                        const std::vector<int>& nodes) {
  std::vector<Replacement> out;
  for (int node : nodes) {
    AIAC_CHECK(!placement.failed(node));
    const int task = placement.Fail(node);
    int to = -1;
    if (task >= 0) {
      to = mapper.Replace(platform, tig, placement, node, task);
      if (to >= 0) placement.Assign(task, to);
    }
    out.push_back({node, task, to});
  }
  return out;
}

}  // namespace aiac::mapping
