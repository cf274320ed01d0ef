// An asynchronous two-level CG task that solved since it applied the last coarse round leaves
// its next iteration to that round while the round's missing contributions are coming
// (params.coarse_wait), and solves as soon as the last one comes; with coarse_wait = 0 it does
// not wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/cg/cg_app.h"
#include "apps/cg/matrix_market.h"
#include "support/test_support.h"
#include "unit/cg/job_params.h"

namespace aiac::cg {
namespace {

constexpr uint32_t kTasks = 3;

struct Tasks {
  CgApp app;
  std::vector<std::unique_ptr<app::Task>> tasks;

  // Task t iterates; true when it computed. What it sends goes to `to` only.
  bool Step(uint32_t t, const std::vector<uint32_t>& to) {
    auto did = tasks[t]->Iterate();
    EXPECT_OK(did.status());
    if (!did.ok() || !*did) return false;
    for (const app::Outgoing& out : tasks[t]->TakeOutgoing()) {
      if (std::find(to.begin(), to.end(), out.to) != to.end()) {
        EXPECT_OK(tasks[out.to]->Absorb(t, out.bytes));
      }
    }
    return true;
  }
  // Every task iterates, then gets what the others sent (a synchronous step).
  void Lockstep() {
    std::vector<std::vector<app::Outgoing>> sent(kTasks);
    for (uint32_t t = 0; t < kTasks; ++t) {
      auto did = tasks[t]->Iterate();
      ASSERT_OK(did.status());
      if (*did) sent[t] = tasks[t]->TakeOutgoing();
    }
    for (uint32_t t = 0; t < kTasks; ++t) {
      for (const app::Outgoing& out : sent[t]) ASSERT_OK(tasks[out.to]->Absorb(t, out.bytes));
    }
  }
};

std::unique_ptr<Tasks> MakeTasks(const aiac::testing::TempDir& dir, const std::string& wait) {
  auto made = std::make_unique<Tasks>();
  auto params = Params({{"matrix", "grid.mtx"},
                        {"coarse", "harmonic"},
                        {"coarse_wait", wait},
                        {"tolerance", "1e-13"},
                        {"partition", "contiguous"},
                        {"matrix_cache", "false"}},
                       kTasks, dir.path());
  auto plan = made->app.Prepare(params);
  EXPECT_OK(plan.status());
  if (!plan.ok()) return nullptr;
  for (uint32_t t = 0; t < kTasks; ++t) {
    auto task = made->app.MakeTask(params, t, plan->slices[t]);
    EXPECT_OK(task.status());
    if (!task.ok()) return nullptr;
    made->tasks.push_back(std::move(*task));
  }
  return made;
}

TEST(CoarseWaitTest, ATaskWaitsForTheRoundItContributedToWhileItsPeersWork) {
  aiac::testing::TempDir dir;
  ASSERT_OK(WriteMatrixMarketMatrix(dir / "grid.mtx", GridLaplacian(30, 30), true));
  for (const std::string wait : {"1000", "0"}) {
    SCOPED_TRACE("coarse_wait = " + wait);
    auto run = MakeTasks(dir, wait);
    ASSERT_NE(run, nullptr);
    // The coarse problem set up, rounds going; every task's contribution of this round sent.
    for (int k = 0; k < 6; ++k) run->Lockstep();
    // Tasks 0 and 1 apply the round and contribute to the next one; task 2 is slow.
    ASSERT_TRUE(run->Step(0, {1, 2}));
    ASSERT_TRUE(run->Step(1, {0, 2}));
    ASSERT_FALSE(run->tasks[0]->LocallyConverged());
    // Task 0 has new input from task 1, but the round lacks task 2's contribution.
    const bool solved = run->Step(0, {1, 2});
    EXPECT_EQ(solved, wait == "0");
    if (solved) continue;
    // Task 2's contribution completes the round: task 0 solves at once.
    ASSERT_TRUE(run->Step(2, {0, 1}));
    EXPECT_TRUE(run->Step(0, {1, 2}));
  }
}

}  // namespace
}  // namespace aiac::cg
