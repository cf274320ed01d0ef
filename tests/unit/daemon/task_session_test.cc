// The task session with a fake app and a fake spawner port, no socket: building a task (app
// name, restore, tightening), what waits for each neighbour and backup, who may send values,
// moves, and what the spawner is told, in which incarnation.
#include "daemon/task_session.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include "net/capnp_bytes.h"
#include "support/test_support.h"

namespace aiac::daemon {
namespace {

namespace asio = net::asio;

// Counts one per iteration up to `limit`, sending the count to task 1 and keeping the last
// value task 1 sent. Its state is the count; `fail_at` makes that iteration an error.
class CountingTask : public app::Task {
 public:
  CountingTask(uint64_t limit, uint64_t fail_at) : limit_(limit), fail_at_(fail_at) {}
  std::vector<uint32_t> Dependencies() const override { return {1}; }
  Status Absorb(uint32_t, std::string_view bytes) override {
    got_ = std::string(bytes);
    return Status::Ok();
  }
  Result<bool> Iterate() override {
    if (count_ >= limit_) return false;
    if (++count_ == fail_at_) return Internal("iteration " + std::to_string(count_) + " broke");
    return true;
  }
  std::vector<app::Outgoing> TakeOutgoing() override { return {{1, std::to_string(count_)}}; }
  double LocalChange() const override { return count_ < limit_ ? 1 : 0; }
  bool LocallyConverged() const override { return count_ >= limit_; }
  std::string SaveState() const override { return std::to_string(count_); }
  Status RestoreState(std::string_view state) override {
    count_ = std::stoull(std::string(state));
    return Status::Ok();
  }
  std::string ResultSlice() const override {
    return "count " + std::to_string(count_) + " got " + got_;
  }
  Status Tighten(double factor) override {
    tightened_ *= factor;
    return Status::Ok();
  }
  double tightened() const { return tightened_; }
  uint64_t count() const { return count_; }

 private:
  uint64_t limit_, fail_at_;
  uint64_t count_ = 0;
  std::string got_ = "nothing";
  double tightened_ = 1;
};

class CountingApp : public app::App {
 public:
  CountingApp(uint64_t limit, uint64_t fail_at = 0) : limit_(limit), fail_at_(fail_at) {}
  std::string_view name() const override { return "counting"; }
  Result<app::JobPlan> Prepare(const app::JobParams&) override { return app::JobPlan{}; }
  Result<std::unique_ptr<app::Task>> MakeTask(const app::JobParams&, uint32_t task,
                                              std::string_view slice) override {
    if (slice == "bad") return InvalidArgument("task " + std::to_string(task) + ": bad slice");
    return std::unique_ptr<app::Task>(new CountingTask(limit_, fail_at_));
  }
  Result<app::GatherReport> Gather(const app::JobParams&,
                                   const std::vector<std::string>&) override {
    return app::GatherReport{};
  }

 private:
  uint64_t limit_, fail_at_;
};

// Task 0 of job "j" on this daemon; task 1 runs on d1, whose daemon d2 is also a backup.
Assignment AnAssignment() {
  Assignment a;
  a.job = "j";
  a.task = 0;
  a.app = "counting";
  a.params.tasks = 2;
  a.neighbours = {{1, {"127.0.0.1:7001", "d1"}}};
  a.senders = {{1, "d1"}};
  a.backups = {{"127.0.0.1:7001", "d1"}, {"127.0.0.1:7002", "d2"}};
  a.incarnation = 3;
  return a;
}

// What the session sent to the spawner, in order, and why it ended.
struct FakeSpawner {
  std::vector<std::unique_ptr<capnp::MallocMessageBuilder>> sent;
  std::vector<std::string> ended;

