// Jobs outlive their spawner (docs/fault-tolerance.md, "When the spawner is lost"): a spawner
// SIGKILLed while the tasks run, while it assigns them or while it gathers the result is
// resumed from its state directory by `aiac-spawner resume`, which adopts the tasks on their
// daemons, replaces a daemon killed meanwhile, and ends the run with the fault-free answer; a
// state in use is refused to a second spawner, and one cut off while another took the job over
// stops without ending it; `resume` of a finished job says so, and of a directory that is not a
// job's state fails in one line.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <optional>
#include <regex>
#include <thread>

#include "integration/cluster_fixture.h"
#include "integration/run_checks.h"
#include "support/http_client.h"

namespace aiac::testing {
namespace {

using SpawnerResumeTest = ClusterFixture;

class ResumeRun : public SpawnerResumeTest {
 protected:
  // The job's system (a generated banded one); its tasks iterate about 100 times.
  static constexpr cg::GeneratedSpec kSystem{30000, 12, 5};
  // Seconds each task sleeps after an iteration (the test plugin's crash_pace): the job lasts
  // about 3 s of little CPU, as long under the sanitizers as without them.
  static constexpr double kPace = 0.03;
  // For the runs that must still iterate 5 s in: about 10 s.
  static constexpr double kSlowPace = 0.1;
  // A super-node, `daemons` daemons, and a 4-task CG job (the cg app as the test plugin "faulty",
  // paced, with no fault) whose tasks iterate for a few seconds (live balancing off:
  // balance_test resumes a spawner killed while items move).
  // `waits`: the job's orphan_seconds and spawner_timeout_s lines.
  // `daemon_args`, `supernode_args`: more arguments for every daemon, for the super-node.
  void SetUpPlatform(int daemons, const std::string& waits = "orphan_seconds = 120\n",
                     double pace = kPace, const std::vector<std::string>& daemon_args = {},
                     const std::vector<std::string>& supernode_args = {}) {
    sn_ = StartSupernode("sn1", supernode_args);
    daemons_ = daemons;
    for (int i = 1; i <= daemons; ++i)
      StartDaemon("d" + std::to_string(i), {sn_}, "key.toml", "1", daemon_args);
    WriteJob("cg.toml", "name = \"rs\"\napp = \"faulty\"\nplugin = \"" AIAC_FAULTY_PLUGIN
                        "\"\ntasks = 4\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n" +
                            waits + "[params]\nn = " + std::to_string(kSystem.n) +
                            "\nbandwidth = " + std::to_string(kSystem.bandwidth) +
                            "\nseed = " + std::to_string(kSystem.seed) +
                            "\ntolerance = 1e-12\noutput = \"x.mtx\"\ncrash_pace = " +
                            std::to_string(pace) + "\n");
  }
  spawner::ChildProcess StartRun(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"run",
                                  dir_ / "cg.toml",
                                  "--config",
                                  dir_ / "key.toml",
                                  "--supernode",
                                  sn_,
                                  "--balance",
                                  "off",
                                  "--state",
                                  dir_ / "state",
                                  "--json",
                                  dir_ / "first.json",
                                  "--wait-daemons-ms",
                                  "20000"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Start("aiac-spawner", Signed("aiac-spawner", args), dir_ / "spawner.log");
  }
  // Resumes the job; the resumed spawner's exit code.
  int Resume() {
    return RunSpawner({"resume", dir_ / "state", "--json", dir_ / "s.json"}, "resumed",
                      std::chrono::seconds(240));
  }
  // How many of the platform's daemons logged `what`, and the first that did ("" if none).
  int DaemonsSaying(const std::string& what) {
    int n = 0;
    for (int i = 1; i <= daemons_; ++i) n += LogHas("d" + std::to_string(i), what);
    return n;
  }
  std::string FirstDaemonSaying(const std::string& what) {
    for (int i = 1; i <= daemons_; ++i) {
      if (LogHas("d" + std::to_string(i), what)) return "d" + std::to_string(i);
    }
    return "";
  }
  // Runs the job and SIGKILLs its spawner once every task has checkpoints on both of its
  // backups; returns when the four tasks' daemons wait for a spawner to resume.
  void KillTheSpawnerWhileTheTasksRun() {
    auto spawner = StartRun();
    ASSERT_TRUE(
        WaitUntil([&] { return MaxCheckpoints(Log("spawner")) >= 8; }, std::chrono::seconds(120)))
        << Log("spawner");
    ASSERT_TRUE(LogHas("spawner", "starting")) << Log("spawner");
    spawner.Signal(SIGKILL);
    spawner.WaitFor(std::chrono::seconds(10));
    ASSERT_TRUE(WaitUntil([&] { return DaemonsSaying("waiting for its spawner to resume") == 4; },
                          std::chrono::seconds(60)));
  }
  // The resumed run's summary, checked: converged to the direct solution, with `adopted` tasks
  // adopted where they ran and `lost` daemons replaced from a checkpoint (`victim` the first).
  nlohmann::json ResumedRight(size_t adopted, int lost, const std::string& victim = "") {
    auto j = Json("s.json");
    EXPECT_EQ(j["status"], "converged");
    EXPECT_EQ(j["failures"], lost) << Log("resumed");
    EXPECT_EQ(Count(Log("resumed"), "adopted on daemon"), adopted) << Log("resumed");
    EXPECT_EQ(j["replacements"].size(), static_cast<size_t>(lost)) << Log("resumed");
    if (!victim.empty() && !j["replacements"].empty()) {
      EXPECT_EQ(j["replacements"][0]["failed"], victim);
      EXPECT_GT(j["replacements"][0]["restored_iteration"].get<uint64_t>(), 0u)
          << "restarted from scratch";
    }
    EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), kSystem), 1e-8);
    return j;
  }
  std::string sn_;
  int daemons_ = 0;
};

