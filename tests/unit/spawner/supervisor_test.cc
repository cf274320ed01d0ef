// The supervisor with a fake port and a fake clock, no socket: deploying, reports fenced by
// incarnation, losses (closed, unreachable, silent, slow to set up) and their replacements
// (among the granted daemons, or from a super-node), what every other daemon is told, global
// convergence with its confirmation round, snapshot rounds, and failures with their reasons.
#include "spawner/supervisor.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "net/capnp_bytes.h"
#include "net/hello.h"
#include "support/test_support.h"
#include "unit/spawner/deployment_fixtures.h"

namespace aiac::spawner {
namespace {

using std::chrono::milliseconds;

// What the supervisor asked of the wire, in order.
struct FakeWire {
  std::vector<std::pair<size_t, uint64_t>> connects;  // (task, incarnation)
  std::map<size_t, std::vector<std::string>> sent;    // per task, one line per message
  std::vector<size_t> closes, plugins;
  std::vector<std::tuple<size_t, uint64_t, std::string>> requests;
  int changed = 0;
  std::map<size_t, uint32_t> versions;  // a task's daemon's protocol, when not the current

  SupervisorPort Port() {
    SupervisorPort port;
    port.connect = [this](size_t t, uint64_t inc) { connects.emplace_back(t, inc); };
    port.send = [this](size_t t, const EnvelopeFill& fill) {
      capnp::MallocMessageBuilder msg;
      auto e = msg.initRoot<proto::Envelope>();
      fill(e);
      sent[t].push_back(Describe(e.asReader()));
    };
    port.close = [this](size_t t) { closes.push_back(t); };
    port.send_plugin = [this](size_t t) { plugins.push_back(t); };
    port.request_daemon = [this](size_t t, uint64_t inc, const std::string& what) {
      requests.emplace_back(t, inc, what);
    };
    port.changed = [this] { ++changed; };
    port.version = [this](size_t t) {
      return versions.count(t) ? versions.at(t) : net::kProtocolVersion;
    };
    return port;
  }

  static std::string Describe(proto::Envelope::Reader e) {
    if (e.isStartTask()) return "start";
    if (e.isHalt()) return e.getHalt().getDropped() ? "drop" : "halt";
    if (e.isConvergenceQuery())
      return "query " + std::to_string(e.getConvergenceQuery().getRound());
    if (e.isSnapshot()) return "snapshot " + std::to_string(e.getSnapshot().getRound());
    if (e.isTighten())
      return "tighten " + std::to_string(static_cast<int>(e.getTighten().getFactor()));
    if (e.isMoveItems()) {
      auto m = e.getMoveItems();
      static const char* kKinds[] = {"export", "import", "drop", "confirm"};
      std::string line = std::string(kKinds[static_cast<int>(m.getKind())]) + " " +
                         std::to_string(m.getMove()) + " " + net::AsString(m.getItems());
      for (auto hop : m.getRoute()) line += " via " + std::to_string(hop.getTask());
      if (m.getSha256().size() > 0) line += " hash";
      return line;
    }
    if (e.isNeighbourMoved()) {
      auto m = e.getNeighbourMoved();
      return "moved " + std::to_string(m.getTask()) + " " +
             std::string(m.getPreviousDaemonId().cStr()) + "->" + m.getDaemonId().cStr() + " inc " +
             std::to_string(m.getIncarnation());
    }
    if (e.isTrimValues()) {
      return "trim " + std::to_string(e.getTrimValues().getTask()) + " " +
             std::to_string(e.getTrimValues().getIteration());
    }
    return "other";
  }
  std::string last(size_t t) const {
    auto it = sent.find(t);
    return it == sent.end() || it->second.empty() ? "" : it->second.back();
  }
};

using test::Daemons;
constexpr auto kStarted = Supervisor::MoveStart::kStarted;
using test::Ring;

// Builds one envelope and hands it to the supervisor as task `t`'s daemon's report.
template <typename Fill>
void Report(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, Fill&& fill) {
  capnp::MallocMessageBuilder msg;
  auto e = msg.initRoot<proto::Envelope>();
  fill(e);
  s.OnReport(t, inc, e.asReader(), now);
}

void Ready(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, uint64_t restored = 0) {
  Report(s, t, inc, now,
         [&](proto::Envelope::Builder e) { e.initTaskReady().setRestoredIteration(restored); });
}

void Progress(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, uint64_t iteration,
              uint64_t from_inc = 0) {
  Report(s, t, inc, now, [&](proto::Envelope::Builder e) {
    auto p = e.initTaskProgress();
    p.setIteration(iteration);
    p.setLocalChange(0.5);
    p.setIncarnation(from_inc ? from_inc : inc);
  });
}

void Local(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, bool converged,
           uint64_t from_inc = 0) {
  Report(s, t, inc, now, [&](proto::Envelope::Builder e) {
    auto c = e.initLocalConvergence();
    c.setConverged(converged);
    c.setIncarnation(from_inc ? from_inc : inc);
  });
}

void Answer(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, uint64_t round, bool converged) {
  Report(s, t, inc, now, [&](proto::Envelope::Builder e) {
    auto a = e.initConvergenceAnswer();
    a.setRound(round);
    a.setConverged(converged);
    a.setIncarnation(inc);
  });
}

void Moved(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, uint64_t move,
           proto::MoveKind kind, const std::string& items, uint64_t count, uint64_t moves) {
  Report(s, t, inc, now, [&](proto::Envelope::Builder e) {
    auto m = e.initItemsMoved();
    m.setMove(move);
    m.setKind(kind);
    m.setIncarnation(inc);
    m.setItems(net::AsBytes(items));
    m.setCount(count);
    m.setMoves(moves);
  });
}

class SupervisorTest : public ::testing::Test {
 protected:
  // `tasks` tasks in a ring on `daemons` daemons, with 2 backups each.
  // `sync_replaces`: a synchronous run whose tasks log the values they send.
  void Make(uint32_t tasks, int daemons, bool sync = false, bool sync_replaces = false) {
    auto d = Deployment::Create({Ring(tasks), "maheve", 2}, Daemons(daemons));
    ASSERT_TRUE(d.ok()) << d.status().message();
    SupervisorSettings settings;
    settings.job_id = "job-1";
    settings.sync = sync;
    settings.sync_replaces = sync_replaces;
    settings.failure_timeout = milliseconds(5000);
    settings.setup_timeout = milliseconds(30000);
    sup_ = std::make_unique<Supervisor>(settings, std::move(*d), wire_.Port(),
                                        MakeLogger("test", spdlog::level::off));
  }
  // Every task dialed, connected, ready and started.
  void Running() {
    sup_->Deploy(t0_);
    for (size_t t = 0; t < sup_->deployment().tasks(); ++t) {
      sup_->OnConnected(t, 1, t0_);
      Ready(*sup_, t, 1, t0_);
    }
    sup_->Start();
  }
  SteadyTime At(int64_t ms) const { return t0_ + milliseconds(ms); }

