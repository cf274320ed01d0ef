// `run --local` housekeeping: a directory left by a run that was killed outright (SIGKILL, so it
// could not clean up; the directory holds the run's cluster key) is removed by the next run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

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

// The progress line: log lines when standard error is a file, one line rewritten in place on a
// terminal (a pseudo-terminal from script(1)), none with --quiet.
TEST_F(LocalRunTest, TheProgressLineIsRewrittenOnATerminalAndQuietHidesIt) {
  const std::string job = WriteJob("steps.toml",
                                   "name = \"steps\"\napp = \"synthetic\"\ntasks = 2\n"
                                   "timeout_s = 300\n[params]\nitems = 2000\niterations = 150\n"
                                   "base_cost = 2000\n");
  const std::regex progress(R"(\[ *[0-9.]+s\] job steps-[0-9a-f]+: iterations [0-9]+\.\.[0-9]+, )"
                            R"(max local change [0-9.e+-]+, eta [^,]+, .*, moves [0-9]+, )");
  ASSERT_EQ(RunSpawner({"run", "--local", "2", job, "--progress-ms", "100"}, "plain"), 0)
      << Log("plain");
  EXPECT_TRUE(std::regex_search(Log("plain"), progress)) << Log("plain");
  EXPECT_EQ(Log("plain").find("\033[K"), std::string::npos);

  ASSERT_EQ(RunSpawner({"run", "--local", "2", job, "--progress-ms", "100", "--quiet"}, "quiet"), 0)
      << Log("quiet");
  EXPECT_FALSE(std::regex_search(Log("quiet"), progress)) << Log("quiet");

  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::string command =
      BinPath("aiac-spawner") + " run --local 2 " + job + " --progress-ms 100";
  const std::string shell =
      "script -qec '" + command + "' /dev/null > " + (dir_ / "tty.log") + " 2>&1 < /dev/null";
  ASSERT_EQ(std::system(shell.c_str()), 0) << Log("tty");
  const std::string tty = Log("tty");
  // On a terminal, the short form (80 columns), drawn and erased in place ("\r", erase-line)
  // before each log line and at the end, never ended by a newline.
  EXPECT_TRUE(std::regex_search(
      tty, std::regex(R"(\[ *[0-9.]+s\] iter [0-9]+\.\.[0-9]+  change [0-9.e+-]+  eta \S+  )"
                      R"(live [0-9]+/2  failures 0  moves [0-9]+\r\x1b\[K)")))
      << tty;
  EXPECT_FALSE(std::regex_search(tty, progress)) << tty;
}

}  // namespace
}  // namespace aiac::testing
