// Jobs outlive their spawner (docs/fault-tolerance.md, "When the spawner is lost"): a spawner
// SIGKILLed while the tasks run, while it assigns them or while it gathers the result is
// resumed from its state directory by `aiac-spawner resume`, which adopts the tasks on their
// daemons, replaces a daemon killed meanwhile, and ends the run with the fault-free answer; a
// state in use is refused to a second spawner, and one cut off while another took the job over
// stops without ending it; `resume` of a finished job says so, and of a directory that is not a
// job's state fails in one line.
#include <csignal>
#include <filesystem>

#include "integration/cluster_fixture.h"
#include "integration/run_checks.h"

namespace aiac::testing {
namespace {

using SpawnerResumeTest = ClusterFixture;

class ResumeRun : public SpawnerResumeTest {
 protected:
  static constexpr int kRows = 300000;
  // A super-node, `daemons` daemons, and a 4-task CG job whose blocks take a few seconds to
  // converge (live balancing off: balance_test resumes a spawner killed while items move).
  void SetUpPlatform(int daemons) {
    sn_ = StartSupernode("sn1");
    for (int i = 1; i <= daemons; ++i) StartDaemon("d" + std::to_string(i), {sn_});
    WriteJob("cg.toml",
             "name = \"rs\"\napp = \"cg\"\ntasks = 4\ntimeout_s = 300\ncheckpoint_seconds = "
             "0.2\norphan_seconds = 120\n[params]\ninner = \"cg\"\nn = " +
                 std::to_string(kRows) +
                 "\nbandwidth = 12\nseed = 5\ntolerance = 1e-12\noutput = \"x.mtx\"\n");
  }
  spawner::ChildProcess StartRun() {
    return Start(
        "aiac-spawner",
        Signed("aiac-spawner", {"run", dir_ / "cg.toml", "--config", dir_ / "key.toml",
                                "--supernode", sn_, "--balance", "off", "--state", dir_ / "state",
                                "--json", dir_ / "first.json", "--wait-daemons-ms", "20000"}),
        dir_ / "spawner.log");
  }
  // Resumes the job; the resumed spawner's exit code.
  int Resume() {
    return RunSpawner({"resume", dir_ / "state", "--json", dir_ / "s.json"}, "resumed",
                      std::chrono::seconds(240));
  }
  std::string sn_;
};

TEST_F(ResumeRun, ASpawnerKilledWhileTheTasksRunIsResumedWithTheSameAnswer) {
  SetUpPlatform(6);
  auto spawner = StartRun();
  // Once every task has checkpoints on both of its backups.
  ASSERT_TRUE(
      WaitUntil([&] { return MaxCheckpoints(Log("spawner")) >= 8; }, std::chrono::seconds(120)))
      << Log("spawner");
  ASSERT_TRUE(LogHas("spawner", "starting")) << Log("spawner");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  // The tasks go on without it; one task daemon is killed while it is away.
  ASSERT_TRUE(WaitUntil(
      [&] {
        int waiting = 0;
        for (int i = 1; i <= 6; ++i)
          waiting += LogHas("d" + std::to_string(i), "waiting for its spawner to resume");
        return waiting == 4;
      },
      std::chrono::seconds(60)));
  std::string victim;
  for (int i = 1; i <= 6 && victim.empty(); ++i) {
    if (LogHas("d" + std::to_string(i), "waiting for its spawner"))
      victim = "d" + std::to_string(i);
  }
  procs_.at(victim).Signal(SIGKILL);
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["spawner_restarts"], 1);
  EXPECT_EQ(j["failures"], 1) << Log("resumed");
  ASSERT_EQ(j["replacements"].size(), 1u);
  EXPECT_EQ(j["replacements"][0]["failed"], victim);
  EXPECT_GT(j["replacements"][0]["restored_iteration"].get<uint64_t>(), 0u)
      << "restarted from scratch";
  // The three others were adopted where they ran, none restarted.
  EXPECT_EQ(Count(Log("resumed"), "adopted on daemon"), 3u) << Log("resumed");
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), {kRows, 12, 5}), 1e-8);
  // Its end is kept: a second resume says so and does nothing.
  auto again = Start("aiac-spawner", {"resume", dir_ / "state"}, dir_ / "again.log");
  ASSERT_EQ(again.WaitFor(std::chrono::seconds(60)).value_or(-1), 0) << Log("again");
  EXPECT_TRUE(LogHas("again", "ended already: job rs (cg, async): converged")) << Log("again");
}