  FakeWire wire_;
  std::unique_ptr<Supervisor> sup_;
  SteadyTime t0_ = SteadyTime{} + std::chrono::hours(1);
};

TEST_F(SupervisorTest, DeploysEveryTaskAndStartsThemOnceAllAreReady) {
  Make(4, 6);
  sup_->Deploy(t0_);
  ASSERT_EQ(wire_.connects.size(), 4u);
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(wire_.connects[t], std::make_pair(t, uint64_t{1}));
  for (size_t t = 0; t < 4; ++t) sup_->OnConnected(t, 1, t0_);
  for (size_t t = 0; t < 3; ++t) Ready(*sup_, t, 1, t0_);
  EXPECT_FALSE(sup_->AllReady());
  EXPECT_TRUE(wire_.sent.empty()) << "a task starts with the run, not when it is ready";
  Ready(*sup_, 3, 1, t0_);
  EXPECT_TRUE(sup_->AllReady());
  sup_->Start();
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(wire_.last(t), "start");
  EXPECT_EQ(sup_->RunningTaskDaemons().size(), 4u);
  EXPECT_EQ(sup_->failures(), 0u);
}

// A coordinator's GroupReports (DistPM's groups): each report counts for its task as if its
// daemon had sent it, but only from the group's coordinator, for the group's tasks, and for the
// incarnation that owns the task now.
TEST_F(SupervisorTest, AGroupCoordinatorsReportsKeepItsMembersHeardAndNothingElse) {
  Make(4, 6);
  sup_->SetGroups({{0, 2}, {1, 3}});
  EXPECT_EQ(sup_->group(2), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(sup_->groups(), 2u);
  Running();
  auto group_reports = [&](size_t from, int64_t ms,
                           std::vector<std::pair<uint32_t, uint64_t>> reports) {
    Report(*sup_, from, sup_->deployment().task(from).incarnation, At(ms),
           [&](proto::Envelope::Builder e) {
             auto g = e.initGroupReports();
             g.setJob("job-1");
             auto list = g.initReports(static_cast<unsigned>(reports.size()));
             for (unsigned i = 0; i < list.size(); ++i) {
               list[i].setTask(reports[i].first);
               list[i].setIteration(7);
               list[i].setIncarnation(reports[i].second);
             }
           });
  };
  group_reports(0, 4000, {{0, 1}, {2, 1}});
  group_reports(1, 4000, {{1, 1}, {0, 1}, {3, 1}});  // task 0 is not of task 1's group
  group_reports(2, 4000, {{2, 1}});                  // task 2 coordinates no group
  Progress(*sup_, 3, 1, At(4000), 7);
  sup_->Tick(At(8999));
  EXPECT_EQ(sup_->failures(), 0u);
  EXPECT_EQ(sup_->relayed_reports(), 2u) << "tasks 2 and 3, by their coordinators";
  ASSERT_TRUE(sup_->report(2).has_value());
  EXPECT_EQ(sup_->report(2)->first.iteration, 7u);
  // Only the coordinator of task 2's group spoke for it at 4 s: task 2 is silent at 9 s. Its
  // replacement's group reports name the new incarnation; a stale one does not keep it alive.
  group_reports(1, 8500, {{1, 1}, {3, 1}});
  sup_->Tick(At(9000));
  EXPECT_EQ(sup_->failures(), 2u) << "tasks 0 and 2: heard last at 4 s";
  EXPECT_EQ(sup_->deployment().task(2).incarnation, 2u);
  sup_->OnConnected(0, 2, At(9000));
  sup_->OnConnected(2, 2, At(9000));
  Ready(*sup_, 0, 2, At(9000));
  Ready(*sup_, 2, 2, At(9000));
  group_reports(0, 13000, {{0, 2}, {2, 1}});
  group_reports(1, 13000, {{1, 1}, {3, 1}});
  sup_->Tick(At(14000));
  EXPECT_EQ(sup_->failures(), 3u)
      << "task 2's new daemon, silent since 9 s: its old incarnation's report does not count";
  EXPECT_EQ(sup_->relayed_reports(), 4u) << "task 3 twice more";
}

TEST_F(SupervisorTest, TheDaemonAskingForThePluginGetsIt) {
  Make(2, 2);
  sup_->Deploy(t0_);
  sup_->OnConnected(1, 1, t0_);
  Report(*sup_, 1, 1, t0_,
         [](proto::Envelope::Builder e) { e.initTaskReady().setNeedPlugin(true); });
  EXPECT_EQ(wire_.plugins, std::vector<size_t>{1});
  EXPECT_FALSE(sup_->AllReady());
}

TEST_F(SupervisorTest, ALostDaemonsTaskMovesToAFreeDaemonAndEveryOtherDaemonIsToldFirst) {
  Make(4, 6);
  Running();
  const std::string dead = sup_->outcome(2).daemon;
  wire_.connects.clear();
  sup_->OnLost(2, 1, "connection reset", At(1000));
  EXPECT_EQ(sup_->failures(), 1u);
  const std::string next = sup_->outcome(2).daemon;
  EXPECT_NE(next, dead);
  EXPECT_EQ(sup_->deployment().task(2).incarnation, 2u);
  const std::string moved = "moved 2 " + dead + "->" + next + " inc 2";
  for (size_t t : {0, 1, 3}) EXPECT_EQ(wire_.last(t), moved) << "task " << t;
  ASSERT_EQ(wire_.connects.size(), 1u);
  EXPECT_EQ(wire_.connects[0], std::make_pair(size_t{2}, uint64_t{2}));
  EXPECT_EQ(sup_->RunningTaskDaemons().size(), 3u) << "the new daemon is not running the task yet";

  // The replacement restores from iteration 40, 1.5 s after the loss, and starts at once.
  sup_->OnConnected(2, 2, At(2000));
  Ready(*sup_, 2, 2, At(2500), 40);
  ASSERT_EQ(sup_->replacements().size(), 1u);
  const Replacement& r = sup_->replacements()[0];
  EXPECT_EQ(r.task, 2u);
  EXPECT_EQ(r.failed, dead);
  EXPECT_EQ(r.daemon, next);
  EXPECT_EQ(r.restored_iteration, 40u);
  EXPECT_DOUBLE_EQ(r.seconds_to_resume, 1.5);
  EXPECT_EQ(wire_.last(2), "start");
  EXPECT_EQ(sup_->outcome(2).iterations, 40u);
}

TEST_F(SupervisorTest, ReportsOfAnOlderIncarnationNeverCount) {
  Make(3, 5);
  Running();
  Progress(*sup_, 1, 1, At(100), 30);
  sup_->OnLost(1, 1, "connection reset", At(200));
  // The old daemon's connection, still read by the runner, speaks for incarnation 1: ignored.
  Progress(*sup_, 1, 1, At(300), 99);
  sup_->OnConnected(1, 2, At(300));
  Ready(*sup_, 1, 2, At(400), 20);
  // On the new connection, a report stamped with incarnation 1 (a stale relay) is dropped too.
  Progress(*sup_, 1, 2, At(500), 77, /*from_inc=*/1);
  EXPECT_EQ(sup_->outcome(1).iterations, 20u);
  Progress(*sup_, 1, 2, At(600), 25);
  EXPECT_EQ(sup_->outcome(1).iterations, 25u);
  // Nor does an old incarnation's convergence: every task says converged, but task 1's is stale.
  Local(*sup_, 0, 1, At(700), true);
  Local(*sup_, 2, 1, At(700), true);
  Local(*sup_, 1, 2, At(700), true, /*from_inc=*/1);
  EXPECT_EQ(sup_->progress().converged, 2u);
  EXPECT_EQ(wire_.last(0), "moved 1 d" + sup_->replacements()[0].failed.substr(1) + "->" +
                               sup_->outcome(1).daemon + " inc 2");
  // A loss reported for the old incarnation after the move changes nothing.
  sup_->OnLost(1, 1, "closed", At(800));
  EXPECT_EQ(sup_->failures(), 1u);
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 2u);
}

TEST_F(SupervisorTest, ASilentDaemonIsLostAtTheFailureTimeoutAndASlowSetupAtTheSetupTimeout) {
  Make(2, 4);
  Running();
  Progress(*sup_, 0, 1, At(3000), 5);
  sup_->Tick(At(4999));
  EXPECT_EQ(sup_->failures(), 0u);
  sup_->Tick(At(5000));  // task 1 silent since t0
  EXPECT_EQ(sup_->failures(), 1u);
  EXPECT_EQ(wire_.closes, std::vector<size_t>{1}) << "the silent daemon's connection is dropped";
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 2u);
  // Its replacement is reached at 5.1 s and sets up; not silent-timed while it does...
  sup_->OnConnected(1, 2, At(5100));
  sup_->Tick(At(5100 + 29999));
  EXPECT_EQ(sup_->failures(), 2u) << "task 0, heard last at 3 s, went silent meanwhile";
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 2u);
  // ...but lost once the setup timeout passed.
  sup_->Tick(At(5100 + 30000));
  EXPECT_EQ(sup_->failures(), 3u);
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 3u);
}