  SpawnerPort Port() {
    return {[this](const std::function<void(proto::Envelope::Builder)>& fill) {
              auto m = std::make_unique<capnp::MallocMessageBuilder>();
              fill(m->initRoot<proto::Envelope>());
              sent.push_back(std::move(m));
            },
            [this](const std::string& why) { ended.push_back(why); },
            {}};
  }
  proto::Envelope::Reader At(size_t i) { return sent.at(i)->getRoot<proto::Envelope>().asReader(); }
  // The last message of kind `is`, if any.
  std::optional<proto::Envelope::Reader> Last(bool (proto::Envelope::Reader::*is)() const) {
    for (size_t i = sent.size(); i-- > 0;) {
      if ((At(i).*is)()) return At(i);
    }
    return std::nullopt;
  }
};

class TaskSessionTest : public ::testing::Test {
 protected:
  std::shared_ptr<TaskSession> Make(const Assignment& a, std::unique_ptr<app::App> app,
                                    std::optional<checkpoint::Checkpoint> restored = std::nullopt) {
    auto prepared = PrepareTask(a, std::move(app), std::move(restored));
    EXPECT_TRUE(prepared.ok()) << prepared.status().ToString();
    if (!prepared.ok()) return nullptr;
    auto s =
        TaskSession::Create(io_, a, std::move(*prepared), nullptr, std::chrono::milliseconds(10),
                            spawner_.Port(), MakeLogger("test", spdlog::level::off));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  // Runs the io thread's handlers until `pred` holds (a generous bound).
  bool RunUntil(const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Runs the io thread until every backup of `s` has a checkpoint of `iteration` waiting.
  bool RunUntilBackupsWait(TaskSession& s, uint64_t iteration) {
    return RunUntil([&] {
      for (auto& b : s.backups()) {
        if (!b->pending || b->pending->iteration != iteration) return false;
      }
      return true;
    });
  }

  // Values from task `from` as daemon `sender` sends them.
  bool Deliver(TaskSession& s, const std::string& sender, uint32_t from, uint64_t iteration,
               const std::string& v) {
    capnp::MallocMessageBuilder m;
    auto d = m.initRoot<proto::DependencyData>();
    d.setJob("j");
    d.setFromTask(from);
    d.setToTask(0);
    d.setIteration(iteration);
    d.setData(net::AsBytes(v));
    d.setIncarnation(1);
    return s.Deliver(sender, d.asReader());
  }

  asio::io_context io_;
  FakeSpawner spawner_;
};

TEST_F(TaskSessionTest, PrepareRefusesAnotherAppAndAFailingMakeTask) {
  Assignment a = AnAssignment();
  a.app = "cg";
  auto wrong = PrepareTask(a, std::make_unique<CountingApp>(10), std::nullopt);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("holds app 'counting', not 'cg'"), std::string::npos);
  a = AnAssignment();
  a.slice = "bad";
  auto bad = PrepareTask(a, std::make_unique<CountingApp>(10), std::nullopt);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "task 0: bad slice");
}

TEST_F(TaskSessionTest, PrepareRestoresTheCheckpointAndTheJobsTightening) {
  Assignment a = AnAssignment();
  a.tighten = 100;
  runtime::MoveState moves;
  moves.moves = 3;
  moves.outbox.push_back({7, 3, 2, "items"});
  auto c = checkpoint::MakeCheckpoint("j", 0, 2, 40, runtime::EncodeTaskState(moves, "40"));
  auto p = PrepareTask(a, std::make_unique<CountingApp>(100), c);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto& task = static_cast<CountingTask&>(*p->task);
  EXPECT_EQ(task.count(), 40u);
  EXPECT_EQ(task.tightened(), 100);
  EXPECT_EQ(p->dependencies, std::vector<uint32_t>{1});
  ASSERT_TRUE(p->restored.has_value());
  EXPECT_EQ(p->restored->iteration, 40u);
  // The runtime's header: the item moves it had applied and its unconfirmed export.
  EXPECT_EQ(p->moves.moves, 3u);
  ASSERT_EQ(p->moves.outbox.size(), 1u);
  EXPECT_EQ(p->moves.outbox[0].items, "items");
  EXPECT_TRUE(p->resend.empty());
  // A synchronous task's checkpoint: what it sent last, to be sent again first.
  const std::vector<runtime::SentValues> sent = {{39, {{1, "39"}}}, {40, {{1, "40"}}}};
  auto with_sent = PrepareTask(
      a, std::make_unique<CountingApp>(100),
      checkpoint::MakeCheckpoint("j", 0, 2, 40, runtime::EncodeTaskState({}, "40", sent)));
  ASSERT_TRUE(with_sent.ok()) << with_sent.status().ToString();
  EXPECT_EQ(with_sent->resend, sent);
  // A state without the header is refused with the reason.
  auto bare = PrepareTask(a, std::make_unique<CountingApp>(100),
                          checkpoint::MakeCheckpoint("j", 0, 2, 40, "40"));
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("not a task state"), std::string::npos);
}

TEST_F(TaskSessionTest, AsyncLinksKeepOnlyTheNewestValueAndTheResultGoesToTheSpawner) {
  auto s = Make(AnAssignment(), std::make_unique<CountingApp>(50));
  ASSERT_TRUE(s);
  auto& link = *s->links().at(1);
  EXPECT_EQ(link.daemon, "d1");
  ASSERT_TRUE(Deliver(*s, "d1", 1, 7, "seven"));  // waits in the mailbox for the first iteration
  s->Start();
  // Nothing takes the values away: newest wins, so the queue never grows past one.
  ASSERT_TRUE(RunUntil([&] { return !link.pending.empty() && link.pending.back().bytes == "50"; }));
  EXPECT_EQ(link.pending.size(), 1u);
  EXPECT_EQ(link.pending.back().iteration, 50u);
  EXPECT_TRUE(link.pending.back().converged);
  // The task says it converged (after saying it was not, at its first iteration); the value of
  // iteration 50 may be queued before that word is.
  ASSERT_TRUE(RunUntil([&] {
    auto lc = spawner_.Last(&proto::Envelope::Reader::isLocalConvergence);
    return lc && lc->getLocalConvergence().getConverged();
  }));
  auto lc = spawner_.Last(&proto::Envelope::Reader::isLocalConvergence)->getLocalConvergence();
  EXPECT_EQ(lc.getIncarnation(), 3u);
  s->Halt();
  ASSERT_TRUE(RunUntil([&] { return !spawner_.ended.empty(); }));
  EXPECT_EQ(spawner_.ended, std::vector<std::string>{"halted"});
  auto r = spawner_.Last(&proto::Envelope::Reader::isResult)->getResult();
  EXPECT_EQ(r.getJob(), "j");
  EXPECT_EQ(r.getIncarnation(), 3u);
  EXPECT_EQ(net::AsString(r.getData()), "count 50 got seven");
  EXPECT_EQ(r.getError(), "");
}

TEST_F(TaskSessionTest, OnlyTheDaemonNamedForATaskMaySendItsValuesAndAMoveChangesWho) {
  auto s = Make(AnAssignment(), std::make_unique<CountingApp>(5));
  ASSERT_TRUE(s);
  EXPECT_TRUE(Deliver(*s, "d1", 1, 1, "x"));
  EXPECT_FALSE(Deliver(*s, "d2", 1, 1, "x"));  // d2 does not run task 1
  EXPECT_FALSE(Deliver(*s, "d1", 0, 1, "x"));  // nor does d1 run task 0
  EXPECT_FALSE(s->Move({"j", 1, "not an address", "d9", "d1", 4}));
  EXPECT_FALSE(s->Move({"j", 1, "127.0.0.1:7009", "bad id!", "d1", 4}));
  EXPECT_FALSE(s->Move({"other", 1, "127.0.0.1:7009", "d9", "d1", 4}));
  EXPECT_EQ(s->links().at(1)->daemon, "d1");
  ASSERT_TRUE(s->Move({"j", 1, "127.0.0.1:7009", "d9", "d1", 4}));
  EXPECT_FALSE(Deliver(*s, "d1", 1, 2, "x"));  // replaced: its late values are refused
  EXPECT_TRUE(Deliver(*s, "d9", 1, 2, "x"));
  auto& link = *s->links().at(1);
  EXPECT_EQ(link.daemon, "d9");
  EXPECT_EQ(link.address.ToString(), "127.0.0.1:7009");
  // d1 was a backup too: the daemon that replaced it takes over; d2 stays.
  ASSERT_EQ(s->backups().size(), 2u);
  EXPECT_EQ(s->backups()[0]->daemon, "d9");
  EXPECT_EQ(s->backups()[0]->address.ToString(), "127.0.0.1:7009");
  EXPECT_EQ(s->backups()[1]->daemon, "d2");
}

TEST_F(TaskSessionTest, CheckpointsGoToEveryBackupWithTheirIncarnationAndAVerifyingChecksum) {
  Assignment a = AnAssignment();
  a.checkpoint_every = 10;
  auto s = Make(a, std::make_unique<CountingApp>(35));
  ASSERT_TRUE(s);
  s->Start();
  ASSERT_TRUE(RunUntilBackupsWait(*s, 30));
  for (auto& b : s->backups()) {
    EXPECT_EQ(b->pending->job, "j");
    EXPECT_EQ(b->pending->task, 0u);
    EXPECT_EQ(b->pending->incarnation, 3u);
    EXPECT_EQ(b->pending->state, runtime::EncodeTaskState({}, "30"));
    EXPECT_TRUE(checkpoint::Verifies(*b->pending));
  }
  s->Acknowledged(2);
  s->Acknowledged(2);
  // The runner's latest report, as of its last progress period.
  ASSERT_TRUE(RunUntil([&] {
    s->ReportProgress();
    return spawner_.Last(&proto::Envelope::Reader::isTaskProgress)
               ->getTaskProgress()
               .getIteration() == 35;
  }));
  auto p = spawner_.Last(&proto::Envelope::Reader::isTaskProgress)->getTaskProgress();
  EXPECT_EQ(p.getIteration(), 35u);
  EXPECT_TRUE(p.getConverged());
  EXPECT_EQ(p.getCheckpoints(), 2u);
  EXPECT_EQ(p.getCheckpointBytes(), 4u);
  EXPECT_EQ(p.getIncarnation(), 3u);
}

TEST_F(TaskSessionTest, ARestoredTaskCountsOnFromItsCheckpoint) {
  auto s = Make(AnAssignment(), std::make_unique<CountingApp>(45),
                checkpoint::MakeCheckpoint("j", 0, 2, 40, runtime::EncodeTaskState({}, "40")));
  ASSERT_TRUE(s);
  s->Start();
  // The first iteration (41) reports its local state too: wait for the converged one (on a
  // loaded machine the test may look between the two).
  ASSERT_TRUE(RunUntil([&] {
    auto last = spawner_.Last(&proto::Envelope::Reader::isLocalConvergence);
    return last && last->getLocalConvergence().getConverged();
  }));
  EXPECT_EQ(spawner_.Last(&proto::Envelope::Reader::isLocalConvergence)
                ->getLocalConvergence()
                .getIteration(),
            45u);
  ASSERT_FALSE(s->links().at(1)->pending.empty());
  EXPECT_EQ(s->links().at(1)->pending.back().bytes, "45");
}

// Synchronous runs (value_log.h): the spawner's TrimValues lets go of what no restore of the
// receiver asks for, waiting or logged; the progress reports say how far every backup holds
// this task's checkpoints and from where its logs still hold what they must.
TEST_F(TaskSessionTest, ASyncSessionTrimsItsValueLogsAndReportsWhatItsBackupsAndLogsHold) {
  Assignment a = AnAssignment();
  a.sync = true;
  a.value_log_mb = 1;
  auto s = Make(a, std::make_unique<CountingApp>(50));
  ASSERT_TRUE(s);
  auto& link = *s->links().at(1);
  ASSERT_TRUE(link.keep_all);
  ASSERT_TRUE(link.log.enabled());
  for (uint64_t i = 1; i <= 3; ++i) link.log.Sent({i, "x", false, 0, 0});
  link.pending = {{4, "x", false, 0, 0}, {5, "x", false, 0, 0}};
  s->TrimValues(1, 3);
  EXPECT_EQ(link.log.size(), 1u);
  EXPECT_EQ(link.pending.size(), 2u);
  s->TrimValues(1, 5);
  EXPECT_EQ(link.log.size(), 0u);
  ASSERT_EQ(link.pending.size(), 1u) << "never sent, yet no restore asks for it";
  EXPECT_EQ(link.pending.front().iteration, 5u);
  s->TrimValues(7, 100);  // no link to task 7: nothing happens

  EXPECT_EQ(s->safe_checkpoint(), 0u);
  s->backups()[0]->stored = 20;
  s->backups()[1]->stored = 10;
  EXPECT_EQ(s->safe_checkpoint(), 10u) << "held by every backup";
  EXPECT_EQ(s->value_log_from(), 0u);
  link.log = ValueLog(2);
  for (uint64_t i = 6; i <= 9; ++i) link.log.Sent({i, "x", false, 0, 0});
  EXPECT_EQ(s->value_log_from(), 8u) << "6 and 7 dropped for want of room";
  s->ReportProgress();
  auto p = spawner_.Last(&proto::Envelope::Reader::isTaskProgress)->getTaskProgress();
  EXPECT_EQ(p.getSafeCheckpoint(), 10u);
  EXPECT_EQ(p.getValueLogFrom(), 8u);
  // Backup d2 moves: its replacement holds nothing of this task yet.
  ASSERT_TRUE(s->Move({"j", 5, "127.0.0.1:7009", "d9", "d2", 2}));
  EXPECT_EQ(s->safe_checkpoint(), 0u);

  // Asynchronous sessions log nothing.
  auto async = Make(AnAssignment(), std::make_unique<CountingApp>(50));
  ASSERT_TRUE(async);
  EXPECT_FALSE(async->links().at(1)->log.enabled());
}

// A synchronous task restored at iteration 40 logs from 39 on (it sends its checkpoint's last two
// iterations first): the values before died with its previous daemon. Its reports say so, for a
// spawner that resumed the job after the restore and cannot know it otherwise: a neighbour
// restored from an older checkpoint would wait for them for ever.
TEST_F(TaskSessionTest, ARestoredSyncTaskReportsThatItsLogsBeginAtItsCheckpoint) {
  Assignment a = AnAssignment();
  a.sync = true;
  a.value_log_mb = 1;
  auto s = Make(a, std::make_unique<CountingApp>(50),
                checkpoint::MakeCheckpoint("j", 0, 2, 40, runtime::EncodeTaskState({}, "40")));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->value_log_from(), 39u);
  s->ReportProgress();
  EXPECT_EQ(
      spawner_.Last(&proto::Envelope::Reader::isTaskProgress)->getTaskProgress().getValueLogFrom(),
      39u);
  // Its first daemon's logs hold everything from the start.
  auto first = Make(a, std::make_unique<CountingApp>(50));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->value_log_from(), 0u);
}