TEST_F(ResumeRun, ASpawnerKilledWhileItAssignsIsResumed) {
  SetUpPlatform(8);
  auto spawner = StartRun();
  ASSERT_TRUE(
      WaitUntil([&] { return LogHas("spawner", "sending plugin"); }, std::chrono::seconds(120)))
      << Log("spawner");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["spawner_restarts"], 1);
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), {kRows, 12, 5}), 1e-8);
}

// Killed while it gathers the tasks' slices to check the result (or just after: the run may have
// ended and stored its end by then): the resumed spawner gathers again, or says it ended.
TEST_F(ResumeRun, ASpawnerKilledWhileItGathersIsResumed) {
  SetUpPlatform(6);
  auto spawner = StartRun();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "gathering their slices"); },
                        std::chrono::seconds(180)))
      << Log("spawner");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  if (LogHas("resumed", "ended already")) {
    EXPECT_TRUE(LogHas("resumed", "converged")) << Log("resumed");
    return;
  }
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["spawner_restarts"], 1);
  EXPECT_EQ(j["failures"], 0) << Log("resumed");
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), {kRows, 12, 5}), 1e-8);
}

// Two spawners may not drive one job: while the resumed one runs, the state is in use.
TEST_F(ResumeRun, ASecondResumeWhileTheFirstRunsIsRefused) {
  SetUpPlatform(5);
  auto spawner = StartRun();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  auto second = Start("aiac-spawner", {"resume", dir_ / "state"}, dir_ / "second.log");
  EXPECT_EQ(second.WaitFor(std::chrono::seconds(60)).value_or(-1), 2) << Log("second");
  EXPECT_TRUE(LogHas("second", "is in use by another process")) << Log("second");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  EXPECT_EQ(Json("s.json")["status"], "converged");
}

// Two spawners may not drive one job: a spawner cut off (SIGSTOP here) while another resumed the
// job from a copy of its state (as a second host sharing the directory would) is fenced out. The
// daemons take commands only from the newest spawner incarnation; when the old one comes back it
// hears it was superseded and stops, without halting or releasing what is no longer its own, and
// the new one ends the run with the right answer.
TEST_F(ResumeRun, ASpawnerThatComesBackAfterAnotherTookTheJobOverStopsWithoutEndingIt) {
  SetUpPlatform(5);
  auto spawner = StartRun();
  ASSERT_TRUE(
      WaitUntil([&] { return MaxCheckpoints(Log("spawner")) >= 8; }, std::chrono::seconds(120)))
      << Log("spawner");
  spawner.Signal(SIGSTOP);
  std::filesystem::copy(dir_ / "state", dir_ / "state2", std::filesystem::copy_options::recursive);
  auto resumed = Start("aiac-spawner", {"resume", dir_ / "state2", "--json", dir_ / "s.json"},
                       dir_ / "resumed.log");
  ASSERT_TRUE(WaitUntil([&] { return Count(Log("resumed"), "adopted on daemon") == 4; },
                        std::chrono::seconds(120)))
      << Log("resumed");
  spawner.Signal(SIGCONT);
  const auto old_code = spawner.WaitFor(std::chrono::seconds(120));
  ASSERT_TRUE(old_code.has_value()) << Log("spawner");
  EXPECT_NE(*old_code, 0) << Log("spawner");
  EXPECT_TRUE(LogHas("spawner", "spawner incarnation 2 took the job over")) << Log("spawner");
  ASSERT_EQ(resumed.WaitFor(std::chrono::seconds(240)).value_or(-1), 0) << Log("resumed");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["failures"], 0) << Log("resumed");
  EXPECT_EQ(j["spawner_restarts"], 1);
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), {kRows, 12, 5}), 1e-8);
}

