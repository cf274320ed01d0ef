#include "spawner/gateways.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace aiac::spawner {
namespace {

const std::vector<std::string> kClusters{"a", "b", "a", "c", "b", "a"};

TEST(GatewaysTest, EachChannelEndHasItsOwnGatewayWhileTheClusterHasTasksToSpare) {
  // Cluster a (tasks 0, 2, 5) talks to b through task 0 and to c through task 2.
  EXPECT_EQ(Gateway(kClusters, "a", "b"), 0u);
  EXPECT_EQ(Gateway(kClusters, "a", "c"), 2u);
  // Cluster b (tasks 1, 4): to a through 1, to c through 4; cluster c's one task serves both.
  EXPECT_EQ(Gateway(kClusters, "b", "a"), 1u);
  EXPECT_EQ(Gateway(kClusters, "b", "c"), 4u);
  EXPECT_EQ(Gateway(kClusters, "c", "a"), 3u);
  EXPECT_EQ(Gateway(kClusters, "c", "b"), 3u);
}

TEST(GatewaysTest, ItemsCrossThroughBothEndsOfTheirChannelAndStayDirectInside) {
  EXPECT_EQ(GatewaysBetween(kClusters, 5, 4), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(GatewaysBetween(kClusters, 0, 4),
            (std::vector<size_t>{1}));  // task 0 is a's gateway to b
  EXPECT_EQ(GatewaysBetween(kClusters, 5, 1),
            (std::vector<size_t>{0}));  // task 1 is b's gateway from a
  EXPECT_EQ(GatewaysBetween(kClusters, 0, 1), (std::vector<size_t>{}));
  EXPECT_EQ(GatewaysBetween(kClusters, 2, 3), (std::vector<size_t>{}));
  EXPECT_EQ(GatewaysBetween(kClusters, 0, 5), (std::vector<size_t>{}));  // inside a
}

TEST(GatewaysTest, EachClusterOfSeveralTasksReportsThroughItsFirstTask) {
  using Groups = std::vector<std::vector<uint32_t>>;
  // c's one task reports straight.
  EXPECT_EQ(ReportGroups(kClusters), (Groups{{0, 2, 5}, {1, 4}}));
  EXPECT_EQ(ReportGroups({"b", "a", "b", "a"}), (Groups{{0, 2}, {1, 3}}));
  // One cluster: the spawner coordinates it; clusters of one task each: nothing to gather.
  EXPECT_EQ(ReportGroups({"a", "a", "a"}), Groups{});
  EXPECT_EQ(ReportGroups({"a", "b", "c"}), Groups{});
  EXPECT_EQ(ReportGroups({}), Groups{});
  // Every task of a cluster with others is in exactly one group, in task order.
  const std::vector<std::string> many{"x", "y", "x", "z", "y", "x", "y", "w"};
  std::vector<int> seen(many.size(), 0);
  for (const auto& g : ReportGroups(many)) {
    EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
    for (uint32_t t : g) {
      ++seen[t];
      EXPECT_EQ(many[t], many[g.front()]);
    }
  }
  EXPECT_EQ(seen, (std::vector<int>{1, 1, 1, 0, 1, 1, 1, 0}));
}

}  // namespace
}  // namespace aiac::spawner