TEST_F(TaskSessionTest, AFailingTaskSendsItsErrorAndEnds) {
  auto s = Make(AnAssignment(), std::make_unique<CountingApp>(50, 7));
  ASSERT_TRUE(s);
  s->Start();
  ASSERT_TRUE(RunUntil([&] { return !spawner_.ended.empty(); }));
  EXPECT_EQ(spawner_.ended, std::vector<std::string>{"failed"});
  auto r = spawner_.Last(&proto::Envelope::Reader::isResult)->getResult();
  EXPECT_NE(std::string(r.getError().cStr()).find("iteration 7 broke"), std::string::npos)
      << r.getError().cStr();
}

// A failed task's replacement restores the newest checkpoint its backups hold: the result
// waits until the one this daemon made last has left every backup link and was answered.
TEST_F(TaskSessionTest, AFailedTasksResultWaitsForItsLastCheckpointToReachEveryBackup) {
  Assignment a = AnAssignment();
  a.checkpoint_every = 1;
  auto s = Make(a, std::make_unique<CountingApp>(50, 7));
  ASSERT_TRUE(s);
  s->Start();
  ASSERT_TRUE(RunUntilBackupsWait(*s, 6));
  ASSERT_TRUE(RunUntil([&] { return s->result_held(); }));  // the failure is in
  EXPECT_FALSE(spawner_.Last(&proto::Envelope::Reader::isResult)) << "sent before its checkpoint";
  EXPECT_TRUE(spawner_.ended.empty());
  // The first backup's link sent it and was answered; the second's is on its way.
  s->backups()[0]->pending.reset();
  s->BackupIdle();
  s->backups()[1]->pending.reset();
  s->backups()[1]->sending = true;
  s->BackupIdle();
  EXPECT_TRUE(spawner_.ended.empty());
  s->backups()[1]->sending = false;
  s->BackupIdle();
  EXPECT_FALSE(s->result_held());
  EXPECT_EQ(spawner_.ended, std::vector<std::string>{"failed"});
  auto r = spawner_.Last(&proto::Envelope::Reader::isResult)->getResult();
  EXPECT_NE(std::string(r.getError().cStr()).find("iteration 7 broke"), std::string::npos);
  s->BackupIdle();  // once
  EXPECT_EQ(spawner_.ended.size(), 1u);
}