// Killed while a daemon still builds its task (the test plugin's app takes 6 s there): that
// daemon answers the resumed spawner's AdoptTask once the task runs, and nothing is replaced.
TEST_F(SpawnerResumeTest, ATaskStillBeingSetUpIsAdoptedOnceItRuns) {
  const std::string sn = StartSupernode("sn1");
  for (int i = 1; i <= 4; ++i) StartDaemon("d" + std::to_string(i), {sn});
  const std::string building = dir_ / "building";
  WriteJob("slow.toml",
           "name = \"slow\"\napp = \"faulty\"\ntasks = 3\ntimeout_s = 240\n"
           "checkpoint_seconds = 0.2\norphan_seconds = 120\n"
           "plugin = \"" AIAC_FAULTY_PLUGIN
           "\"\n[params]\nn = 30000\nbandwidth = 8\n"
           "seed = 5\ntolerance = 1e-10\ncrash_task = 1\ncrash_at = 0\n"
           "crash_how = \"slow\"\ncrash_seconds = 6\ncrash_once = \"" +
               building + "\"\n");
  auto spawner = Start("aiac-spawner",
                       {"run", dir_ / "slow.toml", "--config", dir_ / "key.toml", "--supernode", sn,
                        "--balance", "off", "--state", dir_ / "state"},
                       dir_ / "spawner.log");
  // Tasks 0 and 2 run; task 1's app is building its task.
  auto running = [&](int task) {
    for (int i = 1; i <= 4; ++i) {
      if (LogHas("d" + std::to_string(i), "running task " + std::to_string(task) + " of 3"))
        return true;
    }
    return false;
  };
  ASSERT_TRUE(
      WaitUntil([&] { return std::filesystem::exists(building) && running(0) && running(2); },
                std::chrono::seconds(120)))
      << Log("spawner");
  ASSERT_FALSE(running(1));
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  ASSERT_EQ(RunSpawner({"resume", dir_ / "state", "--json", dir_ / "s.json"}, "resumed",
                       std::chrono::seconds(240)),
            0)
      << Log("resumed");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["failures"], 0) << Log("resumed");
  EXPECT_EQ(Count(Log("resumed"), "adopted on daemon"), 3u) << Log("resumed");
  bool waited = false;
  for (int i = 1; i <= 4; ++i)
    waited = waited || LogHas("d" + std::to_string(i), "is being set up; ");
  EXPECT_TRUE(waited);
}

TEST_F(SpawnerResumeTest, ResumeOfWhatIsNotAJobStateFailsInOneLine) {
  std::filesystem::create_directories(dir_ / "empty");
  for (const std::string& dir : {dir_ / "nowhere", dir_ / "empty"}) {
    auto child = Start("aiac-spawner", {"resume", dir}, dir_ / "resume.log");
    EXPECT_EQ(child.WaitFor(std::chrono::seconds(30)).value_or(-1), 2) << Log("resume");
    const std::string log = Log("resume");
    EXPECT_EQ(Count(log, "\n"), 1u) << log;
    EXPECT_NE(log.find("aiac-spawner: resume: "), std::string::npos) << log;
  }
  // A super-node's registry is a RocksDB database too, but no job's state.
  StartSupernode("sn1");
  procs_.erase("sn1");  // (stopped: a database in use is refused as such)
  auto child = Start("aiac-spawner", {"resume", dir_ / "sn1.db"}, dir_ / "resume.log");
  EXPECT_EQ(child.WaitFor(std::chrono::seconds(30)).value_or(-1), 2) << Log("resume");
  EXPECT_TRUE(LogHas("resume", "not a spawner state directory")) << Log("resume");
}

TEST_F(SpawnerResumeTest, ARunKeepsItsStateByDefaultAndResumeSaysItEnded) {
  const std::string sn = StartSupernode("sn1");
  for (int i = 1; i <= 3; ++i) StartDaemon("d" + std::to_string(i), {sn});
  const std::string job = RingJob(3, 20);
  ASSERT_EQ(RunSpawner(Signed("aiac-spawner",
                              {"run", job, "--config", dir_ / "key.toml", "--supernode", sn,
                               "--json", dir_ / "ring.json", "--wait-daemons-ms", "20000"})),
            0)
      << Log("spawner");
  const std::string id = Json("ring.json")["job_id"];
  const std::string state = dir_ / (".aiac/jobs/" + id);
  ASSERT_TRUE(std::filesystem::exists(state + "/CURRENT")) << Log("spawner");
  auto child = Start("aiac-spawner", {"resume", state}, dir_ / "resume.log");
  EXPECT_EQ(child.WaitFor(std::chrono::seconds(30)).value_or(-1), 0) << Log("resume");
  EXPECT_TRUE(LogHas("resume", "job " + id + " ended already: ")) << Log("resume");
  EXPECT_TRUE(LogHas("resume", "converged")) << Log("resume");
}

}  // namespace
}  // namespace aiac::testing
