// The balancing loop's measures: speeds from progress reports, checking points, and what the
// summary reports.
#include "spawner/live_balancing.h"

#include <gtest/gtest.h>

#include <cmath>

namespace aiac::spawner {
namespace {

using balance::BalanceMode;

// Task t reports at `at` having done rate x at work units, with `left` to do.
void Report(LiveBalancing& b, size_t t, double at, double rate, double left, uint64_t moves = 0) {
  b.OnReport(t, {at, 1, rate * at, left, 100, moves, 1, 0});
}

TEST(LiveBalancingTest, SpeedsComeFromTheWorkDoneOverTheWindow) {
  LiveBalancing b(BalanceMode::kProposed, 2, {}, 2);
  EXPECT_FALSE(b.movable());
  for (double at = 0; at <= 4; at += 0.25) {
    Report(b, 0, at, 1000, 1e6);
    Report(b, 1, at, 250, 1e6);
  }
  EXPECT_TRUE(b.movable());
  EXPECT_NEAR(b.rate(0), 1000, 1e-6);
  EXPECT_NEAR(b.rate(1), 250, 1e-6);
  // Restored on a new daemon: its work counts from 0 again, its speed is measured anew.
  b.OnReport(1, {4.25, 1, 10, 1e6, 100, 0, 1, 0});
  b.OnReport(1, {5.0, 2, 10 + 500 * 0.75, 1e6, 100, 0, 1, 0});
  EXPECT_NEAR(b.rate(1), 500, 1e-6);
  // An idle task's speed stays the last one measured.
  b.OnReport(0, {5.0, 9, 5000, 0, 100, 0, 1, 0});
  EXPECT_NEAR(b.rate(0), 1000, 1e-6);
}

TEST(LiveBalancingTest, IterationsLongerThanTheReportPeriodAreMeasuredWhole) {
  // Task 0 ends an iteration of 1500 units every 1.5 s; task 1 one of 2000 every 4 s (longer
  // than the window): reports every 0.25 s see its work done move in steps.
  LiveBalancing b(BalanceMode::kProposed, 2, {}, 3);
  for (int k = 0; k <= 48; ++k) {
    const double at = 0.25 * k;
    b.OnReport(0, {at, 1, 1500 * std::floor(at / 1.5), 1e6, 10, 0, 1, 0});
    b.OnReport(1, {at, 1, 2000 * std::floor(at / 4), 1e6, 10, 0, 1, 0});
  }
  EXPECT_NEAR(b.rate(0), 1000, 1e-6);
  EXPECT_NEAR(b.rate(1), 500, 1e-6);
}

TEST(LiveBalancingTest, ASlowTaskGivesWorkToAFastOneAndTheGainIsReported) {
  LiveBalancing b(BalanceMode::kProposed, 2);
  for (double at = 0; at <= 3; at += 0.25) {
    Report(b, 0, at, 1000, 20000);
    Report(b, 1, at, 250, 20000);
  }
  const auto moves = b.Check(3);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from, 1u);
  EXPECT_EQ(moves[0].to, 0u);
  EXPECT_NEAR(moves[0].work, 12000, 1);  // 40000 split 4:1 -> 32000 / 8000
  EXPECT_EQ(b.stats().checks, 1u);
  EXPECT_EQ(b.stats().redistributions, 1u);
  EXPECT_GT(b.stats().predicted_gain, 40);  // 80 s -> 40 s, less the overhead
  b.OnMoveDone({1, 1, 0, 12000, 30, false, ""}, 0.02);
  b.OnRedistributionDone(0.02);
  EXPECT_EQ(b.stats().items_moved, 30u);
  EXPECT_EQ(b.stats().moves, 1u);
  EXPECT_DOUBLE_EQ(b.stats().seconds_moving, 0.02);
  // The next check finds both ending together: nothing to move, the gain observed.
  for (double at = 3.25; at <= 6; at += 0.25) {
    Report(b, 0, at, 1000, 32000 - 1000 * (at - 3));
    Report(b, 1, at, 250, 8000 - 250 * (at - 3));
  }
  EXPECT_TRUE(b.Check(6).empty());
  EXPECT_NEAR(b.stats().observed_gain, 80 - (3 + 29), 0.5);
}

TEST(LiveBalancingTest, NothingMovesUntilEveryTaskHasASpeedOrInModeOff) {
  LiveBalancing b(BalanceMode::kProposed, 2);
  Report(b, 0, 0, 1000, 20000);
  Report(b, 1, 0, 250, 20000);
  EXPECT_TRUE(b.Check(0).empty());  // one report each: no speed yet
  EXPECT_EQ(b.stats().checks, 0u);
  LiveBalancing off(BalanceMode::kOff, 2);
  for (double at = 0; at <= 3; at += 0.25) {
    Report(off, 0, at, 1000, 20000);
    Report(off, 1, at, 250, 20000);
  }
  EXPECT_TRUE(off.Check(3).empty());
  EXPECT_EQ(off.stats().mode, "off");
}

}  // namespace
}  // namespace aiac::spawner
