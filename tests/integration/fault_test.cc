// A daemon killed during a run: the run ends as failed, names the lost daemon, and leaves no
// process behind. (Replacement from checkpoints is a later issue; until then this is the
// contract.)
#include <csignal>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using FaultTest = ClusterFixture;

TEST_F(FaultTest, KilledDaemonFailsTheRunCleanly) {
  WriteJob("long.toml", "name = \"long\"\napp = \"cg\"\ntimeout_s = 120\n[params]\nn = 400000\nbandwidth = 12\n"
                        "tolerance = 1e-300\n");  // never converges: runs until the kill
  auto spawner = Start("aiac-spawner", {"run", "--local", "4", dir_ / "long.toml", "--json", dir_ / "f.json"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(30))) << Log("spawner");
  // Only this test's cluster: ctest runs other tests with daemons named d2 at the same time.
  std::vector<int> victims = ProcessesMatching(dir_.path(), "--id d2 ");
  ASSERT_EQ(victims.size(), 1u);
  kill(victims[0], SIGKILL);
  auto code = spawner.WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value()) << "spawner did not notice the loss";
  EXPECT_EQ(*code, 1);
  auto j = Json("f.json");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_NE(j["error"].get<std::string>().find("d2"), std::string::npos) << j["error"];
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

}  // namespace
}  // namespace aiac::testing
