// `aiac-spawner run --platform P.toml --local`: an emulated platform on this machine, one daemon
// per node of the platform file playing its node (docs/emulation.md), and the refusals of
// `--platform` used wrongly.
#include <algorithm>
#include <random>
#include <regex>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using EmulatedRunTest = ClusterFixture;

constexpr const char* kTwoClusters = R"(name = "two"
[[clusters]]
name = "fast"
powers = [1.0, 1.0]
latency_ms = 0.1
bandwidth_mbps = 1000
[[clusters]]
name = "slow"
powers = [0.25]
latency_ms = 0.1
bandwidth_mbps = 1000
background = {mean_jobs = 0.5, std_jobs = 0.2, mean_size = 0.5}
[[links]]
a = "fast"
b = "slow"
latency_ms = 30
bandwidth_mbps = 100
)";

TEST_F(EmulatedRunTest, EachNodeOfThePlatformIsADaemonPlayingIt) {
  WriteFile(dir_ / "two.toml", kTwoClusters);
  // Long enough (about a second) for the daemons' progress reports to carry their link figures.
  WriteJob("cg.toml",
           "name = \"emu\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n[params]\nn = "
           "200000\nbandwidth = 4\n"
           "tolerance = 1e-10\n");
  // Started in a shuffled order (--shuffle-nodes), each daemon still plays its own node, and the
  // default mapping takes them in the order they were started.
  ASSERT_EQ(RunSpawner({"run", dir_ / "cg.toml", "--platform", dir_ / "two.toml", "--local",
                        "--slowdown", "4", "--shuffle-nodes", "--platform-seed", "3", "--mapping",
                        "default", "--json", dir_ / "emu.json", "--log-level", "info"}),
            0)
      << Log("spawner");
  auto j = Json("emu.json");
  EXPECT_EQ(j["status"], "converged");
  // Values spend 30 ms on the link between the clusters, several at once: a task answers the
  // confirmation round only once its neighbours have absorbed its newest value, so the run is
  // not declared converged while one that matters is still on the way.
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  EXPECT_EQ(j["tightenings"], 0) << Log("spawner");
  EXPECT_EQ(j["daemons"], 3);
  std::vector<std::string> daemons;
  for (const auto& t : j["per_task"]) daemons.push_back(t["daemon"].get<std::string>());
  std::vector<std::string> started{"fast-1", "fast-2", "slow-1"};
  std::mt19937_64 rng(3);  // as the spawner draws the order from the platform seed
  std::shuffle(started.begin(), started.end(), rng);
  EXPECT_EQ(daemons, started);
  EXPECT_TRUE(LogHas("spawner", "emulating platform " + (dir_ / "two.toml") +
                                    ": 3 nodes, slowdown 4, started in a shuffled order"))
      << Log("spawner");
  // The daemons' link monitors timed the values they exchanged: between the clusters, no less
  // than the emulated 30 ms (a round trip is 60 ms at least).
  bool across = false;
  for (const auto& l : j["links"]) {
    EXPECT_GT(l["samples"].get<int>(), 0) << l.dump();
    if (l["from"] != l["to"]) {
      across = true;
      EXPECT_GE(l["latency_ms"].get<double>(), 29) << j["links"].dump();
      EXPECT_LT(l["latency_ms"].get<double>(), 2000) << j["links"].dump();
    }
  }
  EXPECT_TRUE(across) << j["links"].dump();
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty());
}

// Lee & Cho's static splits: the slow node (a quarter of the power, half a competing job on
// average) gets a share of the items in proportion to its expected rate; the result is whole.
TEST_F(EmulatedRunTest, StaticSplitsWeighEachNodeByItsPowerAndLoad) {
  WriteFile(dir_ / "two.toml", kTwoClusters);
  WriteJob(
      "syn.toml",
      "name = \"syn\"\napp = \"synthetic\"\ntasks = 3\ntimeout_s = 120\n[params]\nitems = 3000\n"
      "iterations = 10\nbase_cost = 100\nseed = 2\n");
  for (const char* split : {"sm", "sp"}) {
    ASSERT_EQ(RunSpawner({"run", dir_ / "syn.toml", "--platform", dir_ / "two.toml", "--local",
                          "--split", split, "--balance", "off", "--json", dir_ / "syn.json"},
                         split),
              0)
        << Log(split);
    auto j = Json("syn.json");
    EXPECT_EQ(j["status"], "converged");
    EXPECT_EQ(j["result"]["items"], 3000);
    std::smatch m;
    const std::string log = Log(split);
    ASSERT_TRUE(std::regex_search(
        log, m,
        std::regex(R"(split by Lee & Cho's (S_[MP]) \(shares ([0-9.e+-]+) to ([0-9.e+-]+)\))")))
        << log;
    EXPECT_EQ(m[1].str(), std::string(split) == "sm" ? "S_M" : "S_P");
    // Rates 1, 1 and 0.25 / 1.5: the slow node's share is about a sixth of a fast one's.
    EXPECT_GT(std::stod(m[3].str()) / std::stod(m[2].str()), 4) << log;
  }
}

TEST_F(EmulatedRunTest, APlatformWithoutLocalOrOfAnotherSizeIsRefused) {
  WriteFile(dir_ / "two.toml", kTwoClusters);
  WriteFile(dir_ / "bad.toml", "name = \"bad\"\n");
  WriteJob("cg.toml", "name = \"emu\"\napp = \"cg\"\ntasks = 2\n[params]\nn = 1000\n");
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const auto& c : std::vector<Case>{
           {{"--platform", dir_ / "two.toml"},
            "--platform needs --local: an emulated platform runs on this machine"},
           {{"--platform", dir_ / "two.toml", "--local", "5"},
            "--local 5 but platform " + (dir_ / "two.toml") +
                " has 3 nodes (leave N out, or give that)"},
           {{"--platform", dir_ / "bad.toml", "--local"},
            (dir_ / "bad.toml") + ": at least one [[clusters]] is needed"},
           {{"--local"}, "--local needs the number of daemons (or --platform)"},
           {{"--platform", dir_ / "two.toml", "--local", "--slowdown", "0.5"},
            "--slowdown must be at least 1"},
           {{"--local", "2", "--split", "sp"},
            "--split sp needs --platform: the nodes' background loads are known only on an "
            "emulated platform"},
           {{"--local", "2", "--split", "x"}, "--split must be power, equal, sm or sp, not 'x'"}}) {
    std::vector<std::string> args{"run", dir_ / "cg.toml"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    EXPECT_EQ(RunSpawner(args, "refused"), 2) << c.error;
    EXPECT_EQ(Log("refused"), "aiac-spawner: " + c.error + "\n");
  }
}

}  // namespace
}  // namespace aiac::testing
