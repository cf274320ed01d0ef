// The synthetic app through the real spawner, super-node and daemons: every item is gathered
// once, finished, with the workload's checksum, in both modes and whatever the split.
#include "apps/synthetic/workload.h"
#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

class SyntheticRunTest : public ClusterFixture {};

constexpr const char* kParams =
    "[params]\nitems = 3000\niterations = 40\nbase_cost = 60\nphase_iterations = 8\n"
    "hot_fraction = 0.3\nhot_factor = 6\nseed = 9\nverify = true\n";

synthetic::WorkloadSpec Spec() {
  synthetic::WorkloadSpec s;
  s.items = 3000;
  s.iterations = 40;
  s.base_cost = 60;
  s.phase_iterations = 8;
  s.hot_fraction = 0.3;
  s.hot_factor = 6;
  s.seed = 9;
  return s;
}

TEST_F(SyntheticRunTest, EveryItemComesBackOnceWithTheWorkloadsChecksum) {
  const double expected = static_cast<double>(synthetic::ExpectedChecksum(Spec()));
  for (const std::string mode : {"async", "sync"}) {
    SCOPED_TRACE(mode);
    WriteJob(mode + ".toml",
             "name = \"syn\"\napp = \"synthetic\"\ntimeout_s = 120\n" + std::string(kParams));
    // Unbalanced: a slow moment of the machine would otherwise move items, and a task that took
    // items part-way counts more iterations than their steps (BalanceTest covers the moves).
    std::vector<std::string> args{"run",
                                  "--local",
                                  mode == "sync" ? "5" : "3",
                                  dir_ / (mode + ".toml"),
                                  "--json",
                                  dir_ / (mode + ".json"),
                                  "--balance",
                                  "off"};
    if (mode == "sync") args.push_back("--sync");
    ASSERT_EQ(RunSpawner(args, mode), 0) << Log(mode);
    auto j = Json(mode + ".json");
    EXPECT_EQ(j["status"], "converged") << j.dump();
    EXPECT_EQ(j["mode"], mode);
    EXPECT_EQ(j["result"]["items"], 3000);
    EXPECT_EQ(j["result"]["checksum"].get<double>(), expected);
    EXPECT_EQ(j["result"]["expected_checksum"].get<double>(), expected);
    if (mode == "async") {
      // An asynchronous task stops counting when its items are done; a synchronous one counts
      // every round until the run ends (its neighbours could be waiting for it).
      EXPECT_EQ(j["iterations"]["min"], 40);
      EXPECT_EQ(j["iterations"]["max"], 40);
    } else {
      EXPECT_GE(j["iterations"]["min"].get<int>(), 40);
    }
  }
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty());
}

}  // namespace
}  // namespace aiac::testing
