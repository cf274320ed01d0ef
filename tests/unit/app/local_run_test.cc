// app::RunLocally, the SDK's in-process harness: the CG app run as the runtime would run it
// (asynchronous with delays, synchronous, restored from checkpoints, tightened), and a hook's
// error named with the hook and the task.
#include "app/local_run.h"

#include <gtest/gtest.h>

#include "apps/cg/cg_app.h"
#include "support/test_support.h"

namespace aiac::app {
namespace {

LocalRunOptions CgOptions(uint64_t seed) {
  LocalRunOptions o;
  o.tasks = 4;
  o.params = {{"n", "2000"}, {"bandwidth", "5"}, {"seed", "3"}, {"tolerance", "1e-10"}};
  o.seed = seed;
  o.log = [](LogLevel, std::string_view) {};
  return o;
}

TEST(LocalRunTest, TheCgAppConvergesAsynchronouslyAndDeterministically) {
  cg::CgApp a, b;
  auto first = RunLocally(a, CgOptions(7));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->report.status, GatherStatus::kConverged) << first->report.error;
  EXPECT_LT(first->report.residual, 1e-8);
  auto again = RunLocally(b, CgOptions(7));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->iterations, first->iterations);
}

TEST(LocalRunTest, SynchronousRunsAndTasksRestoredFromCheckpointsConvergeToo) {
  cg::CgApp sync_app, restored_app;
  LocalRunOptions sync = CgOptions(1);
  sync.sync = true;
  auto s = RunLocally(sync_app, sync);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->report.status, GatherStatus::kConverged);
  // Synchronous: every task iterates once per round.
  EXPECT_EQ(*std::min_element(s->iterations.begin(), s->iterations.end()),
            *std::max_element(s->iterations.begin(), s->iterations.end()));
  LocalRunOptions restored = CgOptions(2);
  restored.restore_every = 5;
  auto r = RunLocally(restored_app, restored);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->report.status, GatherStatus::kConverged);
  EXPECT_GT(r->restores, 4u);
}

TEST(LocalRunTest, AResultShortOfTheAppsTestTightensTheTasks) {
  cg::CgApp app;
  LocalRunOptions o = CgOptions(3);
  o.params["tolerance"] = "1e-3";
  o.params["residual_tolerance"] = "1e-10";
  auto r = RunLocally(app, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->report.status, GatherStatus::kConverged);
  EXPECT_GT(r->tightenings, 0u);
  EXPECT_LT(r->report.residual, 1e-10);
}

// An app whose task 1 fails its third iteration, and which logs from MakeTask.
class FailingTask final : public Task {
 public:
  explicit FailingTask(uint32_t t) : t_(t) {}
  std::vector<uint32_t> Dependencies() const override { return {}; }
  Status Absorb(uint32_t, std::string_view) override { return Status::Ok(); }
  Result<bool> Iterate() override {
    if (t_ == 1 && ++n_ == 3) return InvalidArgument("boom");
    return true;
  }
  std::vector<Outgoing> TakeOutgoing() override { return {}; }
  double LocalChange() const override { return 1; }
  bool LocallyConverged() const override { return false; }
  std::string SaveState() const override { return ""; }
  Status RestoreState(std::string_view) override { return Status::Ok(); }
  std::string ResultSlice() const override { return ""; }

 private:
  uint32_t t_;
  int n_ = 0;
};

// A plan of `tasks` tasks with no edges and empty slices.
JobPlan PlanOf(uint32_t tasks) {
  JobPlan plan;
  plan.graph.resize(tasks);
  plan.slices.resize(tasks);
  return plan;
}

class FailingApp final : public App {
 public:
  std::string_view name() const override { return "failing"; }
  Result<JobPlan> Prepare(const JobParams& p) override { return PlanOf(p.tasks); }
  Result<std::unique_ptr<Task>> MakeTask(const JobParams& p, uint32_t t,
                                         std::string_view) override {
    p.logger->Info("making task " + std::to_string(t));
    return std::unique_ptr<Task>(new FailingTask(t));
  }
  Result<GatherReport> Gather(const JobParams&, const std::vector<std::string>&) override {
    return GatherReport{};
  }
};

TEST(LocalRunTest, AHooksErrorNamesTheHookAndTheTaskAndTheLogReachesTheCallback) {
  FailingApp app;
  LocalRunOptions o;
  o.tasks = 2;
  std::vector<std::string> lines;
  o.log = [&](LogLevel level, std::string_view line) {
    EXPECT_EQ(level, LogLevel::kInfo);
    lines.emplace_back(line);
  };
  auto r = RunLocally(app, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Task::Iterate (task 1): boom");
  EXPECT_EQ(lines, (std::vector<std::string>{"making task 0", "making task 1"}));
  o.tasks = 0;
  EXPECT_FALSE(RunLocally(app, o).ok());
}

// Two tasks that send each other their step counts; task 0 says it did nothing at every other
// step. Synchronously, as in the runtime, such a step still counts and its values still go out.
class IdleEveryOtherStep final : public Task {
 public:
  explicit IdleEveryOtherStep(uint32_t t) : t_(t) {}
  std::vector<uint32_t> Dependencies() const override { return {1 - t_}; }
  Status Absorb(uint32_t, std::string_view) override {
    ++absorbed_;
    return Status::Ok();
  }
  Result<bool> Iterate() override { return ++steps_ % 2 == 1 || t_ == 1; }
  std::vector<Outgoing> TakeOutgoing() override { return {{1 - t_, std::to_string(steps_)}}; }
  double LocalChange() const override { return 0; }
  bool LocallyConverged() const override { return steps_ >= 6; }
  std::string SaveState() const override { return ""; }
  Status RestoreState(std::string_view) override { return Status::Ok(); }
  std::string ResultSlice() const override { return std::to_string(absorbed_); }

 private:
  uint32_t t_;
  int steps_ = 0;
  int absorbed_ = 0;
};

class IdleApp final : public App {
 public:
  std::string_view name() const override { return "idle"; }
  Result<JobPlan> Prepare(const JobParams& p) override { return PlanOf(p.tasks); }
  Result<std::unique_ptr<Task>> MakeTask(const JobParams&, uint32_t t, std::string_view) override {
    return std::unique_ptr<Task>(new IdleEveryOtherStep(t));
  }
  Result<GatherReport> Gather(const JobParams&, const std::vector<std::string>& slices) override {
    GatherReport r;
    r.numbers["absorbed_by_1"] = std::stod(slices[1]);
    return r;
  }
};

TEST(LocalRunTest, ASynchronousIterationThatDidNothingStillCountsAndSends) {
  IdleApp app;
  LocalRunOptions o;
  o.tasks = 2;
  o.sync = true;
  o.log = [](LogLevel, std::string_view) {};
  auto r = RunLocally(app, o);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->iterations, (std::vector<uint64_t>{6, 6}));
  // Steps 2..6 each read the other's step before.
  EXPECT_EQ(r->report.numbers["absorbed_by_1"], 5);
}

}  // namespace
}  // namespace aiac::app