TEST_F(ResumeRun, ASpawnerKilledWhileTheTasksRunIsResumedWithTheSameAnswer) {
  SetUpPlatform(6);
  ASSERT_NO_FATAL_FAILURE(KillTheSpawnerWhileTheTasksRun());
  // `status` shows the job, its spawner lost (it said "no running job" while the tasks ran), and
  // `cancel` says why it cannot.
  std::smatch m;
  const std::string log = Log("spawner");
  ASSERT_TRUE(std::regex_search(log, m, std::regex("job (rs-[0-9a-f]+)"))) << log;
  const std::string id = m[1];
  std::string text;
  ASSERT_EQ(Ask({"status", "--supernode", sn_, "--job", id}, text), 0) << text;
  EXPECT_NE(text.find("its spawner is lost: the tasks run on where they are, waiting for "
                      "`aiac-spawner resume`"),
            std::string::npos)
      << text;
  ASSERT_EQ(Ask({"status", "--supernode", sn_, "--job", id, "--json"}, text), 0) << text;
  EXPECT_EQ(nlohmann::json::parse(text)["phase"], "spawner-lost") << text;
  EXPECT_EQ(Ask({"cancel", id, "--supernode", sn_}, text, "cancel"), 1) << text;
  EXPECT_NE(text.find("job " + id + "'s spawner is lost: `aiac-spawner resume`"), std::string::npos)
      << text;
  // The tasks go on without it; one task daemon is killed while it is away.
  const std::string victim = FirstDaemonSaying("waiting for its spawner");
  procs_.at(victim).Signal(SIGKILL);
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  // The three others were adopted where they ran, none restarted.
  auto j = ResumedRight(3, 1, victim);
  EXPECT_EQ(j["spawner_restarts"], 1);
  // Its end is kept: a second resume says so and does nothing.
  auto again = Start("aiac-spawner", {"resume", dir_ / "state"}, dir_ / "again.log");
  ASSERT_EQ(again.WaitFor(std::chrono::seconds(60)).value_or(-1), 0) << Log("again");
  EXPECT_TRUE(LogHas("again", "ended already: job rs (faulty, async): converged")) << Log("again");
  // The resumed spawner took the job's record over and ended it.
  EXPECT_EQ(Ask({"status", "--supernode", sn_, "--job", id}, text, "after"), 1) << text;
  EXPECT_NE(text.find("no running job " + id), std::string::npos) << text;
}

