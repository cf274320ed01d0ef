// The runner's own duties, with a counting task instead of an app: checkpoint cadence.
#include "aiac/task_runner.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "support/test_support.h"

namespace aiac::runtime {
namespace {

// Counts to `limit`, one per iteration; its state is the count.
class CountingTask : public app::Task {
 public:
  explicit CountingTask(uint64_t limit) : limit_(limit) {}
  std::vector<uint32_t> Dependencies() const override { return {}; }
  Status Absorb(uint32_t, std::string_view) override { return Status::Ok(); }
  Result<bool> Iterate() override {
    if (count_ >= limit_) return false;
    ++count_;
    return true;
  }
  std::vector<app::Outgoing> TakeOutgoing() override { return {}; }
  double LocalChange() const override { return count_ < limit_ ? 1 : 0; }
  bool LocallyConverged() const override { return count_ >= limit_; }
  std::string SaveState() const override { return std::to_string(count_); }
  Status RestoreState(std::string_view) override { return Status::Ok(); }
  std::string ResultSlice() const override { return SaveState(); }

 private:
  uint64_t limit_;
  uint64_t count_ = 0;
};

struct Recorder {
  std::mutex mu;
  std::vector<std::pair<uint64_t, std::string>> checkpoints;
  bool done = false;

  RunnerCallbacks Callbacks() {
    RunnerCallbacks cb;
    cb.send = [](std::vector<OutgoingValue>, uint64_t, bool) {};
    cb.local_convergence = [](bool, uint64_t) {};
    cb.progress = [](uint64_t, double, bool) {};
    cb.answer = [](uint64_t, bool) {};
    cb.checkpoint = [this](std::string state, uint64_t iteration) {
      std::lock_guard lock(mu);
      checkpoints.emplace_back(iteration, std::move(state));
    };
    cb.finished = [this](Result<std::string>, uint64_t) {
      std::lock_guard lock(mu);
      done = true;
    };
    return cb;
  }
};

TEST(TaskRunnerTest, CheckpointsEveryKIterationsWithTheStateOfThatIteration) {
  Recorder rec;
  RunnerOptions options;
  options.checkpoint_every = 10;
  TaskRunner runner(std::make_unique<CountingTask>(95), {}, options, rec.Callbacks());
  runner.Start();
  ASSERT_TRUE(testing::WaitUntil([&] {
    std::lock_guard lock(rec.mu);
    return rec.checkpoints.size() >= 9;
  }));
  runner.Halt();
  runner.Join();
  ASSERT_EQ(rec.checkpoints.size(), 9u);  // 10, 20, ..., 90; none for the idle tail
  for (size_t i = 0; i < rec.checkpoints.size(); ++i) {
    EXPECT_EQ(rec.checkpoints[i].first, 10 * (i + 1));
    EXPECT_EQ(rec.checkpoints[i].second, std::to_string(10 * (i + 1)));
  }
}

// An emulated node (RunnerOptions::iteration_time): each iteration lasts what the hook says,
// given the CPU time it used, and a halt does not wait for the sleep to end.
TEST(TaskRunnerTest, AnEmulatedIterationLastsWhatTheNodeWouldTake) {
  Recorder rec;
  RunnerOptions options;
  std::mutex mu;
  std::vector<std::chrono::nanoseconds> cpu_seen;
  options.iteration_time = [&](std::chrono::nanoseconds cpu) {
    std::lock_guard lock(mu);
    cpu_seen.push_back(cpu);
    return std::chrono::nanoseconds(std::chrono::milliseconds(40));
  };
  options.checkpoint_every = 1;
  TaskRunner runner(std::make_unique<CountingTask>(5), {}, options, rec.Callbacks());
  const auto start = std::chrono::steady_clock::now();
  runner.Start();
  ASSERT_TRUE(testing::WaitUntil([&] {
    std::lock_guard lock(rec.mu);
    return rec.checkpoints.size() >= 5;
  }));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(took, 5 * 0.040);  // (a lower bound: a loaded machine only adds)
  {
    std::lock_guard lock(mu);
    ASSERT_GE(cpu_seen.size(), 5u);
    for (auto cpu : cpu_seen) EXPECT_LT(cpu, std::chrono::milliseconds(40)) << "the CPU time, not the sleep";
  }
  runner.Halt();
  runner.Join();
  // A node slow enough to sleep a minute per iteration still halts at once.
  Recorder slow_rec;
  RunnerOptions slow;
  slow.iteration_time = [](std::chrono::nanoseconds) { return std::chrono::nanoseconds(std::chrono::seconds(60)); };
  TaskRunner sleeper(std::make_unique<CountingTask>(5), {}, slow, slow_rec.Callbacks());
  sleeper.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto halted = std::chrono::steady_clock::now();
  sleeper.Halt();
  sleeper.Join();
  EXPECT_LT(std::chrono::steady_clock::now() - halted, std::chrono::seconds(30));
}

TEST(TaskRunnerTest, ARestoredTaskCountsOnFromItsCheckpoint) {
  Recorder rec;
  RunnerOptions options;
  options.checkpoint_every = 10;
  options.start_iteration = 400;
  uint64_t last = 0;
  RunnerCallbacks cb = rec.Callbacks();
  cb.finished = [&](Result<std::string>, uint64_t iterations) {
    std::lock_guard lock(rec.mu);
    last = iterations;
    rec.done = true;
  };
  TaskRunner runner(std::make_unique<CountingTask>(25), {}, options, cb);
  runner.Start();
  ASSERT_TRUE(testing::WaitUntil([&] {
    std::lock_guard lock(rec.mu);
    return rec.checkpoints.size() >= 2;
  }));
  runner.Halt();
  runner.Join();
  std::lock_guard lock(rec.mu);
  EXPECT_EQ(last, 425u);
  ASSERT_EQ(rec.checkpoints.size(), 2u);
  EXPECT_EQ(rec.checkpoints[0].first, 410u);
  EXPECT_EQ(rec.checkpoints[1].first, 420u);
}

TEST(TaskRunnerTest, CheckpointsByTimeAndNeverWithoutACallback) {
  Recorder rec;
  RunnerOptions options;
  options.checkpoint_period = std::chrono::milliseconds(1);
  // Long enough to pass the period at least once, on any machine.
  TaskRunner runner(std::make_unique<CountingTask>(2000000), {}, options, rec.Callbacks());
  runner.Start();
  ASSERT_TRUE(testing::WaitUntil([&] {
    std::lock_guard lock(rec.mu);
    return !rec.checkpoints.empty();
  }));
  runner.Halt();
  runner.Join();
  std::lock_guard lock(rec.mu);
  for (const auto& [iteration, state] : rec.checkpoints) EXPECT_EQ(state, std::to_string(iteration));

  Recorder none;
  RunnerCallbacks cb = none.Callbacks();
  cb.checkpoint = nullptr;
  options.checkpoint_every = 1;
  TaskRunner quiet(std::make_unique<CountingTask>(50), {}, options, cb);
  quiet.Start();
  quiet.Halt();
  quiet.Join();  // no callback, no crash
}

}  // namespace
}  // namespace aiac::runtime