// The spawner itself did not run for 20 s (SIGSTOP, a laptop asleep): what its daemons sent
// meanwhile is still unread, so that time counts towards no daemon's silence nor set-up.
TEST_F(SupervisorTest, TimeTheSpawnerDidNotRunCountsTowardsNoDaemonsSilence) {
  Make(2, 4);
  Running();
  Progress(*sup_, 0, 1, At(3000), 5);
  Progress(*sup_, 1, 1, At(4000), 5);
  sup_->Paused(std::chrono::seconds(20), At(24500));
  sup_->Tick(At(24500));
  EXPECT_EQ(sup_->failures(), 0u) << "silent only while the spawner was stopped";
  // After the pause the clock runs again: task 0, heard at 3 s, has 3.5 s of silence at 24.5 s
  // and is lost 5 s after 23 s, at 28 s, while task 1 reports.
  Progress(*sup_, 1, 1, At(27000), 6);
  sup_->Tick(At(27999));
  EXPECT_EQ(sup_->failures(), 0u);
  sup_->Tick(At(28000));
  EXPECT_EQ(sup_->failures(), 1u);
  EXPECT_EQ(sup_->deployment().task(0).incarnation, 2u);
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 1u);
  // A report read on waking, before the pause was noticed, is not pushed into the future.
  sup_->OnConnected(0, 2, At(28100));
  Ready(*sup_, 0, 2, At(28200));
  Progress(*sup_, 0, 2, At(29000), 1);
  Progress(*sup_, 1, 1, At(29000), 7);
  Progress(*sup_, 1, 1, At(60000), 8);
  sup_->Paused(std::chrono::seconds(30), At(60000));
  Progress(*sup_, 0, 2, At(64000), 2);
  sup_->Tick(At(64999));
  EXPECT_EQ(sup_->failures(), 1u);
  sup_->Tick(At(65000));
  EXPECT_EQ(sup_->failures(), 2u) << "task 1's report of 60 s counts from 60 s, not 90 s";
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 2u);
}

TEST_F(SupervisorTest, WithNoFreeDaemonASupernodeIsAskedAndTheTaskGoesToWhatItGrants) {
  Make(2, 2);
  Running();
  const std::string dead = sup_->outcome(0).daemon;
  sup_->OnLost(0, 1, "connection reset", At(1000));
  ASSERT_EQ(wire_.requests.size(), 1u);
  EXPECT_EQ(std::get<0>(wire_.requests[0]), 0u);
  EXPECT_EQ(std::get<1>(wire_.requests[0]), 2u);
  EXPECT_NE(std::get<2>(wire_.requests[0]).find(dead), std::string::npos)
      << std::get<2>(wire_.requests[0]);
  EXPECT_EQ(wire_.connects.size(), 2u) << "nobody to dial yet";
  EXPECT_FALSE(sup_->AddDaemons(0, 1, Daemons(1, "c", 9), At(1500)))
      << "an older incarnation's grant";
  ASSERT_TRUE(sup_->AddDaemons(0, 2, Daemons(1, "c", 9), At(2000)));
  EXPECT_EQ(sup_->outcome(0).daemon, "d9");
  EXPECT_EQ(wire_.connects.back(), std::make_pair(size_t{0}, uint64_t{2}));
  EXPECT_EQ(wire_.last(1), "moved 0 " + dead + "->d9 inc 2");
  EXPECT_FALSE(sup_->AddDaemons(0, 2, Daemons(1, "c", 10), At(2100))) << "placed already";
}

TEST_F(SupervisorTest, AnUnreachableGrantIsReplacedLikeALostDaemon) {
  Make(3, 4);
  sup_->Deploy(t0_);
  sup_->OnUnreachable(1, 1, "connection refused", At(100));
  EXPECT_EQ(sup_->failures(), 1u);
  EXPECT_TRUE(wire_.closes.empty());
  EXPECT_EQ(wire_.connects.back(), std::make_pair(size_t{1}, uint64_t{2}));
  EXPECT_TRUE(sup_->failure().empty());
}

