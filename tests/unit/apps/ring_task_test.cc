#include "apps/ring/ring_task.h"

#include <gtest/gtest.h>

#include <vector>

namespace aiac::ring {
namespace {

// Runs the ring in-process: each token is handed to the successor at once.
std::vector<RingTask> RunRing(uint32_t n, uint64_t rounds) {
  std::vector<RingTask> tasks;
  for (uint32_t i = 0; i < n; ++i) tasks.emplace_back(i, n, rounds);
  auto token = tasks[0].Start();
  uint32_t at = 0;
  while (token) {
    at = tasks[at].successor();
    token = tasks[at].OnToken(token->value, token->iteration);
  }
  return tasks;
}

TEST(RingTaskTest, TaskZeroEndsWithTasksTimesRounds) {
  for (uint32_t n : {2u, 3u, 7u}) {
    for (uint64_t rounds : {1u, 2u, 10u}) {
      auto tasks = RunRing(n, rounds);
      EXPECT_EQ(tasks[0].value(), RingTask::Expected(n, rounds));
      for (const auto& t : tasks) {
        EXPECT_TRUE(t.done());
        EXPECT_EQ(t.iterations(), rounds);
      }
    }
  }
}

TEST(RingTaskTest, DuplicateAndStaleTokensAreDropped) {
  RingTask t(1, 3, 5);
  ASSERT_TRUE(t.OnToken(1, 1));
  EXPECT_FALSE(t.OnToken(1, 1));  // duplicate
  EXPECT_FALSE(t.OnToken(9, 3));  // from the future: not the next one
  EXPECT_EQ(t.iterations(), 1u);
  auto next = t.OnToken(4, 2);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->value, 5u);
  EXPECT_EQ(next->iteration, 2u);
}

TEST(RingTaskTest, OnlyTaskZeroStarts) {
  RingTask zero(0, 2, 1), one(1, 2, 1);
  EXPECT_TRUE(zero.Start());
  EXPECT_FALSE(one.Start());
}

}  // namespace
}  // namespace aiac::ring
