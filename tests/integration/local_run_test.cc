// `run --local` housekeeping: a directory left by a run that was killed outright (SIGKILL, so it
// could not clean up; the directory holds the run's cluster key) is removed by the next run.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using LocalRunTest = ClusterFixture;

TEST_F(LocalRunTest, NextRunRemovesTheDirectoryOfAKilledRun) {
  // A pid that surely ran and surely ended: a child of ours, reaped.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  const std::string stale = dir_ / "aiac-local-Stale1";
  std::filesystem::create_directories(stale + "/d1");
  WriteFile(stale + "/owner.pid", std::to_string(gone) + "\n");
  WriteFile(stale + "/cluster.toml", "cluster_key = \"left-behind-secret-0123\"\n");
  // A directory whose owner is alive (this test) is kept.
  const std::string live = dir_ / "aiac-local-Live01";
  std::filesystem::create_directories(live);
  WriteFile(live + "/owner.pid", std::to_string(getpid()) + "\n");

  ASSERT_EQ(RunSpawner({"run", "--local", "2", RingJob(2, 5)}), 0) << Log("spawner");
  EXPECT_FALSE(std::filesystem::exists(stale)) << Log("spawner");
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(LogHas("spawner", "aiac-local-Stale1")) << Log("spawner");
}

}  // namespace
}  // namespace aiac::testing