TEST_F(SupervisorTest, SyncModeFailsTheRunOnALossWithTheReason) {
  Make(2, 4, /*sync=*/true);
  Running();
  sup_->OnLost(1, 1, "connection reset", At(100));
  EXPECT_NE(sup_->failure().find("replaces a daemon only with value_log_mb > 0"), std::string::npos)
      << sup_->failure();
  EXPECT_NE(sup_->failure().find("connection reset"), std::string::npos);
  EXPECT_FALSE(sup_->Current(0, 1));
  EXPECT_TRUE(sup_->RunningTaskDaemons().empty());
}

// A synchronous run whose tasks log their values (daemon/value_log.h).
void SyncProgress(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, uint64_t iteration,
                  uint64_t safe, uint64_t log_from = 0) {
  Report(s, t, inc, now, [&](proto::Envelope::Builder e) {
    auto p = e.initTaskProgress();
    p.setIteration(iteration);
    p.setIncarnation(inc);
    p.setSafeCheckpoint(safe);
    p.setValueLogFrom(log_from);
  });
}

TEST_F(SupervisorTest, ASyncRunTrimsTheSendersLogsAsCheckpointsAdvanceAndReplacesALoss) {
  Make(4, 6, /*sync=*/true, /*sync_replaces=*/true);
  Running();
  // Task 1's backups all hold iteration 5: its senders (0 and 2, in the ring) may drop what
  // they sent it before; once, not at every report.
  SyncProgress(*sup_, 1, 1, At(100), 7, 5);
  EXPECT_EQ(wire_.last(0), "trim 1 5");
  EXPECT_EQ(wire_.last(2), "trim 1 5");
  EXPECT_EQ(wire_.last(3), "start") << "task 3 sends nothing to task 1";
  SyncProgress(*sup_, 1, 1, At(200), 8, 5);
  EXPECT_EQ(wire_.sent[0].size(), 2u) << "no trim again for the same checkpoint";
  SyncProgress(*sup_, 1, 1, At(300), 9, 3);
  EXPECT_EQ(wire_.sent[0].size(), 2u) << "a backup that moved holds less: no trim back";

  sup_->OnLost(1, 1, "connection reset", At(400));
  EXPECT_TRUE(sup_->failure().empty()) << sup_->failure();
  EXPECT_EQ(wire_.connects.back(), std::make_pair(size_t{1}, uint64_t{2}));
  sup_->OnConnected(1, 2, At(450));
  Ready(*sup_, 1, 2, At(500), /*restored=*/6);
  EXPECT_TRUE(sup_->failure().empty()) << sup_->failure();
  EXPECT_EQ(wire_.last(1), "start");
  EXPECT_EQ(sup_->replacements().size(), 1u);
}

TEST_F(SupervisorTest, ASyncRunEndsWhenARestoreNeedsValuesNoSenderHoldsAnyMore) {
  // Restored from older than its senders kept (both of its backups lost with it).
  Make(4, 6, true, true);
  Running();
  SyncProgress(*sup_, 1, 1, At(100), 9, 8);
  sup_->OnLost(1, 1, "connection reset", At(400));
  sup_->OnConnected(1, 2, At(450));
  Ready(*sup_, 1, 2, At(500), /*restored=*/5);
  EXPECT_NE(sup_->failure().find("task 1 restored at iteration 5 needs task 0's values from "
                                 "iteration 5, which holds them only from iteration 8"),
            std::string::npos)
      << sup_->failure();

  // A sender whose log overflowed its value_log_mb.
  Make(4, 6, true, true);
  Running();
  SyncProgress(*sup_, 2, 1, At(100), 9, 0, /*log_from=*/4);
  sup_->OnLost(1, 1, "connection reset", At(400));
  sup_->OnConnected(1, 2, At(450));
  Ready(*sup_, 1, 2, At(500), /*restored=*/3);
  EXPECT_NE(sup_->failure().find("task 2's values from iteration 3, which holds them only from "
                                 "iteration 4 (its logs begin there: it was restored itself, "
                                 "or value_log_mb is too small)"),
            std::string::npos)
      << sup_->failure();
}

// A daemon of the previous protocol keeps no values: it is never told to trim, and a loss ends
// the synchronous run saying why.
TEST_F(SupervisorTest, ASyncRunWithADaemonOfThePreviousProtocolCannotReplace) {
  wire_.versions[0] = net::kSyncReplaceVersion - 1;
  Make(4, 6, true, true);
  Running();
  SyncProgress(*sup_, 1, 1, At(100), 7, 5);
  EXPECT_EQ(wire_.last(0), "start") << "task 0's daemon would close on a TrimValues";
  EXPECT_EQ(wire_.last(2), "trim 1 5");
  sup_->OnLost(3, 1, "connection reset", At(200));
  EXPECT_NE(sup_->failure().find("daemon " + sup_->outcome(0).daemon + " speaks protocol " +
                                 std::to_string(net::kSyncReplaceVersion - 1) +
                                 ", and a synchronous run replaces a daemon only when all of "
                                 "its daemons speak " +
                                 std::to_string(net::kSyncReplaceVersion)),
            std::string::npos)
      << sup_->failure();
}

TEST_F(SupervisorTest, TwoNeighboursLostTogetherGoOnOnlyFromCheckpointsCloseEnough) {
  for (const uint64_t second : {uint64_t{10}, uint64_t{4}}) {
    Make(4, 8, true, true);
    Running();
    sup_->OnLost(1, 1, "connection reset", At(100));
    sup_->OnLost(2, 1, "connection reset", At(100));
    sup_->OnConnected(1, 2, At(150));
    sup_->OnConnected(2, 2, At(150));
    Ready(*sup_, 1, 2, At(200), /*restored=*/10);
    EXPECT_TRUE(sup_->failure().empty()) << "task 2 is judged when it is restored";
    Ready(*sup_, 2, 2, At(250), second);
    if (second == 10) {
      EXPECT_TRUE(sup_->failure().empty()) << sup_->failure();
    } else {
      // Task 2 at 4 needs task 1's value of 4, and task 1's new daemon sends from 9 on.
      EXPECT_NE(sup_->failure().find("needs task 1's values from iteration 4, which holds them "
                                     "only from iteration 9"),
                std::string::npos)
          << sup_->failure();
    }
  }
}

// The spawner's own shutdown (a halt after an early end, a timeout) closes every link: those
// daemons are not lost, and a summary that counted them reported failures that never were.
TEST_F(SupervisorTest, OnceHaltedALossIsNeitherCountedNorReplaced) {
  Make(2, 4);
  Running();
  sup_->Halt();
  EXPECT_EQ(wire_.last(0), "halt");
  sup_->OnLost(1, 1, "connection reset", At(100));
  sup_->OnLost(0, 1, "connection closed", At(100));
  EXPECT_EQ(sup_->failures(), 0u);
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 1u);
  EXPECT_EQ(wire_.connects.size(), 2u);
  EXPECT_TRUE(sup_->failure().empty());
}

