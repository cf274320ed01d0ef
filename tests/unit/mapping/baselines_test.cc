#include "mapping/baselines.h"

#include <gtest/gtest.h>

#include <set>

#include "mapping/failure_replay.h"
#include "mapping_fixtures.h"
#include "model/et_model.h"

namespace aiac::mapping {
namespace {

TEST(DefaultMapperTest, TasksInInputOrderOnNodesInInputOrder) {
  auto p = testing::HandPlatform();
  auto t = testing::HandTig();
  DefaultMapper d;
  auto m = d.Map(p, t);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(m.placement.node_of(i), i);  // n1..n4
  EXPECT_TRUE(m.reserved.empty());
  Placement during = m.placement;
  auto r = ReplayFailures(p, t, d, during, {p.FindNode("n2")});
  EXPECT_EQ(r[0].node, p.FindNode("n5"));  // the only free node left
}

// Handed out across the clusters (a super-node's grant order), the nodes keep that order for the
// default mapping: its tasks and its replacements follow it, not the clusters.
TEST(DefaultMapperTest, NodesInTheOrderTheyWereHandedOut) {
  auto p =
      model::Platform::Build({{"c1", 0.001, {{"n1", 1, true}, {"n2", 1, true}, {"n3", 1, true}}},
                              {"c2", 0.001, {{"n4", 2, true}, {"n5", 4, true}, {"n6", 8, false}}}},
                             {{"c1", "c2", 0.05}}, {"n5", "n2", "n6", "n4", "n1", "n3"});
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto t = testing::HandTig();
  DefaultMapper d;
  auto m = d.Map(*p, t);
  // n6 is busy: skipped.
  const char* expected[] = {"n5", "n2", "n4", "n1"};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p->nodes()[m.placement.node_of(i)].id, expected[i]) << i;
  Placement during = m.placement;
  auto r = ReplayFailures(*p, t, d, during, {p->FindNode("n2")});
  EXPECT_EQ(r[0].node, p->FindNode("n3"));  // the only free node left
}

TEST(DefaultMapperTest, AnOrderThatIsNotOneOfTheNodesIsRefused) {
  const std::vector<model::ClusterSpec> clusters{{"c1", 0.001, {{"n1", 1, true}, {"n2", 1, true}}}};
  struct Case {
    std::vector<std::string> given;
    std::string error;
  };
  for (const auto& c : std::vector<Case>{{{"n1", "n9"}, "the order given names unknown node 'n9'"},
                                         {{"n1", "n1"}, "the order given names node 'n1' twice"},
                                         {{"n2"}, "the order given names 1 of 2 nodes"}}) {
    auto p = model::Platform::Build(clusters, {}, c.given);
    ASSERT_FALSE(p.ok()) << c.error;
    EXPECT_EQ(p.status().message(), c.error);
  }
}

TEST(AiacQmTest, HeaviestTaskGetsTheFastestNode) {
  auto p = testing::HandPlatform();
  auto t = testing::HandTig();
  AiacQm qm;
  auto m = qm.Map(p, t);
  EXPECT_EQ(m.task_order, (std::vector<int>{1, 3, 2, 0}));  // by cost
  EXPECT_EQ(m.placement.node_of(1), p.FindNode("n5"));
  // Task 3 (30): n4 gives 30/2 + 1*0.001 = 15.001, better than c1's 30 + 0.05.
  EXPECT_EQ(m.placement.node_of(3), p.FindNode("n4"));
}

TEST(AiacQmTest, ReplacementMinimisesTaskTimeAmongFreeNodes) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    auto inst = testing::RandomInstance(rng, 1 + trial % 4, 6, 1 + trial % 9, 2);
    const auto& p = inst.platform;
    const auto& t = inst.tig;
    AiacQm qm;
    auto m = qm.Map(p, t);
    Placement during = m.placement;
    const int victim = m.placement.node_of(0);
    during.Fail(victim);
    const int chosen = qm.Replace(p, t, during, victim, 0);
    // Brute force over every free node.
    double best = 1e300;
    for (int n : during.AllFreeNodes()) {
      std::vector<int> at = during.node_of_task();
      at[0] = n;
      best = std::min(best, model::TaskTime(p, t, at, 0));
    }
    if (during.AllFreeNodes().empty()) {
      ASSERT_EQ(chosen, -1);
    } else {
      std::vector<int> at = during.node_of_task();
      at[0] = chosen;
      ASSERT_NEAR(model::TaskTime(p, t, at, 0), best, 1e-9) << "trial " << trial;
    }
  }
}

