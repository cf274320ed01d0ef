// The baselines of MAHEVE's evaluation (section 5), behind the same interface:
// - default: JaceP2P-V2's policy, nodes in the order given (Platform::given_order: the order a
//   super-node handed them out, whatever their clusters), replacement by the first free node;
// - AIAC-QM: tasks by decreasing cost, each on the free node minimising its ET(V_i) given the
//   neighbours already placed; FT-AIAC-QM replaces with the free node of best ET(V_i);
// - F-EC: Farhat-style edge cuts, breadth-first regions of the TIG grown from the heaviest
//   unplaced task fill the clusters one after the other (most free power first); FT-FEC
//   replaces with a free node of the cluster holding most of the task's neighbours.
// None of them reserves nodes. Pure.
#pragma once

#include "mapping/mapper.h"

namespace aiac::mapping {

class DefaultMapper final : public Mapper {
 public:
  std::string_view name() const override { return "default"; }
  InitialMapping Map(const model::Platform& platform, const model::Tig& tig) const override;
  int Replace(const model::Platform& platform, const model::Tig& tig, const Placement& placement,
              int failed, int task) const override;

 private:
  static std::vector<int> FreeInGivenOrder(const model::Platform& platform,
                                           const Placement& placement);
};

class AiacQm final : public Mapper {
 public:
  std::string_view name() const override { return "aiac-qm"; }
  InitialMapping Map(const model::Platform& platform, const model::Tig& tig) const override;
  int Replace(const model::Platform& platform, const model::Tig& tig, const Placement& placement,
              int failed, int task) const override;
};

class FarhatEdgeCut final : public Mapper {
 public:
  std::string_view name() const override { return "f-ec"; }
  InitialMapping Map(const model::Platform& platform, const model::Tig& tig) const override;
  int Replace(const model::Platform& platform, const model::Tig& tig, const Placement& placement,
              int failed, int task) const override;
};

// The free node minimising ET(V_task) given the placed neighbours (ties: most powerful, then
// id), or -1. Exposed for tests.
int BestEtNode(const model::Platform& platform, const model::Tig& tig, const Placement& placement,
               int task);

}  // namespace aiac::mapping
