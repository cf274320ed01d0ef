// Platform files: the shipped platforms have the clusters, nodes and heterogeneity degrees of
// the papers' experiments, and every malformed file is refused with the place of the problem.
#include "emulation/platform_file.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.h"

namespace aiac::emulation {
namespace {

TEST(PlatformFileTest, TheShippedPlatformsAreThePapers) {
  struct Expected {
    const char* file;
    size_t clusters, nodes;
    double hd;
  };
  for (const auto& e :
       {Expected{"maheve-hd008.toml", 4, 106, 0.08}, Expected{"maheve-hd050.toml", 4, 110, 0.50},
        Expected{"maheve-hd072.toml", 5, 115, 0.72}, Expected{"teragrid.toml", 4, 64, 0.0603}}) {
    SCOPED_TRACE(e.file);
    auto p = LoadPlatformFile(testing::SourcePath(std::string("conf/platforms/") + e.file));
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->clusters.size(), e.clusters);
    EXPECT_EQ(p->node_count(), e.nodes);
    EXPECT_NEAR(p->HeterogeneityDegree(), e.hd, 0.0005);
    const model::Platform m = p->ToModel();
    EXPECT_EQ(m.nodes().size(), e.nodes);
    EXPECT_EQ(m.free_count(), e.nodes);
  }
  // TeraGrid: the DistPM table's ranges, inside sites and between them.
  auto t = LoadPlatformFile(testing::SourcePath("conf/platforms/teragrid.toml"));
  ASSERT_TRUE(t.ok());
  for (const auto& c : t->clusters) {
    EXPECT_GE(c.latency_ms, 0.002);
    EXPECT_LE(c.latency_ms, 0.008);
    EXPECT_GE(c.bandwidth_mbps, 240);
    EXPECT_LE(c.bandwidth_mbps, 1600);
  }
  for (const auto& l : t->links) {
    EXPECT_GE(l.latency_ms, 3);
    EXPECT_LE(l.latency_ms, 90);
    EXPECT_GE(l.bandwidth_mbps, 4);
    EXPECT_LE(l.bandwidth_mbps, 700);
  }
}

constexpr const char* kTwo = R"(name = "two"
[[clusters]]
name = "a"
powers = [1.0, 2.0]
latency_ms = 0.1
bandwidth_mbps = 1000
background = {mean_jobs = 0.5, std_jobs = 0.3}
[[clusters]]
name = "b"
powers = [4.0]
latency_ms = 0.2
bandwidth_mbps = 100
[[links]]
a = "b"
b = "a"
latency_ms = 20
bandwidth_mbps = 10
)";

TEST(PlatformFileTest, NodesLinksAndTheModel) {
  auto p = ParsePlatformFile(kTwo, "two.toml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "two");
  ASSERT_TRUE(p->clusters[0].background.has_value());
  EXPECT_DOUBLE_EQ(p->clusters[0].background->mean_jobs, 0.5);
  EXPECT_DOUBLE_EQ(p->clusters[0].background->mean_size, 1.0);  // default
  EXPECT_FALSE(p->clusters[1].background.has_value());
  EXPECT_DOUBLE_EQ(p->Between("a", "b").latency_ms, 20);  // either order
  EXPECT_DOUBLE_EQ(p->Between("b", "a").bandwidth_mbps, 10);
  EXPECT_DOUBLE_EQ(p->Between("a", "a").latency_ms, 0.1);  // inside a cluster
  EXPECT_DOUBLE_EQ(p->Between("b", "b").bandwidth_mbps, 100);
  const model::Platform m = p->ToModel();
  ASSERT_EQ(m.nodes().size(), 3u);
  EXPECT_EQ(m.nodes()[1].id, "a-2");
  EXPECT_DOUBLE_EQ(m.nodes()[2].power, 4.0);
  EXPECT_DOUBLE_EQ(m.Latency(0, 2), 0.020);  // seconds in the model
  EXPECT_DOUBLE_EQ(m.Latency(0, 1), 0.0001);
  // Powers 1, 2, 4: mean 7/3, population standard deviation sqrt(14/9).
  EXPECT_NEAR(p->HeterogeneityDegree(), std::sqrt(14.0 / 9) / (7.0 / 3), 1e-12);
}

TEST(PlatformFileTest, MalformedFilesAreRefusedNamingThePlace) {
  auto refused = [](const std::string& text) {
    auto p = ParsePlatformFile(text, "p.toml");
    return p.ok() ? std::string("accepted") : p.status().message();
  };
  const std::string two(kTwo);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = two;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_EQ(refused("name = \"x\"\n"), "p.toml: at least one [[clusters]] is needed");
  EXPECT_EQ(refused(replace("powers = [4.0]", "powers = [4.0, -1]")),
            "p.toml: clusters[1]: powers[1] must be a positive number");
  EXPECT_EQ(refused(replace("powers = [4.0]", "powers = []")),
            "p.toml: clusters[1]: 'powers' must be a non-empty array of numbers");
  EXPECT_EQ(refused(replace("latency_ms = 0.2", "latency_ms = -1")),
            "p.toml: clusters[1]: 'latency_ms' must be a number from 0 to 1e+06");
  EXPECT_EQ(refused(replace("bandwidth_mbps = 100\n", "bandwidth_mbps = 0\n")),
            "p.toml: clusters[1]: 'bandwidth_mbps' must be a number above 0 to 1e+07");
  EXPECT_EQ(refused(replace("name = \"b\"", "name = \"a\"")),
            "p.toml: clusters[1]: duplicate cluster name 'a'");
  EXPECT_EQ(refused(replace("name = \"b\"", "name = \"b c\""))
                .rfind("p.toml: clusters[1]: cluster name", 0),
            0u);
  EXPECT_EQ(refused(replace("a = \"b\"", "a = \"z\"")), "p.toml: links[0]: unknown cluster 'z'");
  EXPECT_EQ(refused(replace("a = \"b\"", "a = \"a\"")),
            "p.toml: links[0]: a link joins two different clusters");
  EXPECT_EQ(refused(two + "[[links]]\na = \"a\"\nb = \"b\"\nlatency_ms = 1\nbandwidth_mbps = 1\n"),
            "p.toml: links[1]: a second link between 'a' and 'b'");
  EXPECT_EQ(refused(two.substr(0, two.find("[[links]]"))),
            "p.toml: no [[links]] between 'a' and 'b'");
  EXPECT_EQ(refused(replace("latency_ms = 20", "latency = 20")),
            "p.toml: links[0]: 'latency_ms' is missing");
  EXPECT_EQ(refused(replace("bandwidth_mbps = 1000", "bandwidth_mbps = 1000\ncores = 4")),
            "p.toml: clusters[0]: unknown key 'cores'");
  EXPECT_EQ(refused(replace("std_jobs = 0.3", "std_jobs = 0.3, size = 2")),
            "p.toml: clusters[0]: background: unknown key 'size'");
  EXPECT_EQ(refused("name = \"x\"\n[[clusters]]\nname = 3\n"),
            "p.toml: clusters[0]: 'name' must be a non-empty string");
  EXPECT_EQ(refused("name = \n"), refused("name = \n"));  // a syntax error: FILE:LINE: what
  EXPECT_EQ(refused("name = \n").rfind("p.toml:1:", 0), 0u);
  EXPECT_FALSE(LoadPlatformFile("/nonexistent/p.toml").ok());
}

}  // namespace
}  // namespace aiac::emulation