TEST(FarhatEdgeCutTest, RegionsGrowFromTheHeaviestTaskAlongHeavyEdges) {
  auto p = testing::HandPlatform();
  auto t = testing::HandTig();
  FarhatEdgeCut fec;
  auto m = fec.Map(p, t);
  // c2 has the most free power (6 vs 3) and 2 free nodes: task 1 (heaviest) and its heaviest
  // neighbour, 0 (volume 5, lower id than 2), go there; then c1 gets the region from 3.
  EXPECT_EQ(m.task_order, (std::vector<int>{1, 0, 3, 2}));
  EXPECT_EQ(p.nodes()[m.placement.node_of(1)].cluster, 1);
  EXPECT_EQ(p.nodes()[m.placement.node_of(0)].cluster, 1);
  EXPECT_EQ(p.nodes()[m.placement.node_of(3)].cluster, 0);
}

TEST(FarhatEdgeCutTest, ReplacementGoesWhereMostNeighboursAre) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    auto inst = testing::RandomInstance(rng, 2 + trial % 3, 6, 1 + trial % 11, 1);
    const auto& p = inst.platform;
    const auto& t = inst.tig;
    FarhatEdgeCut fec;
    auto m = fec.Map(p, t);
    Placement during = m.placement;
    const int victim = m.placement.node_of(0);
    during.Fail(victim);
    const int chosen = fec.Replace(p, t, during, victim, 0);
    if (chosen < 0) {
      ASSERT_TRUE(during.AllFreeNodes().empty());
      continue;
    }
    std::vector<int> held(p.clusters().size(), 0);
    for (const auto& n : t.neighbours(0)) {
      if (during.node_of(n.task) >= 0) ++held[p.nodes()[during.node_of(n.task)].cluster];
    }
    int best = 0;
    for (int c = 0; c < static_cast<int>(p.clusters().size()); ++c) {
      if (!during.FreeNodes(c).empty()) best = std::max(best, held[c]);
    }
    const int c = p.nodes()[chosen].cluster;
    ASSERT_EQ(held[c], best) << "trial " << trial;
    ASSERT_EQ(chosen, during.FreeNodes(c).front());
  }
}

TEST(MapperTest, EveryAlgorithmPlacesEachTaskOnItsOwnFreeNodeDeterministically) {
  std::mt19937 rng(3);
  for (const char* algo : {"maheve", "default", "aiac-qm", "f-ec"}) {
    auto mapper = MakeMapper(algo, 0.1);
    ASSERT_TRUE(mapper.ok());
    for (int trial = 0; trial < 150; ++trial) {
      auto inst = testing::RandomInstance(rng, 1 + trial % 6, 7, 1 + trial % 20, trial % 2 ? 3 : 0);
      auto m = (*mapper)->Map(inst.platform, inst.tig);
      std::set<int> used;
      for (int i = 0; i < static_cast<int>(inst.tig.size()); ++i) {
        const int n = m.placement.node_of(i);
        ASSERT_GE(n, 0) << algo;
        ASSERT_TRUE(inst.platform.nodes()[n].free) << algo;
        ASSERT_TRUE(used.insert(n).second) << algo;
      }
      auto again = (*mapper)->Map(inst.platform, inst.tig);
      ASSERT_EQ(again.placement.node_of_task(), m.placement.node_of_task()) << algo;
      // Failing every used node in turn keeps one task per node.
      Placement during = m.placement;
      std::vector<int> victims(used.begin(), used.end());
      auto r = ReplayFailures(inst.platform, inst.tig, **mapper, during, victims);
      std::set<int> now;
      for (int i = 0; i < static_cast<int>(inst.tig.size()); ++i) {
        const int n = during.node_of(i);
        if (n < 0) continue;
        ASSERT_FALSE(during.failed(n)) << algo;
        ASSERT_TRUE(now.insert(n).second) << algo;
      }
    }
  }
}

TEST(MapperTest, UnknownAlgorithmAndBadReserveRefused) {
  EXPECT_FALSE(MakeMapper("metis").ok());
  EXPECT_FALSE(MakeMapper("maheve", 1.0).ok());
  EXPECT_FALSE(MakeMapper("maheve", -0.1).ok());
}

}  // namespace
}  // namespace aiac::mapping