TEST_F(SupervisorTest, OnlyTheLossThatFailedTheRunCountsNotTheShutdownAfterIt) {
  Make(2, 4, /*sync=*/true);
  Running();
  sup_->OnLost(1, 1, "connection reset", At(100));  // fails the run: sync mode
  ASSERT_FALSE(sup_->failure().empty());
  sup_->OnLost(0, 1, "connection closed", At(101));  // the shutdown that follows
  EXPECT_EQ(sup_->failures(), 1u);
}

TEST_F(SupervisorTest, GlobalConvergenceTakesAConfirmationRoundThatALossCancels) {
  Make(3, 5);
  Running();
  for (size_t t = 0; t < 3; ++t) Local(*sup_, t, 1, At(100), true);
  for (size_t t = 0; t < 3; ++t) EXPECT_EQ(wire_.last(t), "query 1");
  Answer(*sup_, 0, 1, At(200), 1, true);
  Answer(*sup_, 1, 1, At(200), 1, true);
  // Task 2's daemon dies before answering: the round is void, and the replacement must
  // converge again before a new round opens.
  sup_->OnLost(2, 1, "connection reset", At(300));
  Answer(*sup_, 2, 1, At(300), 1, true);  // its old connection: ignored
  EXPECT_FALSE(sup_->converged());
  sup_->OnConnected(2, 2, At(400));
  Ready(*sup_, 2, 2, At(400), 10);
  Local(*sup_, 2, 2, At(500), true);
  for (size_t t = 0; t < 3; ++t) EXPECT_EQ(wire_.last(t), "query 2") << "task " << t;
  for (size_t t = 0; t < 3; ++t) Answer(*sup_, t, t == 2 ? 2 : 1, At(600), 2, true);
  EXPECT_TRUE(sup_->converged());
  EXPECT_TRUE(sup_->RunningTaskDaemons().empty()) << "nothing left to inject faults into";
  // Tightening forgets it all.
  sup_->Tighten(10);
  EXPECT_FALSE(sup_->converged());
  EXPECT_EQ(wire_.last(1), "tighten 10");
  EXPECT_DOUBLE_EQ(sup_->tighten(), 10);
}

TEST_F(SupervisorTest, ASnapshotRoundTakesOnlyItsOwnSlices) {
  Make(2, 2);
  Running();
  auto slice = [&](size_t t, uint64_t round, const std::string& data) {
    Report(*sup_, t, 1, At(100), [&](proto::Envelope::Builder e) {
      auto d = e.initSnapshotData();
      d.setRound(round);
      d.setIncarnation(1);
      d.setIteration(50 + t);
      d.setData(net::AsBytes(data));
    });
  };
  EXPECT_EQ(sup_->RequestSnapshots(), 1u);
  EXPECT_EQ(sup_->RequestSnapshots(), 2u);
  EXPECT_EQ(wire_.last(0), "snapshot 2");
  slice(0, 1, "stale");
  slice(1, 2, "b");
  EXPECT_FALSE(sup_->SnapshotsComplete());
  slice(0, 2, "a");
  ASSERT_TRUE(sup_->SnapshotsComplete());
  EXPECT_EQ(sup_->TakeSnapshots(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(sup_->outcome(1).iterations, 51u);
}

TEST_F(SupervisorTest, RefusalsAndTaskErrorsFailTheRunWithTheirReason) {
  Make(2, 2);
  Running();
  Report(*sup_, 0, 1, At(100),
         [](proto::Envelope::Builder e) { e.initRefuse().setReason("frame over 4096 bytes"); });
  EXPECT_NE(sup_->failure().find("frame over 4096 bytes"), std::string::npos) << sup_->failure();
  EXPECT_EQ(sup_->failures(), 0u) << "a refusal is not a lost daemon";

  Make(2, 2);
  sup_->Deploy(t0_);
  sup_->OnConnected(0, 1, t0_);
  Report(*sup_, 0, 1, t0_,
         [](proto::Envelope::Builder e) { e.initTaskReady().setError("no such app"); });
  EXPECT_NE(sup_->failure().find("refused task 0: no such app"), std::string::npos)
      << sup_->failure();

  Make(2, 2);
  Running();
  Report(*sup_, 1, 1, At(100), [](proto::Envelope::Builder e) {
    auto r = e.initResult();
    r.setError("iteration 7 broke");
    r.setIncarnation(1);
  });
  EXPECT_NE(sup_->failure().find("task 1 failed: iteration 7 broke"), std::string::npos)
      << sup_->failure();
  EXPECT_EQ(sup_->failure_status(), RunStatus::kFailed);
}

// A crash report from task `t`'s daemon (daemon/app_child.h), in a Result or (while it was set
// up) a TaskReady.
void Crash(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, bool setting_up = false) {
  Report(s, t, inc, now, [&](proto::Envelope::Builder e) {
    auto fill = [&](proto::AppCrash::Builder c) {
      c.setCrashed(true);
      c.setCause("SIGSEGV");
      c.setIteration(41);
      c.setStderrTail("my app: null pointer\n/lib/libapp.so(+0x1c)[0x7f00]");
    };
    if (setting_up) {
      auto r = e.initTaskReady();
      r.setError("app crashed: SIGSEGV");
      fill(r.initCrash());
    } else {
      auto r = e.initResult();
      r.setError("app crashed: SIGSEGV");
      r.setIncarnation(inc);
      fill(r.initCrash());
    }
  });
}

TEST_F(SupervisorTest, AnAppCrashMovesTheTaskOnceAndASecondCrashEndsTheRun) {
  Make(3, 6);
  Running();
  const std::string first = sup_->outcome(1).daemon;
  Crash(*sup_, 1, 1, At(100));
  // Not a lost daemon: the task goes on elsewhere from its checkpoint, the run goes on.
  EXPECT_TRUE(sup_->failure().empty()) << sup_->failure();
  EXPECT_EQ(sup_->failures(), 0u);
  ASSERT_EQ(sup_->app_crashes().size(), 1u);
  EXPECT_EQ(sup_->app_crashes()[0].daemon, first);
  EXPECT_EQ(sup_->app_crashes()[0].cause, "SIGSEGV");
  EXPECT_EQ(sup_->app_crashes()[0].iteration, 41u);
  const std::string second = sup_->outcome(1).daemon;
  EXPECT_NE(second, first);
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 2u);
  ASSERT_EQ(sup_->replacements().size(), 1u);
  EXPECT_EQ(sup_->replacements()[0].failed, first);

  // Its new daemon crashes too, while it sets the task up: the app is at fault, the run ends.
  sup_->OnConnected(1, 2, At(200));
  Crash(*sup_, 1, 2, At(300), /*setting_up=*/true);
  EXPECT_EQ(sup_->failure(), "app crashed: SIGSEGV in task 1 after iteration 41 on " + first +
                                 " and " + second + ": my app: null pointer");
  EXPECT_EQ(sup_->app_crashes().size(), 2u);
  EXPECT_EQ(sup_->replacements().size(), 1u) << "no spare spent on the second crash";

  // Once halted (the result is in), a crash is recorded and changes nothing.
  Make(2, 4);
  Running();
  sup_->Halt();
  Crash(*sup_, 0, 1, At(100));
  EXPECT_TRUE(sup_->failure().empty()) << sup_->failure();
  EXPECT_EQ(sup_->app_crashes().size(), 1u);
  EXPECT_EQ(sup_->deployment().task(0).incarnation, 1u);
}

TEST_F(SupervisorTest, ATaskWhoseValuesDivergedEndsTheRunDiverged) {
  // The kind comes from the task's Result, not from its wording: a message that says
  // "diverged" without the flag is an ordinary failure, and one that does not say it with the
  // flag is a divergence.
  Make(2, 2);
  Running();
  Report(*sup_, 1, 1, At(100), [](proto::Envelope::Builder e) {
    auto r = e.initResult();
    r.setError("block of rows 1..2 grew without bound");
    r.setDiverged(true);
    r.setIncarnation(1);
  });
  EXPECT_EQ(sup_->failure_status(), RunStatus::kDiverged) << sup_->failure();

  Make(2, 2);
  Running();
  Report(*sup_, 0, 1, At(100), [](proto::Envelope::Builder e) {
    auto r = e.initResult();
    r.setError("the input file says diverged");
    r.setIncarnation(1);
  });
  EXPECT_EQ(sup_->failure_status(), RunStatus::kFailed) << sup_->failure();
  // The first failure's kind stays.
  sup_->Fail("later", RunStatus::kDiverged);
  EXPECT_EQ(sup_->failure_status(), RunStatus::kFailed);
}

TEST_F(SupervisorTest, FinishedTasksAreNeitherSilentNorLost) {
  Make(2, 4);
  Running();
  for (size_t t = 0; t < 2; ++t) {
    Report(*sup_, t, 1, At(100), [](proto::Envelope::Builder e) {
      auto r = e.initResult();
      r.setIterations(12);
      r.setData(net::AsBytes(std::string("x")));
      r.setIncarnation(1);
    });
  }
  EXPECT_TRUE(sup_->AllFinished());
  sup_->Tick(At(60000));
  sup_->OnLost(0, 1, "closed", At(60000));
  EXPECT_EQ(sup_->failures(), 0u);
  EXPECT_EQ(sup_->outcomes()[1].iterations, 12u);
  EXPECT_EQ(sup_->outcomes()[1].data, "x");
}

TEST_F(SupervisorTest, TaskOnNamesTheConnectedDaemonsTask) {
  Make(2, 3);
  Running();
  const std::string d1 = sup_->outcome(1).daemon;
  EXPECT_EQ(sup_->TaskOn(d1), std::optional<size_t>(1));
  sup_->OnLost(1, 1, "closed", At(10));
  EXPECT_FALSE(sup_->TaskOn(d1));
  EXPECT_FALSE(sup_->TaskOn(sup_->outcome(1).daemon)) << "not connected yet";
}

}  // namespace
}  // namespace aiac::spawner

