#include "mapping/maheve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "mapping/failure_replay.h"
#include "mapping_fixtures.h"
#include "model/et_model.h"

namespace aiac::mapping {
namespace {

using testing::HandPlatform;
using testing::HandTig;

// Free powers 1, 1, 1, 2, 4 (n6 is busy): mean 1.8, population variance 6.8 / 5 = 1.36.
const double kHandHd = std::sqrt(1.36) / 1.8;

TEST(MaheveTest, HandWorkedHeterogeneityAndMarks) {
  auto p = HandPlatform();
  auto t = HandTig();
  Placement placement(p, t);
  EXPECT_NEAR(HeterogeneityDegree(p, placement), kHandHd, 1e-12);
  // normN: c1 3/5 -> 60, c2 2/5 -> 40. normP: mean free power c1 1, c2 3 -> 25, 75.
  auto marks = SortClusters(p, placement, kHandHd);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].name, "c2");
  EXPECT_NEAR(marks[0].mark, std::pow(75, kHandHd) + std::pow(40, 1 - kHandHd), 1e-9);
  EXPECT_EQ(marks[1].name, "c1");
  EXPECT_NEAR(marks[1].mark, std::pow(25, kHandHd) + std::pow(60, 1 - kHandHd), 1e-9);
}

TEST(MaheveTest, HandWorkedTaskList) {
  auto t = HandTig();
  // Q = e^hd d^(1-hd): Q1 = 40^hd 3^(1-hd) > Q3 = 30^hd 2^(1-hd) > Q2 = 20^hd 2^(1-hd) > Q0 =
  // 10^hd.
  EXPECT_NEAR(TaskScore(t, 1, kHandHd), std::pow(40, kHandHd) * std::pow(3, 1 - kHandHd), 1e-12);
  // Task 1 first; Nb_1 = ceil(3^0.352) = 2 pulls in its best unlisted dependencies 3 and 2;
  // tasks 3 and 2 have no unlisted dependency left; task 0 comes last.
  EXPECT_EQ(TaskList(t, kHandHd), (std::vector<int>{1, 3, 2, 0}));
}

TEST(MaheveTest, HandWorkedMappingReserveAndReplacements) {
  auto p = HandPlatform();
  auto t = HandTig();
  Maheve maheve(0.1);
  InitialMapping m = maheve.Map(p, t);
  // c2 first: n5 usable, n4 reserved (least powerful). c1: n1, n2 usable, n3 reserved.
  // List 1, 3, 2 fills n5, n1, n2; task 0 then takes the first reserved node in cluster order: n4.
  auto node = [&](const char* id) { return p.FindNode(id); };
  EXPECT_EQ(m.placement.node_of(1), node("n5"));
  EXPECT_EQ(m.placement.node_of(3), node("n1"));
  EXPECT_EQ(m.placement.node_of(2), node("n2"));
  EXPECT_EQ(m.placement.node_of(0), node("n4"));
  EXPECT_EQ(m.reserved, (std::vector<int>{node("n3")}));
  EXPECT_NEAR(model::AppTime(p, t, m.placement.node_of_task()), 30.052, 1e-12);

  Placement during = m.placement;
  auto r = ReplayFailures(p, t, maheve, during, {node("n5"), node("n1"), node("n6")});
  ASSERT_EQ(r.size(), 3u);
  // n5 dies: c2 has no free node left, so clusters are re-sorted: only c1 (n3) has one.
  EXPECT_EQ(r[0].task, 1);
  EXPECT_EQ(r[0].node, node("n3"));
  // n1 dies: no free node anywhere.
  EXPECT_EQ(r[1].task, 3);
  EXPECT_EQ(r[1].node, -1);
  // n6 ran none of our tasks.
  EXPECT_EQ(r[2].task, -1);
  EXPECT_EQ(r[2].node, -1);
}

TEST(MaheveTest, ReserveCountRule) {
  EXPECT_EQ(ReserveCount(30, 0.1), 3);  // not 4: 0.1 x 30 is 3.0000000000000004 in doubles
  EXPECT_EQ(ReserveCount(31, 0.1), 4);
  EXPECT_EQ(ReserveCount(5, 0.1), 1);  // at least one when more than one free node
  EXPECT_EQ(ReserveCount(2, 0.1), 1);
  EXPECT_EQ(ReserveCount(1, 0.1), 0);  // never the only free node
  EXPECT_EQ(ReserveCount(0, 0.1), 0);
  EXPECT_EQ(ReserveCount(10, 0.0), 0);
  EXPECT_EQ(ReserveCount(10, 0.25), 3);
}