// A task daemon stopped (SIGSTOP) while its spawner is away: its host still accepts connections,
// and it answers none. The resumed spawner takes it for lost once its failure timeout has passed
// (it went on dialing it for five handshake timeouts, 26 s, while the job waited) and
// replaces its task from a checkpoint. Let run again meanwhile, the stopped daemon's task, an
// older incarnation, changes nothing in the answer.
TEST_F(ResumeRun, ADaemonStoppedWhileItsSpawnerIsAwayIsReplacedOnResume) {
  SetUpPlatform(6, "orphan_seconds = 120\n", kPace, {"--metrics", "127.0.0.1:0"});
  ASSERT_NO_FATAL_FAILURE(KillTheSpawnerWhileTheTasksRun());
  const std::string victim = FirstDaemonSaying("waiting for its spawner");
  procs_.at(victim).Signal(SIGSTOP);
  auto resumed = Start("aiac-spawner", {"resume", dir_ / "state", "--json", dir_ / "s.json"},
                       dir_ / "resumed.log");
  ASSERT_TRUE(
      WaitUntil([&] { return LogHas("resumed", "resumes on daemon"); }, std::chrono::seconds(120)))
      << Log("resumed");
  procs_.at(victim).Signal(SIGCONT);
  ASSERT_EQ(resumed.WaitFor(std::chrono::seconds(240)).value_or(-1), 0) << Log("resumed");
  EXPECT_TRUE(LogHas("resumed", "daemon " + victim + " (task")) << Log("resumed");
  EXPECT_TRUE(LogHas("resumed", "unreachable: handshake with")) << Log("resumed");
  // It was dialed once: running again, the stopped daemon finds one connection in its backlog,
  // closed by the spawner during the handshake (five before).
  const std::string metrics = MetricsAddress(victim);
  const std::string failed_handshakes = "aiac_handshake_failures_total{reason=\"tls\"}";
  auto failed = [&] { return MetricValue(HttpGet(metrics, "/metrics").body, failed_handshakes); };
  ASSERT_TRUE(WaitUntil([&] { return failed() >= 1; }, std::chrono::seconds(60))) << Log(victim);
  EXPECT_EQ(failed(), 1) << Log(victim);
  ResumedRight(3, 1, victim);
}

// The super-node went down with the spawner (the same host rebooted, say): the resumed spawner
// dials the tasks' daemons at their stored addresses and takes the job over without it (until
// 2026-12-06 it gave up after 14 s and stored the job as failed, its tasks still running).
TEST_F(ResumeRun, ASpawnerResumedWhileItsSuperNodeIsDownTakesTheTasksOver) {
  SetUpPlatform(5);
  ASSERT_NO_FATAL_FAILURE(KillTheSpawnerWhileTheTasksRun());
  procs_.at("sn1").Signal(SIGKILL);
  procs_.at("sn1").WaitFor(std::chrono::seconds(10));
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  EXPECT_TRUE(LogHas("resumed", "taking the tasks over without a super-node")) << Log("resumed");
  ResumedRight(4, 0);
}

// A resume that fails before it reaches the tasks' daemons (here every super-node refuses the
// key its configuration now names) does not end the job: its tasks run on, and a resume with
// the configuration put right takes them over.
TEST_F(ResumeRun, AResumeThatCouldNotTakeTheJobOverLeavesItToTheNext) {
  SetUpPlatform(5);
  ASSERT_NO_FATAL_FAILURE(KillTheSpawnerWhileTheTasksRun());
  const std::string key = ReadFile(dir_ / "key.toml");
  WriteFile(dir_ / "key.toml", "cluster_key = \"not-the-cluster-key-0123456789\"\n");
  EXPECT_NE(RunSpawner({"resume", dir_ / "state"}, "refused", std::chrono::seconds(120)), 0)
      << Log("refused");
  EXPECT_TRUE(LogHas("refused", "not taken over; its tasks run on where they are"))
      << Log("refused");
  WriteFile(dir_ / "key.toml", key);
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  EXPECT_EQ(ResumedRight(4, 0)["spawner_restarts"], 2);
}

// The job file edited while the spawner is away (another system size): the resumed spawner goes
// on with the job as it ran, from the state's copy, and says so. (It read the file as it then
// was: it checked the tasks' slices against a system of another size, and the run failed at its
// end, "result of task 3 does not fit its rows".)
TEST_F(ResumeRun, AJobFileEditedWhileItsSpawnerIsAwayIsResumedAsTheJobRan) {
  SetUpPlatform(5);
  ASSERT_NO_FATAL_FAILURE(KillTheSpawnerWhileTheTasksRun());
  const std::string job = ReadFile(dir_ / "cg.toml");
  const std::string n = "n = " + std::to_string(kSystem.n) + "\n";
  ASSERT_NE(job.find(n), std::string::npos) << job;
  std::string edited = job;
  edited.replace(edited.find(n), n.size(), "n = 20000\n");
  WriteFile(dir_ / "cg.toml", edited);
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  EXPECT_TRUE(LogHas("resumed",
                     "cg.toml changed since the job started; going on with the job as "
                     "it ran (the state's copy)"))
      << Log("resumed");
  ResumedRight(4, 0);
}