namespace aiac::spawner {
namespace {

// Every task converged, then a confirmation round answered by all: converged().
void ConvergeAll(Supervisor& s, size_t tasks, SteadyTime now, uint64_t round) {
  for (size_t t = 0; t < tasks; ++t) Local(s, t, 1, now, true);
  for (size_t t = 0; t < tasks; ++t) Answer(s, t, 1, now, round, true);
}

TEST_F(SupervisorTest, ItemsGoExportConfirmImportAndTheRunWaitsForThem) {
  Make(3, 3);
  Running();
  EXPECT_EQ(sup_->BeginMove(0, 2, 100, At(10)), kStarted);
  EXPECT_EQ(sup_->BeginMove(1, 2, 100, At(10)), Supervisor::MoveStart::kBusy)
      << "one move at a time per task";
  EXPECT_EQ(wire_.last(0), "export 1 ");
  ConvergeAll(*sup_, 3, At(20), 1);
  EXPECT_TRUE(sup_->converged());
  EXPECT_TRUE(sup_->moving()) << "the items are on their way: the run is not over";
  Moved(*sup_, 0, 1, At(30), 1, proto::MoveKind::EXPORT, "abc", 3, 1);
  EXPECT_EQ(wire_.last(0), "confirm 1 ");
  EXPECT_EQ(wire_.last(2), "import 1 abc");
  Moved(*sup_, 2, 1, At(40), 1, proto::MoveKind::IMPORT, "", 3, 1);
  EXPECT_FALSE(sup_->moving());
  // The target holds new work: its convergence counts again only once it says so anew.
  EXPECT_FALSE(sup_->converged());
  auto done = sup_->TakeCompletedMoves();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].first.count, 3u);
  EXPECT_NEAR(done[0].second, 0.030, 1e-9);
  Local(*sup_, 2, 1, At(50), true);
  for (size_t t = 0; t < 3; ++t) Answer(*sup_, t, 1, At(60), 2, true);
  EXPECT_TRUE(sup_->converged());
}

TEST_F(SupervisorTest, AnExportOfNoItemLeavesTheTargetsConvergenceAlone) {
  Make(2, 2);
  Running();
  ConvergeAll(*sup_, 2, At(10), 1);
  ASSERT_TRUE(sup_->converged());
  EXPECT_EQ(sup_->BeginMove(0, 1, 5, At(20)), kStarted);
  Moved(*sup_, 0, 1, At(30), 1, proto::MoveKind::EXPORT, "", 0, 1);
  EXPECT_FALSE(sup_->moving());
  // Nothing reached task 1, which will not report again: it must still count as converged.
  EXPECT_TRUE(sup_->converged());
}

TEST_F(SupervisorTest, AReplacedTaskTakesTheMovesSinceItsCheckpointAgain) {
  Make(3, 4);
  Running();
  ASSERT_EQ(sup_->BeginMove(1, 0, 100, At(10)), kStarted);
  Moved(*sup_, 1, 1, At(20), 1, proto::MoveKind::EXPORT, "xyz", 3, 1);
  Moved(*sup_, 0, 1, At(30), 1, proto::MoveKind::IMPORT, "", 3, 1);
  sup_->OnLost(1, 1, "connection closed", At(40));
  ASSERT_EQ(sup_->deployment().task(1).incarnation, 2u);
  sup_->OnConnected(1, 2, At(50));
  // Restored from a checkpoint before its export: it drops the items task 0 holds now, then starts.
  Report(*sup_, 1, 2, At(60),
         [](proto::Envelope::Builder e) { e.initTaskReady().setRestoredMoves(0); });
  ASSERT_GE(wire_.sent[1].size(), 2u);
  EXPECT_EQ(wire_.sent[1][wire_.sent[1].size() - 2], "drop 1 xyz");
  EXPECT_EQ(wire_.last(1), "start");
}

