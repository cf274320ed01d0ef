// Daemons lost during a run (SIGKILL from outside, at moments the run does not choose): the
// run goes on and gives the fault-free answer; with no daemon left it fails cleanly, naming the
// lost daemon; and no process is ever left behind.
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <csignal>
#include <limits>
#include <regex>
#include <set>

#include "apps/cg/cg_problem.h"
#include "apps/cg/matrix_market.h"
#include "apps/synthetic/workload.h"
#include "integration/cluster_fixture.h"
#include "integration/run_checks.h"

namespace aiac::testing {
namespace {

using FaultTest = ClusterFixture;

// The runs killed mid-way solve their blocks with inner = "cg": factored once, the same systems
// converge in a second or two, before the kills a test makes at the moments it waits for.

// Daemons the spawner sent the plugin to: those that ran (or run) a task.
std::vector<std::string> TaskDaemons(const std::string& log) {
  std::vector<std::string> out;
  std::regex re("sending plugin .* to daemon (d[0-9]+)");
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

// The pid of the one process of this test started with `--id ID` (a daemon or a super-node,
// also of a --local cluster), or -1 when there is not exactly one.
int PidOf(const std::string& dir, const std::string& id) {
  auto pids = ProcessesMatching(dir, "--id " + id + " ");
  return pids.size() == 1 ? pids[0] : -1;
}

TEST_F(FaultTest, ThreeKilledDaemonsSameAnswer) {
  const int n = 300000;
  WriteJob("cg.toml",
           "name = \"ft\"\napp = \"cg\"\ntasks = 6\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = " +
               std::to_string(n) +
               "\nbandwidth = 12\nseed = 5\ntolerance = 1e-10\n"
               "output = \"x.mtx\"\n");
  auto spawner =
      Start("aiac-spawner", {"run", "--local", "10", dir_ / "cg.toml", "--json", dir_ / "f.json"},
            dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  std::set<std::string> killed;
  for (int k = 0; k < 3; ++k) {
    // Wait for a checkpoint round after the start (or after the previous resume), then kill a
    // task daemon that is still alive.
    const std::string before = Log("spawner");
    ASSERT_TRUE(WaitUntil([&] { return Log("spawner").size() > before.size() + 200; },
                          std::chrono::seconds(120)));
    std::string victim;
    for (const auto& d : TaskDaemons(Log("spawner"))) {
      if (!killed.count(d)) victim = d;
    }
    ASSERT_FALSE(victim.empty()) << Log("spawner");
    const int pid = PidOf(dir_.path(), victim);
    ASSERT_GT(pid, 0) << victim;
    kill(pid, SIGKILL);
    killed.insert(victim);
    ASSERT_TRUE(WaitUntil(
        [&] {
          return Count(Log("spawner"), "resumes on daemon") >= static_cast<size_t>(k + 1) ||
                 LogHas("spawner", "error:");
        },
        std::chrono::seconds(120)))
        << Log("spawner");
  }
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  ASSERT_EQ(*code, 0) << Log("spawner");
  auto j = Json("f.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["failures"], 3);
  ASSERT_EQ(j["replacements"].size(), 3u);
  for (const auto& r : j["replacements"]) {
    EXPECT_TRUE(killed.count(r["failed"].get<std::string>())) << r;
    EXPECT_GE(r["seconds_to_resume"].get<double>(), 0) << r;
  }
  // (A replacement may itself be killed later and replaced again.) At the end no task is on a
  // dead daemon.
  for (const auto& t : j["per_task"])
    EXPECT_FALSE(killed.count(t["daemon"].get<std::string>())) << t;
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  // The fault-free answer: the system's direct solution.
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), {n, 12, 5}), 1e-8);
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

TEST_F(FaultTest, KilledDaemonWithNoSpareFailsCleanly) {
  WriteJob("long.toml",
           "name = \"long\"\napp = \"cg\"\ntimeout_s = 300\n[params]\nn = 100000\nbandwidth = 12\n"
           "tolerance = 1e-300\n");  // never converges: runs until the kill
  auto spawner =
      Start("aiac-spawner", {"run", "--local", "4", dir_ / "long.toml", "--json", dir_ / "f.json"},
            dir_ / "spawner.log");
  // Setup under ASan on a loaded 2-core machine took over 30 s in CI: the bound is generous.
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  // Only this test's cluster: ctest runs other tests with daemons named d2 at the same time.
  const int victim = PidOf(dir_.path(), "d2");
  ASSERT_GT(victim, 0);
  kill(victim, SIGKILL);
  auto code = spawner.WaitFor(std::chrono::seconds(120));
  ASSERT_TRUE(code.has_value()) << "spawner did not notice the loss";
  EXPECT_EQ(*code, 1);
  auto j = Json("f.json");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["failures"], 1);
  const std::string error = j["error"].get<std::string>();
  EXPECT_NE(error.find("d2"), std::string::npos) << error;
  EXPECT_NE(error.find("no daemon left"), std::string::npos) << error;
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// Building a large block takes the app seconds; it runs off the daemon's io thread, so the
// daemon keeps heartbeating meanwhile and a super-node with a short failure timeout never takes
// the busy daemon for dead (it did when the block was built on the io thread).
TEST_F(FaultTest, ADaemonBuildingALargeBlockKeepsHeartbeating) {
  WriteFile(dir_ / "sn.toml",
            ReadFile(dir_ / "key.toml") + "failure_timeout_ms = 1000\ndigest_interval_ms = 100\n");
  WriteFile(dir_ / "d.toml", ReadFile(dir_ / "key.toml") + "heartbeat_ms = 150\n");
  const std::string sn = StartSupernode("sn1", {}, "127.0.0.1:0", "sn.toml");
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {sn}, "d.toml");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "registered") && LogHas("d2", "registered"); }))
      << Log("d1");
  WriteJob("cg.toml",
           "name = \"big\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 300\n"
           "[params]\nn = 600000\nbandwidth = 12\ntolerance = 1e-6\nresidual_tolerance = 1e-6\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "cg.toml",
                        "--json", dir_ / "big.json"},
                       "spawner", std::chrono::seconds(240)),
            0)
      << Log("spawner");
  EXPECT_EQ(Json("big.json")["status"], "converged");
  // How long the blocks took to build, for the reader of a failure.
  std::smatch m;
  const std::string d1 = Log("d1");
  ASSERT_TRUE(std::regex_search(d1, m, std::regex("built in [0-9.]+ s"))) << d1;
  EXPECT_FALSE(LogHas("sn1", "expired")) << m[0] << "\n" << Log("sn1");
}