// A backup that never answers holds a failed task's result back for TaskSession::kFlushLimit,
// no longer; a task that halts sends its result at once, whatever its backups hold.
TEST_F(TaskSessionTest, AnUnreachableBackupHoldsAFailedResultBackOnlyForTheLimit) {
  Assignment a = AnAssignment();
  a.checkpoint_every = 1;
  auto s = Make(a, std::make_unique<CountingApp>(50, 7));
  ASSERT_TRUE(s);
  const auto start = std::chrono::steady_clock::now();
  s->Start();
  ASSERT_TRUE(RunUntil([&] { return !spawner_.ended.empty(); }));  // 20 s at most
  EXPECT_GE(std::chrono::steady_clock::now() - start, TaskSession::kFlushLimit);
  EXPECT_EQ(spawner_.ended, std::vector<std::string>{"failed"});
  s->End();

  spawner_ = FakeSpawner();
  auto halting = Make(a, std::make_unique<CountingApp>(30));
  ASSERT_TRUE(halting);
  halting->Start();
  ASSERT_TRUE(RunUntil([&] { return halting->backups()[0]->pending.has_value(); }));
  halting->Halt();
  ASSERT_TRUE(RunUntil([&] { return !spawner_.ended.empty(); }));
  EXPECT_EQ(spawner_.ended, std::vector<std::string>{"halted"});
  EXPECT_TRUE(halting->backups()[0]->pending.has_value());
  halting->End();
}