TEST_F(SupervisorTest, RoutedItemsGoDaemonToDaemonAndTheTargetIsToldOnlyTheirHash) {
  Make(4, 4);
  Running();
  ASSERT_EQ(sup_->BeginMove(0, 3, 100, At(10), std::vector<size_t>{1, 2}), kStarted);
  EXPECT_EQ(wire_.last(0), "export 1  via 1 via 2 via 3");
  Moved(*sup_, 0, 1, At(20), 1, proto::MoveKind::EXPORT, "abc", 3, 1);
  EXPECT_EQ(wire_.last(3), "import 1  hash");
  Moved(*sup_, 3, 1, At(30), 1, proto::MoveKind::IMPORT, "", 3, 1);
  EXPECT_FALSE(sup_->moving());
  // The next move goes straight through the spawner.
  ASSERT_EQ(sup_->BeginMove(3, 0, 100, At(40)), kStarted);
  EXPECT_EQ(wire_.last(3), "export 2 ");
}

TEST_F(SupervisorTest, WhenAGatewayIsLostOrTheItemsAreLateTheSpawnerSendsItsOwnCopy) {
  Make(4, 6);
  Running();
  ASSERT_EQ(sup_->BeginMove(0, 3, 100, At(10), std::vector<size_t>{1}), kStarted);
  Moved(*sup_, 0, 1, At(20), 1, proto::MoveKind::EXPORT, "abc", 3, 1);
  EXPECT_EQ(wire_.last(3), "import 1  hash");
  sup_->OnLost(1, 1, "connection closed", At(30));
  const auto& to3 = wire_.sent[3];
  EXPECT_NE(std::find(to3.begin(), to3.end(), "import 1 abc"), to3.end())
      << "then told where task 1 went";
  Moved(*sup_, 3, 1, At(40), 1, proto::MoveKind::IMPORT, "", 3, 1);
  EXPECT_FALSE(sup_->moving());

  ASSERT_EQ(sup_->BeginMove(0, 3, 100, At(50), std::vector<size_t>{2}), kStarted);
  Moved(*sup_, 0, 1, At(60), 2, proto::MoveKind::EXPORT, "de", 2, 2);
  EXPECT_EQ(wire_.last(3), "import 2  hash");
  // Every daemon keeps reporting meanwhile (silent ones would be lost first).
  auto tick = [&](SteadyTime now) {
    for (size_t t : {0, 2, 3}) Progress(*sup_, t, 1, now, 5);  // task 1 waits for its new daemon
    sup_->Tick(now);
  };
  tick(At(60) + Supervisor::kRouteTimeout - milliseconds(1));
  EXPECT_EQ(wire_.last(3), "import 2  hash");
  tick(At(60) + Supervisor::kRouteTimeout);
  EXPECT_EQ(wire_.last(3), "import 2 de");
}

TEST_F(SupervisorTest, ALostRoutedTargetGetsTheItemsFromTheSpawnerOnItsRestore) {
  Make(3, 4);
  Running();
  ASSERT_EQ(sup_->BeginMove(0, 2, 100, At(10), std::vector<size_t>{1}), kStarted);
  Moved(*sup_, 0, 1, At(20), 1, proto::MoveKind::EXPORT, "xyz", 3, 1);
  sup_->OnLost(2, 1, "connection closed", At(30));
  sup_->OnConnected(2, 2, At(40));
  Report(*sup_, 2, 2, At(50),
         [](proto::Envelope::Builder e) { e.initTaskReady().setRestoredMoves(0); });
  ASSERT_GE(wire_.sent[2].size(), 2u);
  EXPECT_EQ(wire_.sent[2][wire_.sent[2].size() - 2], "import 1 xyz");
}

TEST_F(SupervisorTest, MovesOfDisjointTasksRunSideBySide) {
  Make(4, 4);
  Running();
  ASSERT_EQ(sup_->BeginMove(0, 1, 100, At(10)), kStarted);
  ASSERT_EQ(sup_->BeginMove(2, 3, 100, At(10)), kStarted);
  EXPECT_EQ(sup_->BeginMove(3, 0, 100, At(10)), Supervisor::MoveStart::kBusy);
  Moved(*sup_, 2, 1, At(20), 2, proto::MoveKind::EXPORT, "cd", 2, 1);
  EXPECT_EQ(wire_.last(3), "import 2 cd");
  Moved(*sup_, 0, 1, At(30), 1, proto::MoveKind::EXPORT, "ab", 2, 1);
  EXPECT_EQ(wire_.last(1), "import 1 ab");
  Moved(*sup_, 3, 1, At(40), 2, proto::MoveKind::IMPORT, "", 2, 1);
  EXPECT_TRUE(sup_->moving());
  EXPECT_EQ(sup_->BeginMove(3, 2, 100, At(40)), kStarted) << "tasks 2 and 3 are free again";
  Moved(*sup_, 1, 1, At(50), 1, proto::MoveKind::IMPORT, "", 2, 1);
  auto done = sup_->TakeCompletedMoves();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].first.move, 2u);
  EXPECT_NEAR(done[0].second, 0.030, 1e-9);
  EXPECT_EQ(done[1].first.move, 1u);
  EXPECT_NEAR(done[1].second, 0.040, 1e-9);
}

}  // namespace
}  // namespace aiac::spawner