// A daemon killed after it registered is still listed as free until the super-node expires it:
// the job is granted a dead daemon, and replaces it instead of failing.
TEST_F(FaultTest, AGrantedDaemonThatIsDeadIsReplaced) {
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2", "d3", "d4"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("d1", "registered") && LogHas("d2", "registered") && LogHas("d3", "registered") &&
           LogHas("d4", "registered");
  })) << Log("d1");
  procs_.at("d2").Signal(SIGKILL);
  procs_.at("d2").Stop();
  WriteJob("cg.toml",
           "name = \"dead\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n"
           "[params]\nn = 20000\nbandwidth = 8\ntolerance = 1e-10\n");
  WriteFile(dir_ / "spare.toml", ReadFile(dir_ / "key.toml") + "spares = 1\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "spare.toml", "--supernode", sn, dir_ / "cg.toml",
                        "--json", dir_ / "d.json"}),
            0)
      << Log("spawner");
  auto j = Json("d.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  if (j["failures"].get<int>() > 0) {  // d2 was granted (not a spare): it was replaced
    ASSERT_EQ(j["replacements"].size(), 1u);
    EXPECT_EQ(j["replacements"][0]["failed"], "d2");
  }
  for (const auto& t : j["per_task"]) EXPECT_NE(t["daemon"], "d2");
}

