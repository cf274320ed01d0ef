// An app that crashes cannot take a daemon down (daemon/app_child.h): a hand-started platform,
// and the faulty test plugin (the cg app with crashes on demand, tests/plugins) run through the
// real spawner. A task whose app crashes once goes on elsewhere from its checkpoint; a task whose
// app crashes on two daemons ends the job within seconds; every daemon stays up and registered.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cluster_fixture.h"
#include "support/processes.h"

namespace aiac::testing {
namespace {

class AppCrashTest : public ClusterFixture {
 protected:
  // A super-node and `daemons` daemons d1, d2, ...; the super-node's address.
  std::string Platform(int daemons) {
    const std::string sn = StartSupernode("sn");
    for (int i = 1; i <= daemons; ++i) StartDaemon("d" + std::to_string(i), {sn});
    return sn;
  }
  // A 3-task cg job of the faulty plugin, whose `fault` lines ([params]) say what goes wrong;
  // `system`: the [params] lines of the system solved.
  std::string FaultyJob(const std::string& fault, const std::string& extra = "",
                        const std::string& system = "n = 30000\nbandwidth = 8\nseed = 5\n") {
    return WriteJob("faulty.toml",
                    "name = \"faulty\"\napp = \"faulty\"\ntasks = 3\n"
                    "timeout_s = 120\nbackups = 1\ncheckpoint_every = 1\n"
                    "plugin = \"" AIAC_FAULTY_PLUGIN "\"\n" +
                        extra + "[params]\n" + system + "tolerance = 1e-10\ncrash_task = 1\n" +
                        fault);
  }
  int Run(const std::string& sn, const std::string& job, const std::string& json) {
    return RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                       dir_ / json, "--quiet"},
                      "spawner", std::chrono::seconds(240));
  }
  // The job run in the background, its state kept in dir_/state (spawner.log, first.json).
  spawner::ChildProcess StartWithState(const std::string& sn, const std::string& job) {
    return Start("aiac-spawner",
                 {"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                  dir_ / "first.json", "--quiet", "--state", dir_ / "state"},
                 dir_ / "spawner.log");
  }
  // `resume` of that state (resumed.log, s.json); its exit code.
  int Resume() {
    return RunSpawner({"resume", dir_ / "state", "--json", dir_ / "s.json", "--quiet"}, "resumed",
                      std::chrono::seconds(240));
  }
  // Every daemon process still runs, and the super-node lists them all as free.
  void ExpectEveryDaemonUpAndFree(const std::string& sn, int daemons) {
    for (int i = 1; i <= daemons; ++i) {
      const std::string d = "d" + std::to_string(i);
      EXPECT_FALSE(procs_.at(d).Poll().has_value()) << d << " exited:\n" << Log(d);
    }
    nlohmann::json status;
    EXPECT_TRUE(WaitUntil(
        [&] {
          std::string out;
          if (Ask({"status", "--supernode", sn, "--json"}, out) != 0) return false;
          status = nlohmann::json::parse(out, nullptr, false);
          if (!status.is_object() || status["daemons"].size() != static_cast<size_t>(daemons))
            return false;
          for (const auto& d : status["daemons"]) {
            if (d["state"] != "free") return false;
          }
          return true;
        },
        std::chrono::seconds(60)))
        << status.dump(2);
  }
};

TEST_F(AppCrashTest, AnAppCrashingOnTwoDaemonsEndsTheJobAndNoDaemonDies) {
  const std::string sn = Platform(5);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(Run(sn, FaultyJob("crash_how = \"segv\"\ncrash_at = 3\n"), "out.json"), 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string log = Log("spawner");
  // One clear line naming the signal, the task, and both daemons.
  EXPECT_NE(log.find("app crashed: SIGSEGV in task 1 after iteration"), std::string::npos) << log;
  auto summary = Json("out.json");
  EXPECT_EQ(summary["status"], "failed");
  ASSERT_EQ(summary["app_crashes"].size(), 2u) << summary.dump(2);
  const std::string first = summary["app_crashes"][0]["daemon"];
  const std::string second = summary["app_crashes"][1]["daemon"];
  EXPECT_NE(first, second);
  EXPECT_NE(summary["error"].get<std::string>().find(" on " + first + " and " + second),
            std::string::npos)
      << summary["error"];
  for (const auto& c : summary["app_crashes"]) {
    EXPECT_EQ(c["task"], 1);
    EXPECT_EQ(c["cause"], "SIGSEGV");
    EXPECT_NE(c["stderr"].get<std::string>().find("caught SIGSEGV; backtrace:"), std::string::npos)
        << c["stderr"];
  }
  // Crashes are not daemons lost: no daemon failure counted, the run ended at the 2nd crash.
  EXPECT_EQ(summary["failures"], 0);
  EXPECT_EQ(summary["replacements"].size(), 1u);
  EXPECT_LT(seconds, 200);  // a generous bound; it ends within seconds on a quiet machine
  EXPECT_TRUE(LogHas(first, "app crashed after iteration")) << Log(first);
  ExpectEveryDaemonUpAndFree(sn, 5);
}

TEST_F(AppCrashTest, AnAppCrashingOnceGoesOnFromItsCheckpointToTheRightAnswer) {
  const std::string sn = Platform(4);
  // A 2-D Poisson grid: a one-level method needs tens of iterations, so the crash comes early
  // in the run, within milliseconds of its start: before a connection to the backup is up.
  const std::string grid = "matrix = \"" + SourcePath("examples/data/grid30.mtx") + "\"\n";
  ASSERT_EQ(Run(sn,
                FaultyJob("crash_how = \"abort\"\ncrash_at = 5\ncrash_once = \"" +
                              (dir_ / "crashed") + "\"\n",
                          "", grid),
                "out.json"),
            0)
      << Log("spawner");
  auto summary = Json("out.json");
  EXPECT_EQ(summary["status"], "converged");
  EXPECT_LT(summary["residual"].get<double>(), 1e-8);
  ASSERT_EQ(summary["app_crashes"].size(), 1u) << summary.dump(1);
  EXPECT_EQ(summary["app_crashes"][0]["cause"], "SIGABRT");
  ASSERT_EQ(summary["replacements"].size(), 1u);
  EXPECT_EQ(summary["replacements"][0]["task"], 1);
  // From its checkpoint (one every iteration), not from scratch: the daemon sends the newest
  // one it holds to the backup before it reports the crash.
  EXPECT_GT(summary["replacements"][0]["restored_iteration"].get<uint64_t>(), 0u)
      << Log("d1") << Log("d2") << Log("d3") << Log("d4");
  ExpectEveryDaemonUpAndFree(sn, 4);
}

TEST_F(AppCrashTest, AnAppCrashingWhileItIsSetUpIsAnAppCrashToo) {
  const std::string sn = Platform(5);
  EXPECT_NE(Run(sn, FaultyJob("crash_how = \"exit\"\ncrash_at = 0\n"), "out.json"), 0);
  auto summary = Json("out.json");
  EXPECT_EQ(summary["status"], "failed");
  EXPECT_NE(summary["error"].get<std::string>().find("app crashed: exit code 3 in task 1"),
            std::string::npos)
      << summary["error"];
  EXPECT_EQ(summary["app_crashes"].size(), 2u);
  ExpectEveryDaemonUpAndFree(sn, 5);
}

// The crashes survive the spawner's loss: one crash, the task goes on elsewhere, the spawner is
// killed, and the resumed one ends the run with the crash in its summary (it was not kept in the
// job's state: the summary said none, and a second crash would have cost one more spare).
TEST_F(AppCrashTest, AnAppCrashIsStillReportedAfterTheSpawnerIsResumed) {
  const std::string sn = Platform(5);
  const std::string job = FaultyJob("crash_how = \"segv\"\ncrash_at = 3\ncrash_once = \"" +
                                        (dir_ / "crashed") + "\"\ncrash_pace = 0.05\n",
                                    "orphan_seconds = 120\n");
  auto spawner = StartWithState(sn, job);
  ASSERT_TRUE(
      WaitUntil([&] { return LogHas("spawner", "resumes on daemon"); }, std::chrono::seconds(120)))
      << Log("spawner");
  ASSERT_TRUE(LogHas("spawner", "app crashed on daemon")) << Log("spawner");
  ASSERT_FALSE(LogHas("spawner", "gathering")) << "too fast to be killed while it iterates";
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  auto summary = Json("s.json");
  EXPECT_EQ(summary["status"], "converged");
  EXPECT_EQ(summary["spawner_restarts"], 1);
  ASSERT_EQ(summary["app_crashes"].size(), 1u) << summary.dump(1);
  EXPECT_EQ(summary["app_crashes"][0]["task"], 1);
  EXPECT_EQ(summary["app_crashes"][0]["cause"], "SIGSEGV");
  EXPECT_EQ(summary["failures"], 0);
  ExpectEveryDaemonUpAndFree(sn, 5);
}

// An app that crashes while no spawner supervises the job: its daemon keeps the report and tells
// the spawner that adopts the task, which counts it as a crash (the daemon stays the job's, not
// lost) and moves the task on from its checkpoint. (The adoption used to be refused, "no task 1
// runs here", and the spawner counted a daemon lost and no crash.)
TEST_F(AppCrashTest, AnAppCrashWhileTheSpawnerIsAwayIsToldToTheOneThatResumes) {
  const std::string sn = Platform(5);
  // (The faulty plugin here never crashes by itself: task 1's app process gets SIGSEGV once
  // the spawner is gone, whatever iteration the task is at.)
  const std::string job = FaultyJob(
      "crash_how = \"segv\"\ncrash_at = 1000000000\ncrash_pace = 0.05\n", "orphan_seconds = 120\n");
  auto spawner = StartWithState(sn, job);
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  std::string crashed;
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (int i = 1; i <= 5 && crashed.empty(); ++i) {
          const std::string d = "d" + std::to_string(i);
          if (LogHas(d, "running task 1 of") && LogHas(d, "waiting for its spawner")) crashed = d;
        }
        return !crashed.empty();
      },
      std::chrono::seconds(120)));
  const auto apps = ProcessesMatching("aiac-app-child",
                                      "--parent " + std::to_string(procs_.at(crashed).pid()) + " ");
  ASSERT_EQ(apps.size(), 1u) << Log(crashed);
  ::kill(apps[0], SIGSEGV);
  ASSERT_TRUE(WaitUntil([&] { return LogHas(crashed, "ended while its spawner was away"); },
                        std::chrono::seconds(120)))
      << Log(crashed);
  EXPECT_TRUE(LogHas(crashed, "app crashed after iteration")) << Log(crashed);
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  EXPECT_TRUE(LogHas(crashed, "told how it ended")) << Log(crashed);
  auto summary = Json("s.json");
  EXPECT_EQ(summary["status"], "converged");
  ASSERT_EQ(summary["app_crashes"].size(), 1u) << summary.dump(1);
  EXPECT_EQ(summary["app_crashes"][0]["task"], 1);
  EXPECT_EQ(summary["app_crashes"][0]["daemon"], crashed);
  EXPECT_EQ(summary["app_crashes"][0]["cause"], "SIGSEGV");
  EXPECT_EQ(summary["failures"], 0) << Log("resumed");
  EXPECT_EQ(summary["replacements"].size(), 1u);
  ExpectEveryDaemonUpAndFree(sn, 5);
}

// (5 s: a healthy task reports every 250 ms, but its set-up may take a second under the
// sanitizers.)
TEST_F(AppCrashTest, AHungAppIsKilledAfterAppStallSeconds) {
  const std::string sn = Platform(5);
  EXPECT_NE(Run(sn, FaultyJob("crash_how = \"hang\"\ncrash_at = 3\n", "app_stall_seconds = 5\n"),
                "out.json"),
            0);
  auto summary = Json("out.json");
  EXPECT_EQ(summary["status"], "failed");
  EXPECT_NE(
      summary["error"].get<std::string>().find("app crashed: hung (no progress in 5 s) in task 1"),
      std::string::npos)
      << summary["error"];
  ExpectEveryDaemonUpAndFree(sn, 5);
}

}  // namespace
}  // namespace aiac::testing
