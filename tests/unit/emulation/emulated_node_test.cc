// A daemon's emulated node: its power and cluster from its id, the links to the other nodes,
// and iteration times stretched by power, slowdown and background load.
#include "emulation/emulated_node.h"

#include <gtest/gtest.h>

namespace aiac::emulation {
namespace {

PlatformFile Two(bool background) {
  std::string text = R"(name = "two"
[[clusters]]
name = "a"
powers = [1.0, 0.25]
latency_ms = 0.5
bandwidth_mbps = 800
)";
  if (background) text += "background = {mean_jobs = 1.0, std_jobs = 0.5, mean_size = 2.0}\n";
  text += R"([[clusters]]
name = "a-b"
powers = [2.0]
latency_ms = 0.1
bandwidth_mbps = 1000
[[links]]
a = "a"
b = "a-b"
latency_ms = 40
bandwidth_mbps = 8
)";
  auto p = ParsePlatformFile(text, "two.toml");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

TEST(EmulatedNodeTest, ANodeKnowsItsPowerClusterAndLinks) {
  const PlatformFile p = Two(false);
  auto slow = EmulatedNode::Make(p, "a-2", 1, 7);
  ASSERT_TRUE(slow.ok()) << slow.status().message();
  EXPECT_EQ(slow->cluster(), "a");
  EXPECT_DOUBLE_EQ(slow->power(), 0.25);
  // "a-b-1" is node 1 of cluster "a-b", not a node of "a".
  auto other = EmulatedNode::Make(p, "a-b-1", 1, 7);
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ(other->cluster(), "a-b");
  EXPECT_DOUBLE_EQ(other->power(), 2.0);
  auto inter = slow->LinkTo("a-b-1");
  ASSERT_TRUE(inter.has_value());
  EXPECT_DOUBLE_EQ(inter->latency_seconds, 0.040);
  EXPECT_DOUBLE_EQ(inter->bytes_per_second, 1e6);  // 8 Mbps
  auto intra = slow->LinkTo("a-1");
  ASSERT_TRUE(intra.has_value());
  EXPECT_DOUBLE_EQ(intra->latency_seconds, 0.0005);
  EXPECT_DOUBLE_EQ(intra->bytes_per_second, 1e8);
  EXPECT_FALSE(slow->LinkTo("spawner-12").has_value());  // not a node: not delayed
  EXPECT_FALSE(slow->LinkTo("a-3").has_value());
  EXPECT_FALSE(slow->LinkTo("a-01").has_value());
  EXPECT_FALSE(EmulatedNode::Make(p, "a-3", 1, 7).ok());
  EXPECT_FALSE(EmulatedNode::Make(p, "b-1", 1, 7).ok());
  EXPECT_FALSE(EmulatedNode::Make(p, "a-1", 0.5, 7).ok());  // a slowdown below 1
}

TEST(EmulatedNodeTest, IterationsTakeCpuTimesSlowdownOverPower) {
  const PlatformFile p = Two(false);
  auto slow = EmulatedNode::Make(p, "a-2", 10, 7);
  auto fast = EmulatedNode::Make(p, "a-b-1", 10, 7);
  ASSERT_TRUE(slow.ok() && fast.ok());
  EXPECT_DOUBLE_EQ(slow->IterationSeconds(0.002, 0), 0.002 * 10 / 0.25);
  EXPECT_DOUBLE_EQ(fast->IterationSeconds(0.002, 5), 0.002 * 10 / 2.0);
  EXPECT_DOUBLE_EQ(fast->IterationSeconds(-1, 5), 0);
}

TEST(EmulatedNodeTest, BackgroundJobsAreRedrawnEveryMeanSizeAndRepeatWithTheSeed) {
  const PlatformFile p = Two(true);
  auto a = EmulatedNode::Make(p, "a-1", 1, 42), b = EmulatedNode::Make(p, "a-1", 1, 42);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<double> jobs;
  double sum = 0;
  for (int k = 0; k < 4000; ++k) {
    const double now = k * 0.5;  // a draw every 2 s: every 4th iteration
    const double t = a->IterationSeconds(0.01, now);
    EXPECT_DOUBLE_EQ(t, 0.01 * (1 + a->competing_jobs()));
    EXPECT_DOUBLE_EQ(t, b->IterationSeconds(0.01, now));  // same seed, same draws
    EXPECT_GE(a->competing_jobs(), 0);
    if (k % 4 == 0) {
      jobs.push_back(a->competing_jobs());
      sum += a->competing_jobs();
    } else {
      EXPECT_DOUBLE_EQ(a->competing_jobs(), jobs.back()) << "redrawn before mean_size passed";
    }
  }
  EXPECT_NEAR(sum / static_cast<double>(jobs.size()), 1.0, 0.05);  // mean 1 (clamping at 0 is rare)
  // Another node of the same run draws differently.
  auto c = EmulatedNode::Make(p, "a-2", 1, 42);
  ASSERT_TRUE(c.ok());
  c->IterationSeconds(0.01, 0);
  a = EmulatedNode::Make(p, "a-1", 1, 42);
  a->IterationSeconds(0.01, 0);
  EXPECT_NE(a->competing_jobs(), c->competing_jobs());
}

}  // namespace
}  // namespace aiac::emulation
