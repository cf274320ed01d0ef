// The OS-level layout of a platform: addresses by slot, cluster and node, CPU quotas in proportion
// to power that fit the host and give the fastest node at most a core, namespace names that tell
// their platform apart, and the platforms that cannot be laid out refused with the reason.
#include "emulation/os_platform.h"

#include <gtest/gtest.h>

#include <set>

#include "support/test_support.h"

namespace aiac::emulation {
namespace {

PlatformFile Platform(std::string name, std::vector<std::vector<double>> powers) {
  PlatformFile p;
  p.name = std::move(name);
  for (size_t c = 0; c < powers.size(); ++c)
    p.clusters.push_back({"c" + std::to_string(c + 1), powers[c], 0.1, 1000, std::nullopt});
  return p;
}

TEST(OsPlatformTest, NodesGetTheirClustersSubnetInFileOrder) {
  auto plan = PlanOsPlatform(Platform("two", {{1, 0.5}, {2}}), 2);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->nodes.size(), 3u);
  EXPECT_EQ(plan->nodes[0].id, "c1-1");
  EXPECT_EQ(plan->nodes[0].address, "10.200.1.1");
  EXPECT_EQ(plan->nodes[1].address, "10.200.1.2");
  EXPECT_EQ(plan->nodes[2].id, "c2-1");
  EXPECT_EQ(plan->nodes[2].address, "10.200.2.1");
  EXPECT_EQ(plan->nodes[2].netns, "aiacemu-two.c2-1");
  EXPECT_EQ(plan->Find("10.200.1.2"), &plan->nodes[1]);
  EXPECT_EQ(plan->Find("c2-1"), &plan->nodes[2]);
  EXPECT_EQ(plan->Find("c3-1"), nullptr);
  EXPECT_EQ(plan->subnet, "10.200.0.0/16");
  EXPECT_EQ(plan->host_address, "10.200.0.254");
  EXPECT_EQ(plan->host_device, "aiacemu0");
}

TEST(OsPlatformTest, EachSlotIsASixteenOfItsOwn) {
  auto plan = PlanOsPlatform(Platform("two", {{1, 0.5}, {2}}), 2, 3);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->nodes[2].address, "10.203.2.1");
  EXPECT_EQ(plan->subnet, "10.203.0.0/16");
  EXPECT_EQ(plan->host_address, "10.203.0.254");
  EXPECT_EQ(plan->host_device, "aiacemu3");
  EXPECT_TRUE(PlanOsPlatform(Platform("p", {{1}}), 2, kSlots - 1).ok());
  auto full = PlanOsPlatform(Platform("p", {{1}}), 2, kSlots);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().message().find("platforms can be up at once"), std::string::npos);
}

TEST(OsPlatformTest, QuotasFollowPowerFitTheHostAndGiveTheFastestAtMostACore) {
  struct Case {
    std::vector<std::vector<double>> powers;
    int cores;
  };
  for (const Case& c :
       {Case{{{1, 0.5}, {1}}, 2}, Case{{{1, 1, 1, 1, 1, 1, 1, 1}}, 2}, Case{{{4, 1}}, 8},
        Case{{{1}}, 1}, Case{{{0.25, 3}, {2, 2, 1}}, 4}, Case{{{1, 1}}, 64}}) {
    auto plan = PlanOsPlatform(Platform("p", c.powers), c.cores);
    ASSERT_TRUE(plan.ok());
    double total = 0, largest = 0, fastest_power = 0;
    for (const auto& n : plan->nodes) {
      total += n.cores;
      largest = std::max(largest, n.cores);
      fastest_power = std::max(fastest_power, n.power);
    }
    EXPECT_LE(total, c.cores + 1e-9);
    EXPECT_LE(largest, 1 + 1e-9);
    // One of the two bounds is reached: no core is held back for nothing.
    EXPECT_TRUE(std::abs(total - c.cores) < 1e-9 || std::abs(largest - 1) < 1e-9);
    for (const auto& n : plan->nodes) {
      EXPECT_NEAR(n.cores / largest, n.power / fastest_power, 1e-12) << n.id;
    }
  }
  // The example of the documents: powers 1, 0.5 and 1 on 2 cores: 0.8, 0.4 and 0.8 cores.
  auto plan = PlanOsPlatform(Platform("two", {{1, 0.5}, {1}}), 2);
  ASSERT_TRUE(plan.ok());
  EXPECT_NEAR(plan->nodes[0].cores, 0.8, 1e-12);
  EXPECT_NEAR(plan->nodes[1].cores, 0.4, 1e-12);
}

TEST(OsPlatformTest, NamespacesOfTwoPlatformsNeverShareAPrefix) {
  // "a" and "a-b": a '.' ends the platform's part, so "aiacemu-a." never matches a-b's nodes.
  auto a = PlanOsPlatform(Platform("a", {{1}}), 1);
  auto ab = PlanOsPlatform(Platform("a-b", {{1}}), 1);
  ASSERT_TRUE(a.ok() && ab.ok());
  EXPECT_EQ(ab->nodes[0].netns.rfind("aiacemu-a.", 0), std::string::npos);
  EXPECT_EQ(a->nodes[0].netns.rfind("aiacemu-a.", 0), 0u);
}

TEST(OsPlatformTest, WhatCannotBeLaidOutIsRefusedWithTheReason) {
  for (const std::string& bad :
       {std::string("has.dot"), std::string("has space"), std::string(33, 'x'), std::string("")}) {
    auto plan = PlanOsPlatform(Platform(bad, {{1}}), 2);
    ASSERT_FALSE(plan.ok()) << bad;
    EXPECT_NE(plan.status().message().find("platform name"), std::string::npos);
  }
  EXPECT_FALSE(PlanOsPlatform(Platform("p", {{1}}), 0).ok());
  auto big = PlanOsPlatform(Platform("p", {std::vector<double>(255, 1.0)}), 2);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("more than 254 nodes"), std::string::npos);
  EXPECT_TRUE(PlanOsPlatform(Platform("p", {std::vector<double>(254, 1.0)}), 2).ok());
  EXPECT_FALSE(PlanOsPlatform(Platform("p", std::vector<std::vector<double>>(255, {1.0})), 2).ok());
}

}  // namespace
}  // namespace aiac::emulation
