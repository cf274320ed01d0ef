// The mapping interface shared by MAHEVE and its baselines (default, AIAC-QM, F-EC): an
// initial mapping of a TIG onto a platform's free nodes, then one replacement per failed node.
// One task per node, never two (MAHEVE section 3.3). Pure: no I/O, no threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "mapping/placement.h"
#include "model/platform.h"
#include "model/tig.h"

namespace aiac::mapping {

struct ClusterMark {
  int cluster;  // index into the platform's clusters
  std::string name;
  double mark;
};

struct InitialMapping {
  double hd = 0;                      // heterogeneity degree of the free nodes
  std::vector<ClusterMark> clusters;  // sorted cluster list (MAHEVE only)
  std::vector<int> task_order;        // task indices in the order they were placed
  std::vector<int> reserved;          // free nodes kept for replacements
  Placement placement;
};

class Mapper {
 public:
  virtual ~Mapper() = default;
  virtual std::string_view name() const = 0;
  // Requires platform.free_count() >= tig.size().
  virtual InitialMapping Map(const model::Platform& platform, const model::Tig& tig) const = 0;
  // The node that takes over `task` after its node `failed` died (placement already shows the
  // failure), or -1 when no free node is left. Does not change the placement.
  virtual int Replace(const model::Platform& platform, const model::Tig& tig,
                      const Placement& placement, int failed, int task) const = 0;
};

// "maheve", "default", "aiac-qm" or "f-ec". `reserve` is MAHEVE's share of each cluster's free
// nodes kept for replacements, in [0, 1).
Result<std::unique_ptr<Mapper>> MakeMapper(std::string_view algo, double reserve = 0.1);

// hd (MAHEVE section 3.1, docs/architecture.md, design choices): population standard deviation of
// the free nodes' powers over their mean, clamped to [0, 1]; 0 when there is no free node.
double HeterogeneityDegree(const model::Platform& platform, const Placement& placement);

}  // namespace aiac::mapping