// The plugin replaced while the spawner is away (rebuilt, say): the tasks run the one they started
// with, and a replacement would get the new one, so the resume is refused in one line and leaves
// the job to a resume with the job's plugin.
TEST_F(ResumeRun, AResumeRefusesAPluginThatChangedSinceTheJobStarted) {
  SetUpPlatform(5);
  const std::string plugin = dir_ / "faulty.so";
  const std::string bytes = ReadFile(AIAC_FAULTY_PLUGIN);
  WriteFile(plugin, bytes);
  std::string job = ReadFile(dir_ / "cg.toml");
  job.replace(job.find(AIAC_FAULTY_PLUGIN), std::string(AIAC_FAULTY_PLUGIN).size(), plugin);
  WriteFile(dir_ / "cg.toml", job);
  ASSERT_NO_FATAL_FAILURE(KillTheSpawnerWhileTheTasksRun());
  WriteFile(plugin, bytes + "rebuilt");
  EXPECT_EQ(RunSpawner({"resume", dir_ / "state"}, "refused", std::chrono::seconds(120)), 2)
      << Log("refused");
  EXPECT_TRUE(
      LogHas("refused", "aiac-spawner: resume: plugin " + plugin + " changed since job rs-"))
      << Log("refused");
  EXPECT_TRUE(LogHas("refused", "its tasks run the plugin they started with")) << Log("refused");
  WriteFile(plugin, bytes);
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  EXPECT_EQ(ResumedRight(4, 0)["spawner_restarts"], 1);
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
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), kSystem), 1e-8);
  // The daemons whose set-up died with the spawner hold no task for the resumed one: their
  // tasks start again elsewhere, but no daemon was lost.
  EXPECT_EQ(j["failures"], 0) << Log("resumed");
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
  // Either way --json holds the run's summary: the stored one when the run had ended.
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["spawner_restarts"], LogHas("resumed", "ended already") ? 0 : 1) << Log("resumed");
  EXPECT_EQ(j["failures"], 0) << Log("resumed");
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), kSystem), 1e-8);
}

// Killed as soon as it logged the checked result: its end is stored before it halts the tasks, so
// the resume either says the job ended (the end was stored) or finds every task where it ran,
// adopts it and checks the result again (the kill came first). (The end was stored only after the
// halts, the final counts and the release: a spawner killed in between left a state that the
// resume took for a running job whose tasks had all ended; it restarted them from scratch, or
// failed for want of daemons. Found when this suite's jobs became short.)
TEST_F(ResumeRun, ASpawnerKilledOnceItCheckedTheResultLeavesTheTasksOrTheEnd) {
  SetUpPlatform(5);
  auto spawner = StartRun();
  // Polled often: the halts follow the line at once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  std::optional<int> ended;
  while (!LogHas("spawner", "result checked") && !(ended = spawner.Poll()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(ended.has_value()) << "ended before it was killed:\n" << Log("spawner");
  ASSERT_TRUE(LogHas("spawner", "result checked")) << Log("spawner");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  const bool stored = LogHas("resumed", "ended already: job rs (faulty, async): converged");
  EXPECT_FALSE(LogHas("resumed", "kept no task")) << Log("resumed");
  if (!stored) {
    EXPECT_EQ(Count(Log("resumed"), "adopted on daemon"), 4u) << Log("resumed");
  }
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["spawner_restarts"], stored ? 0 : 1);
  EXPECT_EQ(j["failures"], 0);
  EXPECT_TRUE(j["replacements"].empty()) << Log("resumed");
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), kSystem), 1e-8);
}