namespace aiac::spawner {
namespace {

void Adopted(Supervisor& s, size_t t, uint64_t inc, SteadyTime now, bool started,
             const std::string& error = "") {
  Report(s, t, inc, now, [&](proto::Envelope::Builder e) {
    auto r = e.initTaskReady();
    r.setTask(static_cast<uint32_t>(t));
    r.setAdopted(error.empty());
    r.setStarted(started);
    r.setError(error);
  });
}

// A resumed spawner (`aiac-spawner resume`): it dials every task's daemon to adopt it, in the
// incarnation it had; a task whose daemon kept nothing is replaced from its checkpoint, and the
// tasks adopted after that hear where it went; nothing restarts a task that runs.
TEST_F(SupervisorTest, AResumedSpawnerAdoptsTheTasksAndReplacesWhatIsGone) {
  Make(4, 6);
  sup_->Restore(/*started=*/true, /*tighten=*/10, /*failures=*/2, {}, MoveLedger(4), {});
  EXPECT_EQ(sup_->failures(), 2u);
  EXPECT_EQ(sup_->tighten(), 10);
  sup_->Adopt(t0_);
  ASSERT_EQ(wire_.connects.size(), 4u);
  for (size_t t = 0; t < 4; ++t) EXPECT_TRUE(sup_->adopting(t));
  sup_->OnConnected(0, 1, t0_);
  Adopted(*sup_, 0, 1, t0_, /*started=*/true);
  EXPECT_FALSE(sup_->adopting(0));
  EXPECT_TRUE(wire_.sent[0].empty()) << "a running task is left to run";
  // Task 1's daemon was killed while the spawner was away.
  const std::string dead = sup_->deployment().task(1).daemon;
  sup_->OnUnreachable(1, 1, "connection refused", At(10));
  EXPECT_EQ(sup_->failures(), 3u);
  EXPECT_EQ(sup_->deployment().task(1).incarnation, 2u);
  const std::string moved = "moved 1 " + dead + "->" + sup_->deployment().task(1).daemon + " inc 2";
  EXPECT_EQ(wire_.last(0), moved);
  // Task 2's daemon gave its task up (its orphan time ran out): replaced too, but the daemon
  // answered, so it is not counted as lost (nor used again).
  sup_->OnConnected(2, 1, t0_);
  const std::string gave_up = sup_->deployment().task(2).daemon;
  Adopted(*sup_, 2, 1, At(20), false, "no task 2 of job job-1 runs on daemon d3");
  EXPECT_EQ(sup_->deployment().task(2).incarnation, 2u);
  EXPECT_NE(sup_->deployment().task(2).daemon, gave_up);
  EXPECT_EQ(sup_->failures(), 3u);
  // Task 3, adopted last, was not connected when they moved: it hears of both once adopted, and
  // is started since the run was (it had not been).
  sup_->OnConnected(3, 1, t0_);
  Adopted(*sup_, 3, 1, At(30), /*started=*/false);
  const auto& to3 = wire_.sent[3];
  EXPECT_EQ(std::count(to3.begin(), to3.end(), moved), 1);
  EXPECT_EQ(std::count_if(to3.begin(), to3.end(),
                          [](const std::string& m) { return m.rfind("moved 2 ", 0) == 0; }),
            1);
  EXPECT_EQ(to3.back(), "start");
  EXPECT_FALSE(sup_->AllReady());
  sup_->OnConnected(1, 2, At(40));
  Ready(*sup_, 1, 2, At(40), 17);
  sup_->OnConnected(2, 2, At(40));
  Ready(*sup_, 2, 2, At(40), 15);
  EXPECT_TRUE(sup_->AllReady());
  ASSERT_EQ(sup_->replacements().size(), 2u);
  EXPECT_EQ(sup_->replacements()[0].restored_iteration, 17u);
}

// The app crashes a spawner recorded before it was lost are kept in the job's state: the resumed
// one reports them, and a task whose app crashed on one daemon before ends the run when it
// crashes on another after the resume (without them, each resume allowed one more spare).
TEST_F(SupervisorTest, AResumedSpawnerKeepsTheAppCrashesAndTheNextOneEndsTheRun) {
  Make(3, 6);
  sup_->Restore(true, 1, 0, {}, MoveLedger(3), {},
                {AppCrashReport{1, "d-gone", 41, "SIGSEGV", "my app: null pointer"}});
  ASSERT_EQ(sup_->app_crashes().size(), 1u);
  sup_->Adopt(t0_);
  for (size_t t = 0; t < 3; ++t) {
    sup_->OnConnected(t, 1, t0_);
    Adopted(*sup_, t, 1, t0_, /*started=*/true);
  }
  const std::string now = sup_->deployment().task(1).daemon;
  Crash(*sup_, 1, 1, At(100));
  EXPECT_EQ(sup_->failure(), "app crashed: SIGSEGV in task 1 after iteration 41 on d-gone and " +
                                 now + ": my app: null pointer");
  EXPECT_EQ(sup_->app_crashes().size(), 2u);
  EXPECT_TRUE(sup_->replacements().empty()) << "no spare spent on the second crash";
}

// A resumed job's spare may have gone to another job while no spawner held it: its refusal sends
// the task on to the next spare instead of failing the run.
TEST_F(SupervisorTest, AResumedJobsSpareThatRefusesIsPassedOver) {
  Make(3, 5);
  sup_->Restore(true, 1, 0, {}, MoveLedger(3), {});
  sup_->Adopt(t0_);
  sup_->OnUnreachable(0, 1, "connection refused", t0_);
  const std::string first = sup_->deployment().task(0).daemon;
  sup_->OnConnected(0, 2, At(10));
  Report(*sup_, 0, 2, At(10), [&](proto::Envelope::Builder e) {
    e.initTaskReady().setError("daemon " + first + " is busy with job other-1");
  });
  EXPECT_TRUE(sup_->failure().empty()) << sup_->failure();
  EXPECT_EQ(sup_->deployment().task(0).incarnation, 3u);
  EXPECT_NE(sup_->deployment().task(0).daemon, first);
}

// A spawner cut off, not dead, whose tasks a newer incarnation adopted: it stops, and does not
// halt what is no longer its own.
TEST_F(SupervisorTest, ASupersededSpawnerStopsWithoutHalting) {
  Make(3, 4);
  Running();
  Report(*sup_, 1, 1, At(100), [&](proto::Envelope::Builder e) {
    auto r = e.initTaskReady();
    r.setTask(1);
    r.setError("spawner incarnation 2 took the job over");
    r.setSuperseded(true);
  });
  EXPECT_TRUE(sup_->superseded());
  EXPECT_NE(sup_->failure().find("spawner incarnation 2 took the job over"), std::string::npos);
}

// The moves under way when the spawner was lost go on: their steps are sent again.
TEST_F(SupervisorTest, AResumedSpawnerSendsTheStepsOfAMoveUnderWayAgain) {
  Make(3, 4);
  MoveLedger ledger(3);
  const MoveStep begun = ledger.Begin(0, 1, 2);
  sup_->Restore(true, 1, 0, {}, std::move(ledger), {});
  sup_->Adopt(t0_);
  for (size_t t = 0; t < 3; ++t) {
    sup_->OnConnected(t, 1, t0_);
    Adopted(*sup_, t, 1, t0_, true);
  }
  EXPECT_TRUE(sup_->moving());
  sup_->ResumeMoves(At(10));
  EXPECT_EQ(wire_.last(0), "export " + std::to_string(begun.move.move) + " ");
  Moved(*sup_, 0, 1, At(20), begun.move.move, proto::MoveKind::EXPORT, "ab", 2, 1);
  EXPECT_EQ(wire_.last(1), "import " + std::to_string(begun.move.move) + " ab");
  Moved(*sup_, 1, 1, At(30), begun.move.move, proto::MoveKind::IMPORT, "", 2, 1);
  EXPECT_FALSE(sup_->moving());
}

}  // namespace
}  // namespace aiac::spawner