// A daemon paused past failure_timeout_ms is replaced; when it comes back it finds itself
// dropped: it ends its task, and nothing it still sends changes the answer.
TEST_F(FaultTest, APausedDaemonIsReplacedAndDropsItsTaskWhenItComesBack) {
  WriteFile(dir_ / "fast.toml", "failure_timeout_ms = 3000\nlocal_log_level = \"info\"\n");
  WriteJob("cg.toml",
           "name = \"stop\"\napp = \"cg\"\ntasks = 4\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = 1e-10\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "fast.toml", "--local", "6", dir_ / "cg.toml",
                        "--json", dir_ / "s.json"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  const std::string victim = TaskDaemons(Log("spawner")).at(0);
  const int pid = PidOf(dir_.path(), victim);
  ASSERT_GT(pid, 0);
  kill(pid, SIGSTOP);
  ASSERT_TRUE(
      WaitUntil([&] { return LogHas("spawner", "resumes on daemon"); }, std::chrono::seconds(120)))
      << Log("spawner");
  kill(pid, SIGCONT);
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  EXPECT_EQ(*code, 0) << Log("spawner");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  ASSERT_EQ(j["replacements"].size(), 1u);
  EXPECT_EQ(j["replacements"][0]["failed"], victim);
  EXPECT_TRUE(LogHas("spawner", victim + " (task")) << Log("spawner");
  EXPECT_TRUE(LogHas("spawner", "silent for 3000 ms (failure_timeout_ms)")) << Log("spawner");
  // Back from the pause, the old daemon read that its task went elsewhere and dropped it (it does
  // not wait for a resumed spawner).
  const std::string task = std::to_string(j["replacements"][0]["task"].get<int>());
  EXPECT_TRUE(LogHas("spawner", "task " + task + " ends: its spawner gave it to another daemon"))
      << Log("spawner");
  EXPECT_LT(j["result"]["error_inf"].get<double>(), 1e-7) << j.dump();
  for (const auto& t : j["per_task"]) EXPECT_NE(t["daemon"], victim);
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// With one backup per task, kill a task's only backup and then the task at once: the new
// backup holds no checkpoint of it yet (or one just sent), so the task resumes from what is
// there, down to the initial state, and the run still converges to the right answer.
TEST_F(FaultTest, LosingTheOnlyBackupThenTheTaskStillConverges) {
  WriteJob("cg.toml",
           "name = \"nb\"\napp = \"cg\"\ntasks = 4\ntimeout_s = 300\nbackups = 1\n"
           "checkpoint_seconds = 0.2\n[params]\ninner = \"cg\"\nn = 300000\nbandwidth = "
           "12\ntolerance = 1e-10\n");
  auto spawner =
      Start("aiac-spawner", {"run", "--local", "7", dir_ / "cg.toml", "--json", dir_ / "nb.json"},
            dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  // "task 1 on daemon d3, checkpoints kept by d5"
  std::smatch m;
  const std::string log = Log("spawner");
  ASSERT_TRUE(std::regex_search(
      log, m, std::regex("task 1 on daemon (d[0-9]+), checkpoints kept by (d[0-9]+)")))
      << log;
  const std::string task_daemon = m[1], backup = m[2];
  // Some checkpoint rounds first (the progress lines count the copies acknowledged).
  ASSERT_TRUE(
      WaitUntil([&] { return MaxCheckpoints(Log("spawner")) >= 8; }, std::chrono::seconds(120)))
      << Log("spawner");
  for (const std::string& victim : {backup, task_daemon}) {
    const int pid = PidOf(dir_.path(), victim);
    ASSERT_GT(pid, 0) << victim;
    kill(pid, SIGKILL);
  }
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  ASSERT_EQ(*code, 0) << Log("spawner");
  auto j = Json("nb.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["failures"], 2);
  EXPECT_EQ(j["replacements"].size(), 2u);
  EXPECT_LT(j["result"]["error_inf"].get<double>(), 1e-7) << j.dump();
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// A synchronous run replaces a SIGKILLed task daemon too: its neighbours send their values
// again from its checkpoint's iteration on (daemon/value_log.h), it sends again what it sent
// last, and the run goes on in step to the fault-free answer.
TEST_F(FaultTest, ASyncRunReplacesAKilledDaemonAndGivesTheSameAnswer) {
  const int n = 300000;
  WriteJob("cg.toml",
           "name = \"fs\"\napp = \"cg\"\ntasks = 4\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = " +
               std::to_string(n) +
               "\nbandwidth = 12\nseed = 5\ntolerance = 1e-12\noutput = \"x.mtx\"\n");
  auto spawner =
      Start("aiac-spawner",
            {"run", "--local", "6", dir_ / "cg.toml", "--sync", "--json", dir_ / "s.json"},
            dir_ / "spawner.log");
  // Once every task has checkpoints on both of its backups, kill one task's daemon.
  ASSERT_TRUE(
      WaitUntil([&] { return MaxCheckpoints(Log("spawner")) >= 8; }, std::chrono::seconds(120)))
      << Log("spawner");
  const auto daemons = TaskDaemons(Log("spawner"));
  ASSERT_FALSE(daemons.empty()) << Log("spawner");
  const std::string victim = daemons[1 % daemons.size()];
  const int pid = PidOf(dir_.path(), victim);
  ASSERT_GT(pid, 0) << victim;
  kill(pid, SIGKILL);
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  ASSERT_EQ(*code, 0) << Log("spawner");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["mode"], "sync");
  ASSERT_EQ(j["failures"], 1) << Log("spawner") << "\n(the run ended before the kill?)";
  ASSERT_EQ(j["replacements"].size(), 1u);
  EXPECT_EQ(j["replacements"][0]["failed"], victim);
  EXPECT_TRUE(LogHas("spawner", "resumes on daemon")) << Log("spawner");
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  // The fault-free answer: the system's direct solution.
  EXPECT_LT(DistanceToTheDirectSolution(j["output"].get<std::string>(), {n, 12, 5}), 1e-8);
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// The synthetic workload, synchronous, with a task daemon killed by --kill-every: every item
// still comes back once and the checksum is the fault-free one. With value_log_mb = 0 the tasks
// keep nothing, and the same kill ends the run saying why.
TEST_F(FaultTest, ASyncSyntheticRunKeepsItsChecksumThroughAKill) {
  synthetic::WorkloadSpec spec;
  spec.items = 8000;
  spec.iterations = 60;
  spec.base_cost = 2000;
  spec.seed = 5;
  for (const std::string log_mb : {"256", "0"}) {
    SCOPED_TRACE(log_mb);
    WriteJob("syn" + log_mb + ".toml",
             "name = \"syn\"\napp = \"synthetic\"\ntasks = 3\ntimeout_s = 300\n"
             "checkpoint_seconds = 0.2\nvalue_log_mb = " +
                 log_mb +
                 "\n[params]\nitems = 8000\niterations = 60\nbase_cost = 2000\nseed = 5\n");
    const int code = RunSpawner({"run", "--local", "5", dir_ / ("syn" + log_mb + ".toml"), "--sync",
                                 "--balance", "off", "--json", dir_ / ("syn" + log_mb + ".json"),
                                 "--kill-every", "0.5", "--kill-count", "1", "--kill-seed", "3"},
                                "spawner" + log_mb, std::chrono::seconds(240));
    auto j = Json("syn" + log_mb + ".json");
    if (log_mb == "0") {
      EXPECT_NE(code, 0) << Log("spawner0");
      EXPECT_EQ(j["status"], "failed");
      EXPECT_TRUE(LogHas("spawner0", "replaces a daemon only with value_log_mb > 0"))
          << Log("spawner0");
      continue;
    }
    ASSERT_EQ(code, 0) << Log("spawner" + log_mb);
    EXPECT_EQ(j["status"], "converged") << j.dump();
    EXPECT_EQ(j["failures"], 1) << Log("spawner" + log_mb);
    EXPECT_EQ(j["result"]["items"], 8000);
    EXPECT_EQ(j["result"]["checksum"].get<double>(),
              static_cast<double>(synthetic::ExpectedChecksum(spec)));
  }
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

TEST_F(FaultTest, KillEveryKillsTaskDaemonsAndTheRunStillConverges) {
  WriteJob("cg.toml",
           "name = \"fi\"\napp = \"cg\"\ntasks = 4\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = 1e-10\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "7", dir_ / "cg.toml", "--json", dir_ / "fi.json",
                        "--kill-every", "1", "--kill-count", "2", "--kill-seed", "7"},
                       "spawner", std::chrono::seconds(240)),
            0)
      << Log("spawner");
  auto j = Json("fi.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["failures"], 2) << Log("spawner");
  EXPECT_EQ(j["replacements"].size(), 2u);
  EXPECT_EQ(Count(Log("spawner"), "fault injection "), 2u) << Log("spawner");
  EXPECT_LT(j["result"]["error_inf"].get<double>(), 1e-7);
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// A two-level CG run (coarse = "harmonic") with a task daemon killed mid-run: the replacement,
// restored from its checkpoint without the coarse problem, gets A Z and A_0's rows again from
// the others (coarse_rounds.h), joins their rounds, and the answer is right. (Inner CG: a run of
// seconds, so the kill lands before its end.)
TEST_F(FaultTest, ATwoLevelRunSetsUpItsReplacementAgainAndConverges) {
  ASSERT_OK(cg::WriteMatrixMarketMatrix(dir_ / "grid.mtx", cg::GridLaplacian(300, 300), true));
  WriteJob("two.toml",
           "name = \"two\"\napp = \"cg\"\ntasks = 4\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\nmatrix = \"grid.mtx\"\ncoarse = \"harmonic\"\ninner = \"cg\"\noverlap = 4\n"
           "tolerance = 1e-10\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "6", dir_ / "two.toml", "--json", dir_ / "two.json",
                        "--kill-every", "0.5", "--kill-count", "1", "--kill-seed", "3"},
                       "spawner", std::chrono::seconds(240)),
            0)
      << Log("spawner");
  auto j = Json("two.json");
  EXPECT_EQ(j["status"], "converged") << j.dump();
  EXPECT_EQ(j["failures"], 1) << Log("spawner");
  EXPECT_EQ(j["replacements"].size(), 1u);
  EXPECT_LE(j["residual"].get<double>(), 1e-8);
  EXPECT_TRUE(LogHas("spawner", "two-level")) << Log("spawner");
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// The synthetic workload with a task daemon killed mid-run: the task resumes from its checkpoint
// on a spare, every item still comes back once, and the checksum is the one of the run that
// lost nothing.
TEST_F(FaultTest, AKilledDaemonDoesNotChangeTheSyntheticChecksum) {
  synthetic::WorkloadSpec spec;
  spec.items = 8000;
  spec.iterations = 60;
  spec.base_cost = 2000;  // a run of seconds: the kill, 0.5 s in, lands well before its end
  spec.seed = 5;
  WriteJob(
      "syn.toml",
      "name = \"syn\"\napp = \"synthetic\"\ntasks = 3\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
      "[params]\nitems = 8000\niterations = 60\nbase_cost = 2000\nseed = 5\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "5", dir_ / "syn.toml", "--json", dir_ / "syn.json",
                        "--kill-every", "0.5", "--kill-count", "1", "--kill-seed", "3", "--history",
                        dir_ / "syn.csv", "--log-view", "--trace", dir_ / "syn-trace.json"},
                       "spawner", std::chrono::seconds(240)),
            0)
      << Log("spawner");
  // The history has the loss and the resumption, and draws (`aiac-spawner plot`).
  const std::string history = ReadFile(dir_ / "syn.csv");
  EXPECT_NE(history.find(",report,0,1,"), std::string::npos) << history;
  EXPECT_NE(history.find(",failure,"), std::string::npos) << history;
  EXPECT_NE(history.find(",resumed,"), std::string::npos) << history;
  ASSERT_EQ(RunSpawner({"plot", dir_ / "syn.csv", "-o", dir_ / "syn.png"}, "plot"), 0)
      << Log("plot");
  EXPECT_EQ(ReadFile(dir_ / "syn.png").substr(0, 4), "\x89PNG");
  auto j = Json("syn.json");
  EXPECT_EQ(j["status"], "converged") << j.dump();
  EXPECT_EQ(j["failures"], 1) << Log("spawner");
  EXPECT_EQ(j["replacements"].size(), 1u);
  EXPECT_EQ(j["result"]["items"], 8000);
  EXPECT_EQ(j["result"]["checksum"].get<double>(),
            static_cast<double>(synthetic::ExpectedChecksum(spec)));
  // --log-view: a row per task and the total, from the profiles the summary also has.
  EXPECT_TRUE(LogHas("spawner", "Where the time went")) << Log("spawner");
  EXPECT_TRUE(LogHas("spawner", "COMPUTE")) << Log("spawner");
  for (const auto& t : j["per_task"]) {
    const auto& p = t["profile"];
    EXPECT_GT(p["compute_s"].get<double>(), 0) << t;
    EXPECT_GE(p["wait_s"].get<double>(), 0) << t;
    EXPECT_GT(p["checkpoint_s"].get<double>(), 0) << t;  // a checkpoint every 0.2 s
    EXPECT_GE(p["messages_sent"].get<uint64_t>(), 0u) << t;
  }
  // --trace: a Chrome trace with a track per task, their iterations, the loss and the repair.
  const auto trace = nlohmann::json::parse(ReadFile(dir_ / "syn-trace.json"), nullptr, false);
  ASSERT_TRUE(trace.is_object()) << ReadFile(dir_ / "syn-trace.json");
  std::set<std::string> names, tracks;
  for (const auto& e : trace["traceEvents"]) {
    names.insert(e["name"].get<std::string>().substr(0, 10));
    if (e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
  }
  EXPECT_EQ(tracks, (std::set<std::string>{"phases", "task 0", "task 1", "task 2"}));
  for (const char* n : {"iterations", "checkpoint", "daemon los", "replacing", "iterate"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// Daemons started by hand are asked to exit (they are not the spawner's children).
TEST_F(FaultTest, KillEveryAsksHandStartedDaemonsToExit) {
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2", "d3", "d4", "d5"}) StartDaemon(d, {sn});
  WriteFile(dir_ / "spare.toml", ReadFile(dir_ / "key.toml") + "spares = 2\n");
  WriteJob("cg.toml",
           "name = \"fh\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = 1e-10\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "spare.toml", "--supernode", sn, dir_ / "cg.toml",
                        "--json", dir_ / "fh.json", "--kill-every", "1", "--kill-count", "1"},
                       "spawner", std::chrono::seconds(240)),
            0)
      << Log("spawner");
  auto j = Json("fh.json");
  EXPECT_EQ(j["status"], "converged");
  ASSERT_EQ(j["replacements"].size(), 1u) << Log("spawner");
  const std::string victim = j["replacements"][0]["failed"];
  EXPECT_TRUE(LogHas(victim, "exiting at once")) << Log(victim);
  auto code = procs_.at(victim).WaitFor(std::chrono::seconds(10));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 137);
}

// Two peer super-nodes; the one the spawner and half the daemons use is killed mid-run: the
// daemons register with the other, the spawner fails over to it, and a task daemon lost after
// that is still replaced.
TEST_F(FaultTest, ASupernodeKilledMidRunTheRunGoesOn) {
  WriteJob("cg.toml",
           "name = \"sk\"\napp = \"cg\"\ntasks = 4\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = 1e-10\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--local", "6", "--local-supernodes", "2", dir_ / "cg.toml",
                        "--json", dir_ / "sk.json"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  const int supernode = PidOf(dir_.path(), "sn-local-1");
  ASSERT_GT(supernode, 0);
  kill(supernode, SIGKILL);
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "failed over to super-node sn-local-2"); },
                        std::chrono::seconds(120)))
      << Log("spawner");
  const std::string victim = TaskDaemons(Log("spawner")).at(0);
  const int pid = PidOf(dir_.path(), victim);
  ASSERT_GT(pid, 0);
  kill(pid, SIGKILL);
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  ASSERT_EQ(*code, 0) << Log("spawner");
  auto j = Json("sk.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["supernode_failovers"], 1);
  EXPECT_EQ(j["failures"], 1);
  ASSERT_EQ(j["replacements"].size(), 1u);
  EXPECT_EQ(j["replacements"][0]["failed"], victim);
  EXPECT_LT(j["result"]["error_inf"].get<double>(), 1e-7) << j.dump();
  EXPECT_TRUE(LogHas("spawner", "super-node sn-local-1 exited with 137")) << Log("spawner");
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty()) << "processes left behind";
}

// A daemon suspended while it sets up its task (here: just after asking for the plugin, before
// building a 150,000-row block) never says it is ready: setup_timeout_ms replaces it. The limit
// is well above a real setup, which takes seconds under the sanitizers.
TEST_F(FaultTest, ADaemonSuspendedDuringSetupIsReplaced) {
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2", "d3"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("d1", "registered") && LogHas("d2", "registered") && LogHas("d3", "registered");
  }));
  WriteFile(dir_ / "setup.toml", ReadFile(dir_ / "key.toml") +
                                     "spares = 1\nsetup_timeout_ms = 15000\n"
                                     "failure_timeout_ms = 120000\n");
  WriteJob("cg.toml",
           "name = \"su\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 300\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = "
           "1e-6\nresidual_tolerance = 1e-6\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "setup.toml", "--supernode", sn, dir_ / "cg.toml",
                        "--json", dir_ / "su.json"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(
      WaitUntil([&] { return !TaskDaemons(Log("spawner")).empty(); }, std::chrono::seconds(120)))
      << Log("spawner");
  const std::string victim = TaskDaemons(Log("spawner")).front();
  procs_.at(victim).Signal(SIGSTOP);
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  procs_.at(victim).Signal(SIGCONT);
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  ASSERT_EQ(*code, 0) << Log("spawner");
  EXPECT_TRUE(LogHas("spawner", "daemon " + victim)) << Log("spawner");
  EXPECT_TRUE(LogHas("spawner", "not ready 15000 ms after its assignment (setup_timeout_ms)"))
      << Log("spawner");
  auto j = Json("su.json");
  EXPECT_EQ(j["status"], "converged");
  ASSERT_EQ(j["replacements"].size(), 1u);
  EXPECT_EQ(j["replacements"][0]["failed"], victim);
}