TEST(MaheveTest, HomogeneousPlatformRanksByNodeCountAndDegree) {
  // hd -> 0: every power equal. Marks reduce to 1 + normN, Q to d.
  auto p =
      model::Platform::Build({{"small", 0.001, {{"a", 2, true}}},
                              {"big", 0.001, {{"b", 2, true}, {"c", 2, true}, {"d", 2, true}}}},
                             {{"small", "big", 0.01}});
  ASSERT_TRUE(p.ok());
  auto t = model::Tig::Build({{0, 100}, {1, 1}, {2, 1}}, {{1, 2, 1}, {1, 0, 1}});
  ASSERT_TRUE(t.ok());
  Placement placement(*p, *t);
  const double hd = HeterogeneityDegree(*p, placement);
  EXPECT_EQ(hd, 0);
  auto marks = SortClusters(*p, placement, hd);
  EXPECT_EQ(marks[0].name, "big");
  EXPECT_NEAR(marks[0].mark, 1 + 75, 1e-12);
  EXPECT_NEAR(marks[1].mark, 1 + 25, 1e-12);
  EXPECT_EQ(TaskScore(*t, 0, hd), 1);  // d_0 = 1, cost ignored
  EXPECT_EQ(TaskScore(*t, 1, hd), 2);
  EXPECT_EQ(TaskList(*t, hd).front(), 1);  // highest degree first although cheapest
}

TEST(MaheveTest, VeryHeterogeneousPlatformRanksByPowerAndCost) {
  // hd -> 1 (clamped): marks reduce to normP + 1, Q to e.
  auto p = model::Platform::Build(
      {{"many", 0.001, {{"a", 1, true}, {"b", 1, true}, {"c", 1, true}, {"d", 1, true}}},
       {"fast", 0.001, {{"e", 100, true}}}},
      {{"many", "fast", 0.01}});
  ASSERT_TRUE(p.ok());
  auto t = model::Tig::Build({{0, 100}, {1, 1}, {2, 1}}, {{1, 2, 1}, {1, 0, 1}});
  ASSERT_TRUE(t.ok());
  Placement placement(*p, *t);
  const double hd = HeterogeneityDegree(*p, placement);
  EXPECT_EQ(hd, 1);
  auto marks = SortClusters(*p, placement, hd);
  EXPECT_EQ(marks[0].name, "fast");
  EXPECT_NEAR(marks[0].mark, 100.0 * 100 / 101 + 1, 1e-9);
  EXPECT_EQ(TaskScore(*t, 0, hd), 100);  // degree ignored
  EXPECT_EQ(TaskList(*t, hd).front(), 0);
  // Nb_i = ceil(d^0) = 1: each task pulls in one dependency at most.
  EXPECT_EQ(TaskList(*t, hd), (std::vector<int>{0, 1, 2}));
}

TEST(MaheveTest, InvariantsOnRandomInstances) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    auto inst = testing::RandomInstance(rng, 1 + trial % 5, 8, 1 + trial % 17, trial % 3 ? 1.5 : 0);
    const auto& p = inst.platform;
    const auto& t = inst.tig;
    Maheve maheve(0.1);
    InitialMapping m = maheve.Map(p, t);
    // Every task on its own free node.
    std::set<int> used;
    for (int i = 0; i < static_cast<int>(t.size()); ++i) {
      const int n = m.placement.node_of(i);
      ASSERT_GE(n, 0);
      ASSERT_TRUE(p.nodes()[n].free);
      ASSERT_TRUE(used.insert(n).second);
    }
    // The list holds every task once.
    std::vector<int> order = m.task_order;
    std::sort(order.begin(), order.end());
    for (int i = 0; i < static_cast<int>(t.size()); ++i) ASSERT_EQ(order[i], i);
    // Reserve kept: a cluster's reserved nodes are used only when every cluster's usable nodes are.
    Placement fresh(p, t);
    int usable_total = 0;
    for (int c = 0; c < static_cast<int>(p.clusters().size()); ++c) {
      const int f = static_cast<int>(fresh.FreeNodes(c).size());
      usable_total += f - ReserveCount(f, 0.1);
    }
    if (static_cast<int>(t.size()) <= usable_total) {
      for (int c = 0; c < static_cast<int>(p.clusters().size()); ++c) {
        const auto free_nodes = fresh.FreeNodes(c);
        const int keep = ReserveCount(static_cast<int>(free_nodes.size()), 0.1);
        for (int k = static_cast<int>(free_nodes.size()) - keep;
             k < static_cast<int>(free_nodes.size()); ++k) {
          ASSERT_LT(m.placement.task_on(free_nodes[k]), 0) << "reserved node used, trial " << trial;
        }
      }
    }
    // Deterministic.
    InitialMapping again = maheve.Map(p, t);
    ASSERT_EQ(again.placement.node_of_task(), m.placement.node_of_task());
    ASSERT_EQ(again.reserved, m.reserved);
    // Replacement: same cluster's most powerful free node when there is one.
    Placement during = m.placement;
    const int victim = m.placement.node_of(0);
    const auto same_before = [&] {
      Placement copy = during;
      copy.Fail(victim);
      return copy.FreeNodes(p.nodes()[victim].cluster);
    }();
    auto r = ReplayFailures(p, t, maheve, during, {victim});
    if (!same_before.empty()) {
      ASSERT_EQ(r[0].node, same_before.front());
    } else if (r[0].node >= 0) {
      ASSERT_NE(p.nodes()[r[0].node].cluster, p.nodes()[victim].cluster);
    }
    if (r[0].node >= 0) {
      ASSERT_EQ(during.node_of(0), r[0].node);
    }
  }
}

}  // namespace
}  // namespace aiac::mapping
