// MAHEVE (maheve-mapping.md section 4, choices in docs/architecture.md, design choices): clusters
// sorted by the mark of eq. (1), tasks by the score of eq. (2) with Nb_i dependencies pulled in
// after each, tasks mapped in list order onto the most powerful free nodes of the clusters in mark
// order, keeping a reserve of each cluster's least powerful free nodes for replacements. A failed
// node's task goes to the best free node of its cluster, else of the re-sorted clusters.
//
// The phases are public so that tests can check each against the equations. Pure.
#pragma once

#include "mapping/mapper.h"

namespace aiac::mapping {

// Clusters sorted by M_i = normP_i^hd + normN_i^(1-hd) (eq. 1), descending, ties by name,
// computed on the currently free nodes. Clusters without a free node have C_F = 0, C_Pf = 0.
std::vector<ClusterMark> SortClusters(const model::Platform& platform, const Placement& placement,
                                      double hd);
// Q_i = e_i^hd * d_i^(1-hd) (eq. 2).
double TaskScore(const model::Tig& tig, int task, double hd);
// The final task list: tasks by Q descending (ties: id); after each, up to
// Nb_i = ceil(d_i^(1-hd)) of its not yet listed dependencies, by Q descending (ties: id).
std::vector<int> TaskList(const model::Tig& tig, double hd);
// Free nodes of a cluster kept free: ceil(reserve x free) (0.1 x 30 = 3), at least one when the
// cluster has more than one free node and reserve > 0, none when it has a single free node.
int ReserveCount(int free_nodes, double reserve);

class Maheve final : public Mapper {
 public:
  explicit Maheve(double reserve) : reserve_(reserve) {}
  std::string_view name() const override { return "maheve"; }
  InitialMapping Map(const model::Platform& platform, const model::Tig& tig) const override;
  int Replace(const model::Platform& platform, const model::Tig& tig, const Placement& placement,
              int failed, int task) const override;

 private:
  double reserve_;
};

}  // namespace aiac::mapping
