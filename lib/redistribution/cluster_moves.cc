#include "redistribution/cluster_moves.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <string>

namespace aiac::redistribution {
namespace {

Status Check(const ClusterMoveInput& in) {
  const size_t n = in.cluster.size();
  if (n == 0) return InvalidArgument("no tasks");
  if (in.items.size() != n || in.surplus.size() != n) {
    return InvalidArgument("cluster, items and surplus must have one entry per task");
  }
  const size_t clusters = in.alpha.size();
  if (in.beta.size() != clusters)
    return InvalidArgument("alpha and beta must be clusters x clusters");
  for (size_t t = 0; t < n; ++t) {
    if (in.cluster[t] < 0 || static_cast<size_t>(in.cluster[t]) >= clusters) {
      return InvalidArgument("task " + std::to_string(t) + ": cluster " +
                             std::to_string(in.cluster[t]) + " out of range");
    }
    if (in.items[t] < 0 || in.surplus[t] > in.items[t]) {
      return InvalidArgument("task " + std::to_string(t) + " cannot give " +
                             std::to_string(in.surplus[t]) + " of its " +
                             std::to_string(in.items[t]) + " items");
    }
  }
  if (std::accumulate(in.surplus.begin(), in.surplus.end(), int64_t{0}) != 0) {
    return InvalidArgument("the surpluses do not sum to 0");
  }
  return Status::Ok();
}

struct Share {
  size_t task;
  int64_t left;
};

// Moves `amount` from the front of `givers` to the front of `takers`, appending the transfers.
void Pour(int64_t amount, std::deque<Share>& givers, std::deque<Share>& takers,
          std::vector<TaskTransfer>& out) {
  while (amount > 0 && !givers.empty() && !takers.empty()) {
    const int64_t k = std::min({amount, givers.front().left, takers.front().left});
    if (!out.empty() && out.back().from == givers.front().task &&
        out.back().to == takers.front().task) {
      out.back().items += k;
    } else {
      out.push_back({givers.front().task, takers.front().task, k});
    }
    amount -= k;
    if ((givers.front().left -= k) == 0) givers.pop_front();
    if ((takers.front().left -= k) == 0) takers.pop_front();
  }
}

}  // namespace

Result<ClusterMoves> PlanClusterMoves(const ClusterMoveInput& in, ChannelPlanner planner) {
  AIAC_RETURN_IF_ERROR(Check(in));
  const size_t clusters = in.alpha.size();
  MigrationInput groups;
  groups.alpha = in.alpha;
  groups.beta = in.beta;
  groups.groups.resize(clusters);
  std::vector<std::deque<Share>> givers(clusters), takers(clusters);
  for (size_t c = 0; c < clusters; ++c) groups.groups[c].name = "cluster " + std::to_string(c);
  for (size_t t = 0; t < in.cluster.size(); ++t) {
    Group& g = groups.groups[static_cast<size_t>(in.cluster[t])];
    g.load += static_cast<double>(in.items[t]);
    g.target += static_cast<double>(in.items[t] - in.surplus[t]);
    if (in.surplus[t] > 0) givers[static_cast<size_t>(in.cluster[t])].push_back({t, in.surplus[t]});
    if (in.surplus[t] < 0)
      takers[static_cast<size_t>(in.cluster[t])].push_back({t, -in.surplus[t]});
  }
  AIAC_RETURN_IF_ERROR(CheckMigrationInput(groups));
  MigrationPlan plan;
  if (planner == ChannelPlanner::kDistPM) {
    AIAC_ASSIGN_OR_RETURN(auto plans, PlanMigration(groups));
    plan = std::move(plans.distpm);
  } else {
    plan = GreedyMigration(groups);
  }
  ClusterMoves out;
  out.channels = plan.flows;
  out.makespan = plan.makespan;
  // An overloaded cluster's givers hold its excess plus what its own takers need (and the other
  // way round), so each channel's amount is there to take; the rest stays inside.
  for (const Flow& f : plan.flows) {
    Pour(f.amount, givers[static_cast<size_t>(f.from)], takers[static_cast<size_t>(f.to)],
         out.transfers);
  }
  for (size_t c = 0; c < clusters; ++c) {
    Pour(std::numeric_limits<int64_t>::max(), givers[c], takers[c], out.transfers);
  }
  return out;
}

}  // namespace aiac::redistribution
