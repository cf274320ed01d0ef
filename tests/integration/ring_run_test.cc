// The ring job through the real spawner, super-node and daemons.
#include <csignal>
#include <thread>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using RingRunTest = ClusterFixture;

TEST_F(RingRunTest, LocalClusterRunsRingAndWritesSummary) {
  const std::string job = RingJob(4, 300);
  ASSERT_EQ(RunSpawner({"run", "--local", "4", job, "--json", dir_ / "out.json"}), 0)
      << Log("spawner");
  auto j = Json("out.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["job"], "ring-it");
  EXPECT_EQ(j["app"], "ring");
  EXPECT_EQ(j["tasks"], 4);
  EXPECT_EQ(j["daemons"], 4);
  EXPECT_GT(j["wall_seconds"].get<double>(), 0.0);
  // Detection: from every task locally converged to the confirming round, within the iterate
  // phase; the spawner's CPU time, at most every core for its whole run (and its start).
  ASSERT_TRUE(j["detection_seconds"].is_number()) << j.dump();
  EXPECT_GE(j["detection_seconds"].get<double>(), 0.0);
  EXPECT_LE(j["detection_seconds"].get<double>(), j["phases"]["iterate"].get<double>());
  EXPECT_GT(j["spawner_cpu_seconds"].get<double>(), 0.0);
  EXPECT_LE(j["spawner_cpu_seconds"].get<double>(),
            std::thread::hardware_concurrency() * j["wall_seconds"].get<double>() + 1);
  EXPECT_EQ(j["result"]["value"], 1200);
  ASSERT_EQ(j["per_task"].size(), 4u);
  std::set<std::string> daemons;
  for (const auto& t : j["per_task"]) {
    // Runtime iterations: one per token handled, plus task 0's start (Gather checks the tokens).
    EXPECT_EQ(t["iterations"], t["task"] == 0 ? 301 : 300);
    daemons.insert(t["daemon"].get<std::string>());
  }
  EXPECT_EQ(daemons.size(), 4u) << "one task per daemon";
  // Nothing left behind: no process started from our directory, no local cluster directory.
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty());
  for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(e.path().filename().string().rfind("aiac-local-", 0), std::string::npos) << e.path();
  }
}

// A job of more than 32 tasks names each task's daemon and plugin transfer at debug only, and
// says so; one of 32 or fewer at info (the first test's log), as fault campaigns read them.
TEST_F(RingRunTest, ABigJobLogsEachTasksPlacementAtDebugOnly) {
  const std::string job = RingJob(40, 3);
  ASSERT_EQ(RunSpawner({"run", "--local", "40", job, "--json", dir_ / "big.json"}, "big"), 0)
      << Log("big");
  EXPECT_EQ(Json("big.json")["status"], "converged");
  EXPECT_TRUE(LogHas("big",
                     "40 tasks assigned (maheve mapping, async mode; each task's daemon "
                     "at --log-level debug), starting"))
      << Log("big");
  EXPECT_FALSE(LogHas("big", "checkpoints kept by")) << Log("big");
  EXPECT_FALSE(LogHas("big", "sending plugin")) << Log("big");
  ASSERT_EQ(RunSpawner(
                {"run", "--local", "4", RingJob(4, 3, "small.toml"), "--json", dir_ / "small.json"},
                "small"),
            0)
      << Log("small");
  EXPECT_TRUE(LogHas("small", "checkpoints kept by")) << Log("small");
  EXPECT_TRUE(LogHas("small", "sending plugin")) << Log("small");
}

TEST_F(RingRunTest, HandStartedDaemonsServeTwoJobsInARow) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2", "d3"}) StartDaemon(d, {sn});
  const std::string job = RingJob(3, 50);
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                        dir_ / "a.json"},
                       "spawner-a"),
            0)
      << Log("spawner-a");
  EXPECT_EQ(Json("a.json")["status"], "converged");
  // The first job released its daemons: a second one gets them again.
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                        dir_ / "b.json"},
                       "spawner-b"),
            0)
      << Log("spawner-b") << Log("sn1");
  EXPECT_EQ(Json("b.json")["result"]["value"], 150);
  EXPECT_TRUE(LogHas("sn1", "released 3 daemons"));
}

TEST_F(RingRunTest, SigintStopsEveryProcess) {
  const std::string job = RingJob(4, 100000000);
  auto spawner = Start("aiac-spawner", {"run", "--local", "4", job, "--json", dir_ / "int.json"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); })) << Log("spawner");
  ASSERT_GE(ProcessesMatching(dir_.path()).size(), 5u);  // super-node + 4 daemons
  spawner.Signal(SIGINT);
  auto code = spawner.WaitFor(std::chrono::seconds(15));
  ASSERT_TRUE(code.has_value()) << "spawner still running after SIGINT";
  EXPECT_EQ(*code, 130);
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "aiac processes left behind";
  EXPECT_EQ(Json("int.json")["status"], "aborted");
}

TEST_F(RingRunTest, BadJobsExitTwoWithOneLine) {
  WriteFile(dir_ / "unknown.toml", "name = \"x\"\napp = \"nope\"\ntasks = 2\n");
  WriteFile(dir_ / "typo.toml", "name = \"x\"\napp = \"ring\"\ntaks = 2\n");
  WriteFile(dir_ / "norounds.toml", "name = \"x\"\napp = \"ring\"\ntasks = 2\n");
  WriteFile(dir_ / "noplugin.toml", "name = \"x\"\napp = \"ring\"\ntasks = 2\nplugin = \"\"\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir_ / "unknown.toml", "unknown app 'nope'"},
      {dir_ / "typo.toml", "unknown option 'taks' (did you mean 'tasks'?)"},
      {dir_ / "norounds.toml", "params.rounds is missing"},
      {dir_ / "noplugin.toml", "option 'plugin' must be a file name"},
      {dir_ / "missing.toml", "does not exist"},
  };
  for (const auto& [file, message] : cases) {
    ASSERT_EQ(RunSpawner({"run", "--local", "2", file}, "bad"), 2) << file;
    const std::string out = Log("bad");
    EXPECT_NE(out.find(message), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty());
}

TEST_F(RingRunTest, NotEnoughDaemonsFailsAfterTheWait) {
  const std::string sn = StartSupernode("sn1");
  StartDaemon("d1", {sn});
  WriteFile(dir_ / "short.toml",
            std::string("cluster_key = \"") + kClusterKey + "\"\nwait_daemons_ms = 1000\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "short.toml", "--supernode", sn, RingJob(3, 5),
                        "--json", dir_ / "f.json"}),
            1);
  auto j = Json("f.json");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_NE(j["error"].get<std::string>().find("not enough daemons"), std::string::npos);
}

}  // namespace
}  // namespace aiac::testing