// No spare was granted: the replacement is a daemon the super-node grants during the run.
TEST_F(FaultTest, WithNoSpareTheSupernodeSuppliesTheReplacement) {
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2", "d3", "d4"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("d1", "registered") && LogHas("d2", "registered") && LogHas("d3", "registered") &&
           LogHas("d4", "registered");
  })) << Log("d1");
  WriteJob("cg.toml",
           "name = \"sup\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = 1e-10\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "cg.toml",
                        "--json", dir_ / "sup.json"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  const auto first = TaskDaemons(Log("spawner"));
  ASSERT_EQ(first.size(), 3u) << Log("spawner");
  const std::string victim = first[0];
  procs_.at(victim).Signal(SIGKILL);
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  ASSERT_EQ(*code, 0) << Log("spawner");
  auto j = Json("sup.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["daemons"], 4);
  ASSERT_EQ(j["replacements"].size(), 1u);
  const std::string taker = j["replacements"][0]["daemon"];
  EXPECT_EQ(std::count(first.begin(), first.end(), taker), 0) << taker;
  EXPECT_TRUE(LogHas("spawner", "daemon " + taker + " granted by")) << Log("spawner");
  EXPECT_LT(j["result"]["error_inf"].get<double>(), 1e-7) << j.dump();
}

// The spawner's super-node hangs mid-run (SIGSTOP: its connections stay open, nothing is
// answered) and a task daemon dies: the replacement is asked of it, goes unanswered past the
// request's hold, and the spawner leaves it for the next super-node of its list, where the spare
// daemon registered meanwhile (the daemons left the silent one too).
TEST_F(FaultTest, AReplacementIsAskedOfTheNextSupernodeWhenTheFirstFallsSilent) {
  const std::string a = StartSupernode("sna");
  const std::string b = StartSupernode("snb");
  for (const char* d : {"d1", "d2", "d3", "d4"}) {
    StartDaemon(d, {a, b}, "key.toml", "1",
                {"--heartbeat-ms", "200", "--supernode-timeout-ms", "1500"});
  }
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("sna", "daemon d1 registered") && LogHas("sna", "daemon d2 registered") &&
           LogHas("sna", "daemon d3 registered") && LogHas("sna", "daemon d4 registered");
  })) << Log("sna");
  WriteJob("cg.toml",
           "name = \"hung\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = 1e-10\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "key.toml", "--supernode", a, "--supernode", b,
                        dir_ / "cg.toml", "--json", dir_ / "hung.json"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("spawner", "starting"); }, std::chrono::seconds(120)))
      << Log("spawner");
  const auto first = TaskDaemons(Log("spawner"));
  ASSERT_EQ(first.size(), 3u) << Log("spawner");
  procs_.at("sna").Signal(SIGSTOP);
  procs_.at(first[0]).Signal(SIGKILL);
  auto code = spawner.WaitFor(std::chrono::seconds(240));
  procs_.at("sna").Signal(SIGCONT);
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  ASSERT_EQ(*code, 0) << Log("spawner");
  auto j = Json("hung.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["supernode_failovers"], 1);
  ASSERT_EQ(j["replacements"].size(), 1u);
  const std::string taker = j["replacements"][0]["daemon"];
  EXPECT_EQ(std::count(first.begin(), first.end(), taker), 0) << taker;
  EXPECT_TRUE(LogHas("spawner", "answered nothing for")) << Log("spawner");
  EXPECT_TRUE(LogHas("spawner", "daemon " + taker + " granted by super-node snb"))
      << Log("spawner");
  EXPECT_LT(j["result"]["error_inf"].get<double>(), 1e-7) << j.dump();
}

}  // namespace
}  // namespace aiac::testing
