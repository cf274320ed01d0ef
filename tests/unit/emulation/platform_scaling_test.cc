// A platform made smaller for one host: exactly the nodes asked for, every cluster kept, shares
// in proportion to the clusters' sizes, powers taken from each cluster's own and spread as
// before; and a platform written as text reads back the same.
#include "emulation/platform_scaling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/test_support.h"

namespace aiac::emulation {
namespace {

PlatformFile Shipped(const std::string& file) {
  auto p = LoadPlatformFile(testing::SourcePath("conf/platforms/" + file));
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : PlatformFile{};
}

TEST(PlatformScalingTest, EveryCountKeepsEachClusterInProportionWithItsOwnPowers) {
  for (const char* file : {"maheve-hd008.toml", "maheve-hd050.toml", "maheve-hd072.toml",
                           "teragrid-small.toml", "leecho-burst.toml"}) {
    const PlatformFile p = Shipped(file);
    const size_t total = p.node_count(), clusters = p.clusters.size();
    for (size_t n = 1; n <= total + 2; ++n) {
      SCOPED_TRACE(std::string(file) + " to " + std::to_string(n));
      const PlatformFile s = ScalePlatform(p, n, "small");
      EXPECT_EQ(s.name, "small");
      EXPECT_EQ(s.node_count(), std::clamp(n, clusters, total));
      ASSERT_EQ(s.clusters.size(), clusters);
      EXPECT_EQ(s.links.size(), p.links.size());
      const size_t spread = std::clamp(n, clusters, total) - clusters;
      for (size_t c = 0; c < clusters; ++c) {
        const auto& mine = s.clusters[c].powers;
        const auto& theirs = p.clusters[c].powers;
        ASSERT_GE(mine.size(), 1u);
        ASSERT_LE(mine.size(), theirs.size());
        // Largest remainders: within one node of the cluster's exact share.
        const double share = static_cast<double>(theirs.size()) * spread / total;
        EXPECT_LE(std::abs(static_cast<double>(mine.size() - 1) - share), 1.0 + 1e-9);
        for (double power : mine)
          EXPECT_NE(std::find(theirs.begin(), theirs.end(), power), theirs.end());
        EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
        EXPECT_EQ(s.clusters[c].latency_ms, p.clusters[c].latency_ms);
      }
    }
  }
}

TEST(PlatformScalingTest, TheSpreadOfPowersIsAboutKept) {
  // The MAHEVE platforms down to 6, 10 and 20 nodes: their heterogeneity degree within 0.2.
  for (const auto& [file, hd] :
       {std::pair{"maheve-hd008.toml", 0.08}, std::pair{"maheve-hd050.toml", 0.50},
        std::pair{"maheve-hd072.toml", 0.72}}) {
    for (size_t n : {6, 10, 20}) {
      const PlatformFile s = ScalePlatform(Shipped(file), n, "small");
      EXPECT_NEAR(s.HeterogeneityDegree(), hd, 0.2) << file << " to " << n;
    }
  }
}

TEST(PlatformScalingTest, AWrittenPlatformReadsBackTheSame) {
  for (const char* file :
       {"maheve-hd072.toml", "leecho-burst.toml", "ring-wan.toml", "teragrid.toml"}) {
    const PlatformFile p = Shipped(file);
    auto back = ParsePlatformFile(FormatPlatformFile(p), "written");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->name, p.name);
    ASSERT_EQ(back->clusters.size(), p.clusters.size());
    for (size_t c = 0; c < p.clusters.size(); ++c) {
      EXPECT_EQ(back->clusters[c].name, p.clusters[c].name);
      EXPECT_EQ(back->clusters[c].powers, p.clusters[c].powers);
      EXPECT_EQ(back->clusters[c].latency_ms, p.clusters[c].latency_ms);
      EXPECT_EQ(back->clusters[c].bandwidth_mbps, p.clusters[c].bandwidth_mbps);
      ASSERT_EQ(back->clusters[c].background.has_value(), p.clusters[c].background.has_value());
      if (p.clusters[c].background) {
        EXPECT_EQ(back->clusters[c].background->std_jobs, p.clusters[c].background->std_jobs);
        EXPECT_EQ(back->clusters[c].background->mean_size, p.clusters[c].background->mean_size);
      }
    }
    ASSERT_EQ(back->links.size(), p.links.size());
    for (size_t l = 0; l < p.links.size(); ++l) {
      EXPECT_EQ(back->links[l].a, p.links[l].a);
      EXPECT_EQ(back->links[l].latency_ms, p.links[l].latency_ms);
    }
  }
}

}  // namespace
}  // namespace aiac::emulation
