#include "redistribution/cluster_moves.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>

namespace aiac::redistribution {
namespace {

ClusterMoveInput TwoClusters() {
  // Tasks 0-2 in cluster 0 (overloaded), tasks 3-4 in cluster 1.
  ClusterMoveInput in;
  in.cluster = {0, 0, 0, 1, 1};
  in.items = {100, 100, 100, 100, 100};
  in.surplus = {30, 20, -10, -25, -15};
  in.alpha = {{0, 0.02}, {0.02, 0}};
  in.beta = {{0, 0.001}, {0.001, 0}};
  return in;
}

TEST(ClusterMovesTest, OnlyTheClustersNetSurplusCrossesAndTheRestMovesInside) {
  auto moves = PlanClusterMoves(TwoClusters(), ChannelPlanner::kDistPM);
  ASSERT_TRUE(moves.ok()) << moves.status().message();
  ASSERT_EQ(moves->channels.size(), 1u);
  EXPECT_EQ(moves->channels[0].from, 0);
  EXPECT_EQ(moves->channels[0].to, 1);
  EXPECT_EQ(moves->channels[0].amount, 40);
  EXPECT_NEAR(moves->makespan, 0.02 + 0.001 * 40, 1e-12);
  // Task 0's 30 and 10 of task 1's go across; task 1's other 10 go to task 2 inside cluster 0.
  const std::vector<TaskTransfer> expected{{0, 3, 25}, {0, 4, 5}, {1, 4, 10}, {1, 2, 10}};
  EXPECT_EQ(moves->transfers, expected);
}

TEST(ClusterMovesTest, BadInputIsNamed) {
  ClusterMoveInput in = TwoClusters();
  in.surplus[0] = 31;
  EXPECT_NE(PlanClusterMoves(in, ChannelPlanner::kDistPM).status().message().find("sum to 0"),
            std::string::npos);
  in = TwoClusters();
  in.surplus = {130, -60, -10, -45, -15};
  EXPECT_NE(PlanClusterMoves(in, ChannelPlanner::kDistPM).status().message().find("cannot give"),
            std::string::npos);
  in = TwoClusters();
  in.cluster[4] = 2;
  EXPECT_NE(PlanClusterMoves(in, ChannelPlanner::kGreedy).status().message().find("out of range"),
            std::string::npos);
  in = TwoClusters();
  in.items.pop_back();
  EXPECT_FALSE(PlanClusterMoves(in, ChannelPlanner::kDistPM).ok());
}

// Every task ends at its target, givers only give and takers only take, and the items between
// each pair of clusters are exactly the plan's channel amounts, on random instances.
TEST(ClusterMovesTest, RandomInstancesEndAtTheTargetsAndCrossOnlyAsPlanned) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    const int clusters = 1 + static_cast<int>(rng() % 4);
    const size_t tasks = 1 + rng() % 9;
    ClusterMoveInput in;
    for (size_t t = 0; t < tasks; ++t) {
      in.cluster.push_back(static_cast<int>(rng() % clusters));
      in.items.push_back(static_cast<int64_t>(rng() % 50));
    }
    // Targets: the same total, dealt at random.
    const int64_t total = std::accumulate(in.items.begin(), in.items.end(), int64_t{0});
    std::vector<int64_t> target(tasks, 0);
    for (int64_t k = 0; k < total; ++k) ++target[rng() % tasks];
    for (size_t t = 0; t < tasks; ++t) in.surplus.push_back(in.items[t] - target[t]);
    std::uniform_real_distribution<double> u(0.001, 0.1);
    in.alpha.assign(clusters, std::vector<double>(clusters, 0));
    in.beta.assign(clusters, std::vector<double>(clusters, 0));
    for (auto* m : {&in.alpha, &in.beta})
      for (auto& row : *m)
        for (double& v : row) v = u(rng);
    for (ChannelPlanner planner : {ChannelPlanner::kDistPM, ChannelPlanner::kGreedy}) {
      auto moves = PlanClusterMoves(in, planner);
      ASSERT_TRUE(moves.ok()) << moves.status().message();
      std::vector<int64_t> held = in.items;
      std::map<std::pair<int, int>, int64_t> across;
      for (const TaskTransfer& x : moves->transfers) {
        ASSERT_GT(x.items, 0);
        ASSERT_GT(in.surplus[x.from], 0);
        ASSERT_LT(in.surplus[x.to], 0);
        held[x.from] -= x.items;
        held[x.to] += x.items;
        if (in.cluster[x.from] != in.cluster[x.to])
          across[{in.cluster[x.from], in.cluster[x.to]}] += x.items;
      }
      EXPECT_EQ(held, target) << "round " << round;
      std::map<std::pair<int, int>, int64_t> planned;
      for (const Flow& f : moves->channels) planned[{f.from, f.to}] += f.amount;
      EXPECT_EQ(across, planned) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace aiac::redistribution
