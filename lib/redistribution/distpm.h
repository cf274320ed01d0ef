// DistPM workload migration planning (distpm-workload-migration.md section 4.2): groups
// (clusters) with a current and a target load; overloaded groups O send their excess to
// underloaded groups U over the |O| x |U| channels, each costing alpha_ij + beta_ij * items.
//
// - DistPM: LP (3), minimise T with T >= alpha_ij + beta_ij delta_ij on every channel of
//   O x U, each group's outgoing (incoming) amounts summing to its excess (deficit), delta >= 0;
//   then integer amounts by a rounding that keeps every sum exact.
// - Greedy (section 5.1): channels fastest first (beta, then alpha), each filled with as much as
//   both ends still allow.
// Both are compared on the makespan: the largest alpha_ij + beta_ij amount_ij over the channels
// actually used. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace aiac::redistribution {

struct Group {
  std::string name;
  double load = 0;    // items now (a whole number)
  double target = 0;  // items after migration (a whole number)
};

struct MigrationInput {
  std::vector<Group> groups;
  std::vector<std::vector<double>> alpha;  // n x n, seconds
  std::vector<std::vector<double>> beta;   // n x n, seconds per item
};

struct Flow {
  int from, to;  // group indices
  int64_t amount;
};

struct MigrationPlan {
  double lp_objective = 0;  // DistPM: the LP's optimal T (before rounding)
  double makespan = 0;
  std::vector<Flow> flows;  // amount > 0 only, by (from, to)
};

struct MigrationPlans {
  std::vector<int> overloaded, underloaded;  // group indices, input order
  MigrationPlan distpm, greedy;
};

// Checks sizes, signs, whole numbers and that total load equals total target.
Status CheckMigrationInput(const MigrationInput& in);
// Requires CheckMigrationInput(in).ok().
Result<MigrationPlans> PlanMigration(const MigrationInput& in);
MigrationPlan GreedyMigration(const MigrationInput& in);
double Makespan(const MigrationInput& in, const std::vector<Flow>& flows);

}  // namespace aiac::redistribution