TEST_F(TaskSessionTest, AnEndedSessionReportsNothingMore) {
  auto s = Make(AnAssignment(), std::make_unique<CountingApp>(1000000));
  ASSERT_TRUE(s);
  s->Start();
  ASSERT_TRUE(RunUntil([&] { return !s->links().at(1)->pending.empty(); }));
  auto retired = s->End();
  ASSERT_TRUE(retired.runner);
  EXPECT_TRUE(s->ended());
  EXPECT_FALSE(s->End().runner);  // once
  retired.runner.reset();         // joins the task's thread
  const size_t sent = spawner_.sent.size();
  s->links().at(1)->pending.clear();
  s->Query(1);  // ignored
  io_.restart();
  io_.poll();  // whatever the runner posted before it stopped
  EXPECT_EQ(spawner_.sent.size(), sent);
  EXPECT_TRUE(s->links().at(1)->pending.empty());
  EXPECT_TRUE(spawner_.ended.empty());
  EXPECT_TRUE(Deliver(*s, "d2", 1, 1, "late"));  // dropped, not refused
}

// DistPM's groups (report_group.h): a coordinator keeps each member's newest report, only from
// the daemon named for that member, and sends them with its own; a member hands its reports to
// its coordinator's link, or to the spawner when that link cannot take them.
TEST_F(TaskSessionTest, ACoordinatorGathersItsGroupsReportsAndAMemberReportsThroughIt) {
  Assignment a = AnAssignment();
  a.params.tasks = 3;
  a.group = {{0, "127.0.0.1:7000", "d0"}, {1, "127.0.0.1:7001", "d1"}, {2, "127.0.0.1:7002", "d2"}};
  auto coordinator = Make(a, std::make_unique<CountingApp>(5));
  ASSERT_TRUE(coordinator);
  EXPECT_TRUE(coordinator->group().coordinator());
  auto report = [](const std::string& job, uint32_t task, uint64_t iteration) {
    auto m = std::make_shared<capnp::MallocMessageBuilder>();
    auto p = m->initRoot<proto::TaskProgress>();
    p.setJob(job);
    p.setTask(task);
    p.setIteration(iteration);
    return m;
  };
  auto gather = [&](const std::string& sender, const std::string& job, uint32_t task,
                    uint64_t iteration) {
    auto m = report(job, task, iteration);
    return coordinator->GatherReport(sender, m->getRoot<proto::TaskProgress>().asReader());
  };
  EXPECT_TRUE(gather("d1", "j", 1, 4));
  EXPECT_TRUE(gather("d1", "j", 1, 5));   // the newest replaces it
  EXPECT_FALSE(gather("d2", "j", 1, 6));  // d2 does not run task 1
  EXPECT_FALSE(gather("d0", "j", 0, 6));  // nobody speaks for the coordinator's own task
  EXPECT_FALSE(gather("d2", "k", 2, 6));  // another job
  coordinator->ReportProgress();
  ASSERT_EQ(spawner_.sent.size(), 1u);
  ASSERT_TRUE(spawner_.At(0).isGroupReports());
  auto reports = spawner_.At(0).getGroupReports().getReports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].getTask(), 0u);
  EXPECT_EQ(reports[0].getIncarnation(), 3u);
  EXPECT_EQ(reports[1].getTask(), 1u);
  EXPECT_EQ(reports[1].getIteration(), 5u);
  coordinator->ReportProgress();  // nothing gathered since: its own report alone
  ASSERT_EQ(spawner_.sent.size(), 2u);
  EXPECT_TRUE(spawner_.At(1).isTaskProgress());
  // Task 1 moved to d9: what its old daemon sent is dropped, and only d9 speaks for it now.
  EXPECT_TRUE(gather("d1", "j", 1, 7));
  ASSERT_TRUE(coordinator->Move({"j", 1, "127.0.0.1:7009", "d9", "d1", 4}));
  EXPECT_FALSE(gather("d1", "j", 1, 8));
  EXPECT_TRUE(gather("d9", "j", 1, 1));
  coordinator->ReportProgress();
  ASSERT_TRUE(spawner_.At(2).isGroupReports());
  ASSERT_EQ(spawner_.At(2).getGroupReports().getReports().size(), 2u);
  EXPECT_EQ(spawner_.At(2).getGroupReports().getReports()[1].getIteration(), 1u);

  // A member: through its coordinator's link while it takes them, else straight.
  Assignment b = a;
  b.task = 2;
  b.neighbours.clear();
  b.senders.clear();
  FakeSpawner member_spawner;
  auto prepared = PrepareTask(b, std::make_unique<CountingApp>(5), std::nullopt);
  ASSERT_TRUE(prepared.ok());
  auto member =
      TaskSession::Create(io_, b, std::move(*prepared), nullptr, std::chrono::milliseconds(10),
                          member_spawner.Port(), MakeLogger("test", spdlog::level::off));
  ASSERT_TRUE(member.ok());
  EXPECT_FALSE((*member)->group().coordinator());
  ASSERT_TRUE((*member)->group().coordinator_of_member().has_value());
  EXPECT_EQ((*member)->group().coordinator_of_member()->daemon, "d0");
  EXPECT_FALSE(
      (*member)->GatherReport("d1", report("j", 1, 1)->getRoot<proto::TaskProgress>().asReader()));
  std::vector<uint32_t> through_link;
  bool link_takes = true;
  auto link = [&](const EnvelopeFill& fill) {
    if (!link_takes) return false;
    capnp::MallocMessageBuilder m;
    fill(m.initRoot<proto::Envelope>());
    through_link.push_back(m.getRoot<proto::Envelope>().asReader().getTaskProgress().getTask());
    return true;
  };
  (*member)->ReportProgress(1, 0, {}, link);
  EXPECT_EQ(through_link, std::vector<uint32_t>{2});
  EXPECT_TRUE(member_spawner.sent.empty());
  link_takes = false;
  (*member)->ReportProgress(1, 0, {}, link);
  ASSERT_EQ(member_spawner.sent.size(), 1u);
  EXPECT_TRUE(member_spawner.At(0).isTaskProgress());
  // The coordinator moved: the member's reports go to its new daemon.
  ASSERT_TRUE((*member)->Move({"j", 0, "127.0.0.1:7010", "d10", "d0", 2}));
  EXPECT_EQ((*member)->group().coordinator_of_member()->daemon, "d10");
  EXPECT_EQ((*member)->group().coordinator_of_member()->address.ToString(), "127.0.0.1:7010");
}

TEST_F(TaskSessionTest, SyncLinksKeepEveryValueInOrder) {
  Assignment a = AnAssignment();
  a.sync = true;
  auto s = Make(a, std::make_unique<CountingApp>(3));
  ASSERT_TRUE(s);
  s->Start();
  // In sync mode iteration k waits for task 1's value of iteration k - 1.
  for (uint64_t k = 1; k <= 3; ++k) {
    ASSERT_TRUE(RunUntil([&] { return s->links().at(1)->pending.size() == k; })) << k;
    ASSERT_TRUE(Deliver(*s, "d1", 1, k, "v" + std::to_string(k)));
  }
  auto& pending = s->links().at(1)->pending;
  ASSERT_EQ(pending.size(), 3u);
  for (uint64_t k = 1; k <= 3; ++k) EXPECT_EQ(pending[k - 1].bytes, std::to_string(k));
}

}  // namespace
}  // namespace aiac::daemon