// A task answers each confirmation round once. A spawner resumed after the tasks converged
// confirms at once, in its first round; when it is killed while it gathers, the next one must not
// ask for that round again (it did: the tasks never answered, and the job waited for its timeout;
// found by a campaign of spawner kills). Two resumes in a row are killed while they gather, and a
// third ends the run at once with the right answer.
TEST_F(ResumeRun, ASpawnerResumedAfterOneKilledWhileItGatheredConfirmsAgain) {
  SetUpPlatform(5);
  auto spawner = StartRun();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  for (int k = 1; k <= 2; ++k) {
    std::string log = "gathering";
    log += std::to_string(k);
    auto resumed =
        Start("aiac-spawner", {"resume", dir_ / "state", "--quiet"}, dir_ / (log + ".log"));
    // Polled often: its gather and check take tens of milliseconds.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
    std::optional<int> ended;
    while (!LogHas(log, "gathering their slices") && !(ended = resumed.Poll()) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_FALSE(ended.has_value()) << "ended before it gathered:\n" << Log(log);
    ASSERT_TRUE(LogHas(log, "gathering their slices")) << Log(log);
    resumed.Signal(SIGKILL);
    resumed.WaitFor(std::chrono::seconds(10));
    if (LogHas(log, "result checked")) {
      GTEST_SKIP() << "resume " << k << " ended the run before it was killed";
    }
  }
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(Resume(), 0) << Log("resumed");
  EXPECT_FALSE(LogHas("resumed", "timed out")) << Log("resumed");
  // Within the failure timeout's order, not the job's timeout (300 s).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60)) << Log("resumed");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["spawner_restarts"], 3);
  EXPECT_EQ(j["failures"], 0) << Log("resumed");
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), kSystem), 1e-8);
}

// Two spawners may not drive one job: while the resumed one runs, the state is in use.
TEST_F(ResumeRun, ASecondResumeWhileTheFirstRunsIsRefused) {
  SetUpPlatform(5);
  auto spawner = StartRun();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  // Held where it is (it keeps the state's lock): a resume waits up to 3 s for a lock a killed
  // spawner may still hold, and the job, 3 s of iterations on a quiet machine, could end within
  // that wait (the second resume then said "ended already" and exited 0).
  spawner.Signal(SIGSTOP);
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
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), kSystem), 1e-8);
}

// Daemons count the time with nothing from their job's spawner (SpawnerAlive every second,
// protocol 8). A spawner stopped past spawner_timeout_s (SIGSTOP: its links stay open, as when
// its host sleeps) counts as lost: the tasks run on, and when it runs again within
// orphan_seconds they go on under it, and it counts the time it did not run towards no
// daemon's silence: the run ends as if nothing had happened.
TEST_F(ResumeRun, ASpawnerStoppedPastItsTimeoutIsWaitedForAndGoesOnWhenItRunsAgain) {
  // (a slower pace than the others: a run of 10 s, so that it still iterates 5 s in)
  SetUpPlatform(4, "orphan_seconds = 120\nspawner_timeout_s = 3\n", kSlowPace,
                {"--metrics", "127.0.0.1:0"});
  // Each daemon's aiac_task_waiting_for_spawner: how many are waiting.
  auto waiting = [&] {
    int n = 0;
    for (int i = 1; i <= 4; ++i) {
      const HttpReply r = HttpGet(MetricsAddress("d" + std::to_string(i)), "/metrics");
      n += MetricValue(r.body, "aiac_task_waiting_for_spawner") == 1;
    }
    return n;
  };
  auto spawner = StartRun();
  ASSERT_TRUE(
      WaitUntil([&] { return MaxCheckpoints(Log("spawner")) >= 8; }, std::chrono::seconds(120)))
      << Log("spawner");
  // Running, the spawner is heard every second, whether or not it has anything to say: nothing
  // counts as silence 5 s in (it sends nothing else while the blocks iterate).
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "[   5."); }, std::chrono::seconds(60)))
      << Log("spawner");
  ASSERT_EQ(DaemonsSaying("sent nothing for"), 0) << Log("d1");
  EXPECT_EQ(waiting(), 0);
  ASSERT_FALSE(LogHas("spawner", "gathering")) << "too fast to be stopped while it iterates";
  spawner.Signal(SIGSTOP);
  ASSERT_TRUE(
      WaitUntil([&] { return DaemonsSaying("sent nothing for") == 4; }, std::chrono::seconds(60)))
      << Log("d1");
  EXPECT_TRUE(LogHas("d1", "runs on for 120 s, waiting for it to speak")) << Log("d1");
  EXPECT_EQ(waiting(), 4);
  spawner.Signal(SIGCONT);
  ASSERT_TRUE(WaitUntil([&] { return DaemonsSaying("its spawner speaks again") == 4; },
                        std::chrono::seconds(60)))
      << Log("d1");
  EXPECT_EQ(waiting(), 0);
  ASSERT_EQ(spawner.WaitFor(std::chrono::seconds(240)).value_or(-1), 0) << Log("spawner");
  EXPECT_TRUE(LogHas("spawner", "the spawner did not run for")) << Log("spawner");
  auto j = Json("first.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["failures"], 0) << Log("spawner");
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), kSystem), 1e-8);
}

