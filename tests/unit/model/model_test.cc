#include <gtest/gtest.h>

#include "../mapping/mapping_fixtures.h"
#include "model/et_model.h"
#include "model/platform.h"
#include "model/tig.h"

namespace aiac::model {
namespace {

TEST(PlatformTest, LatencyIsIntraClusterOrThePairs) {
  Platform p = mapping::testing::HandPlatform();
  ASSERT_EQ(p.nodes().size(), 6u);
  EXPECT_EQ(p.free_count(), 5u);
  const int n1 = p.FindNode("n1"), n2 = p.FindNode("n2"), n4 = p.FindNode("n4");
  EXPECT_DOUBLE_EQ(p.Latency(n1, n2), 0.001);
  EXPECT_DOUBLE_EQ(p.Latency(n1, n4), 0.05);
  EXPECT_DOUBLE_EQ(p.Latency(n4, n1), 0.05);
  EXPECT_EQ(p.FindNode("nope"), -1);
}

TEST(PlatformTest, BadPlatformsNameTheProblem) {
  auto msg = [](std::vector<ClusterSpec> c, std::vector<InterLatency> l) {
    auto p = Platform::Build(std::move(c), std::move(l));
    return p.ok() ? std::string("ok") : p.status().message();
  };
  EXPECT_EQ(msg({{"a", 0, {{"x", 1, true}}}, {"a", 0, {}}}, {}), "duplicate cluster name 'a'");
  EXPECT_EQ(msg({{"a", 0, {{"x", 1, true}, {"x", 2, true}}}}, {}), "duplicate node id 'x'");
  EXPECT_EQ(msg({{"a", 0, {{"x", 0, true}}}}, {}), "node 'x': power must be positive");
  EXPECT_EQ(msg({{"a", 0, {{"x", -1, true}}}}, {}), "node 'x': power must be positive");
  EXPECT_EQ(msg({{"a", 0, {}}, {"b", 0, {}}}, {}), "no inter_latency for clusters 'a' and 'b'");
  EXPECT_EQ(msg({{"a", 0, {}}}, {{"a", "z", 1}}), "inter_latency names unknown cluster 'z'");
  EXPECT_EQ(msg({{"a", 0, {}}, {"b", 0, {}}}, {{"a", "b", 1}, {"b", "a", 1}}),
            "inter_latency b-a is given twice");
  EXPECT_EQ(msg({{"a", -1, {}}}, {}), "cluster 'a': latency must be a non-negative number");
}

TEST(TigTest, DegreesCountDistinctNeighbours) {
  Tig t = mapping::testing::HandTig();
  EXPECT_EQ(t.degree(0), 1);
  EXPECT_EQ(t.degree(1), 3);
  EXPECT_EQ(t.degree(2), 2);
  EXPECT_EQ(t.degree(3), 2);
}

TEST(TigTest, BadGraphsNameTheProblem) {
  auto msg = [](std::vector<TaskSpec> t, std::vector<EdgeSpec> e) {
    auto g = Tig::Build(std::move(t), std::move(e));
    return g.ok() ? std::string("ok") : g.status().message();
  };
  EXPECT_EQ(msg({{1, 1}, {1, 2}}, {}), "duplicate task id 1");
  EXPECT_EQ(msg({{1, 0}}, {}), "task 1: cost must be positive");
  EXPECT_EQ(msg({{1, 1}}, {{1, 7, 1}}), "edge 1-7 names unknown task 7");
  EXPECT_EQ(msg({{1, 1}}, {{1, 1, 1}}), "edge 1-1 joins a task to itself");
  EXPECT_EQ(msg({{1, 1}, {2, 1}}, {{1, 2, 1}, {2, 1, 3}}), "edge 2-1 is given twice");
  EXPECT_EQ(msg({{1, 1}, {2, 1}}, {{1, 2, -1}}), "edge 1-2: volume must be a non-negative number");
}

TEST(EtModelTest, HandWorkedMapping) {
  Platform p = mapping::testing::HandPlatform();
  Tig t = mapping::testing::HandTig();
  // 0->n4, 1->n5, 2->n2, 3->n1.
  std::vector<int> at = {p.FindNode("n4"), p.FindNode("n5"), p.FindNode("n2"), p.FindNode("n1")};
  // ET(V_1) = 40/4 + 5*0.001 (0 on n4, same cluster) + 5*0.05 (2 on c1) + 1*0.05 (3 on c1).
  EXPECT_NEAR(TaskTime(p, t, at, 1), 10 + 0.005 + 0.25 + 0.05, 1e-12);
  // ET(V_3) = 30/1 + 1*0.05 + 2*0.001, the slowest task.
  EXPECT_NEAR(TaskTime(p, t, at, 3), 30.052, 1e-12);
  EXPECT_NEAR(AppTime(p, t, at), 30.052, 1e-12);
  // Unplaced neighbours do not count; nothing placed gives 0.
  std::vector<int> partial = {-1, at[1], -1, -1};
  EXPECT_NEAR(TaskTime(p, t, partial, 1), 10, 1e-12);
  EXPECT_EQ(AppTime(p, t, {-1, -1, -1, -1}), 0);
}

}  // namespace
}  // namespace aiac::model