// The daemon's side of the same: a daemon that itself did not run (stopped here for twice the
// spawner timeout; starved on an overloaded host) finds its spawner's messages waiting unread when
// it runs again, and its check of the spawner's silence, due long ago, may come before them: it
// sees it came late and counts that time as nobody's silence. (The spawner's failure timeout is
// raised so that it keeps the stopped daemon.)
TEST_F(ResumeRun, ADaemonThatDidNotRunDoesNotCountThatTimeAsItsSpawnersSilence) {
  SetUpPlatform(4, "orphan_seconds = 120\nspawner_timeout_s = 3\n", kSlowPace);
  auto spawner = StartRun({"--failure-timeout-ms", "60000"});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "[   4."); }, std::chrono::seconds(60)))
      << Log("spawner");
  ASSERT_FALSE(LogHas("spawner", "gathering")) << "too fast to stop a daemon while it iterates";
  const std::string stopped = FirstDaemonSaying("running task");
  ASSERT_FALSE(stopped.empty());
  procs_.at(stopped).Signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(6));  // the length of the fault, not a wait
  procs_.at(stopped).Signal(SIGCONT);
  ASSERT_EQ(spawner.WaitFor(std::chrono::seconds(240)).value_or(-1), 0) << Log("spawner");
  EXPECT_TRUE(LogHas(stopped, "the daemon did not run for at least")) << Log(stopped);
  EXPECT_FALSE(LogHas(stopped, "sent nothing for")) << Log(stopped);
  auto j = Json("first.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["failures"], 0) << Log("spawner");
}

// A spawner that never runs again does not hold its daemons: past spawner_timeout_s and then
// orphan_seconds, each task ends and its daemon closes the link and is free for other jobs (once
// the super-node's grant lease has passed: 2 s here, 30 s by default).
TEST_F(ResumeRun, ASpawnerStoppedForGoodLetsItsDaemonsGo) {
  SetUpPlatform(4, "orphan_seconds = 2\nspawner_timeout_s = 3\n", kPace, {},
                {"--grant-lease-ms", "2000"});
  auto spawner = StartRun();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  spawner.Signal(SIGSTOP);
  ASSERT_TRUE(
      WaitUntil([&] { return DaemonsSaying("its spawner did not come back within 2 s") == 4; },
                std::chrono::seconds(90)))
      << Log("d1");
  spawner.Signal(SIGKILL);
  spawner.WaitFor(std::chrono::seconds(10));
  // Its super-node, which kept the job as spawner-lost once the spawner's link closed, forgets it
  // as no daemon runs its tasks.
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "its spawner is lost and no daemon runs"); },
                        std::chrono::seconds(60)))
      << Log("sn1");
  std::string text;
  ASSERT_EQ(Ask({"status", "--supernode", sn_, "--json"}, text), 0) << text;
  EXPECT_TRUE(nlohmann::json::parse(text)["jobs"].empty()) << text;
  // The four are free again: a ring job of four tasks gets them all.
  WriteJob("ring.toml", "name = \"again\"\napp = \"ring\"\ntasks = 4\n[params]\nrounds = 5\n");
  EXPECT_EQ(RunSpawner({"run", dir_ / "ring.toml", "--config", dir_ / "key.toml", "--supernode",
                        sn_, "--wait-daemons-ms", "60000"},
                       "again", std::chrono::seconds(120)),
            0)
      << Log("again");
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
  auto child =
      Start("aiac-spawner", {"resume", state, "--json", dir_ / "again.json"}, dir_ / "resume.log");
  EXPECT_EQ(child.WaitFor(std::chrono::seconds(30)).value_or(-1), 0) << Log("resume");
  EXPECT_TRUE(LogHas("resume", "job " + id + " ended already: ")) << Log("resume");
  EXPECT_TRUE(LogHas("resume", "converged")) << Log("resume");
  // --json gets the summary the run stored: the same job, tasks and result.
  auto stored = Json("again.json");
  auto ran = Json("ring.json");
  EXPECT_EQ(stored["job_id"], id);
  EXPECT_EQ(stored["status"], "converged");
  EXPECT_EQ(stored["per_task"], ran["per_task"]);
  EXPECT_EQ(stored["result"], ran["result"]);
  // The whole summary, its times and phases too: they were the runner's alone (no read, no
  // prepare, the wall time from the request for daemons), not the command's that `run` printed.
  EXPECT_EQ(stored, ran) << stored.dump() << "\n" << ran.dump();
}

}  // namespace
}  // namespace aiac::testing
