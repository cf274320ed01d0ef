// The balancing loop's measures: speeds from progress reports, checking points, and what the
// summary reports.
#include "spawner/live_balancing.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// A task of an asynchronous job that spends half its time waiting for its neighbours' values
// runs at the speed its host gives it while it computes, not at half of it.
TEST(LiveBalancingTest, SpeedsCountTheTimeTasksComputeNotTheTimeTheyWait) {
  LiveBalancing b(BalanceMode::kProposed, 2, {}, 2);
  for (double at = 0.25; at <= 4; at += 0.25) {
    b.OnReport(0, {at, 1, 1000 * at, 1e6, 100, 0, 1, 0, at});     // always computing
    b.OnReport(1, {at, 1, 500 * at, 1e6, 100, 0, 1, 0, at / 2});  // computing half the time
  }
  EXPECT_NEAR(b.rate(0), 1000, 1e-6);
  EXPECT_NEAR(b.rate(1), 1000, 1e-6);
  // Restored on a new daemon, with its work done from the checkpoint but its time from 0.
  b.OnReport(1, {4.25, 1, 2000, 1e6, 100, 0, 1, 0, 0.1});
  b.OnReport(1, {5.0, 2, 2000 + 250, 1e6, 100, 0, 1, 0, 0.6});
  EXPECT_NEAR(b.rate(1), 500, 1e-6);
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

// Six tasks, 100 items and 20000 work units each, in three clusters: cluster 0 (tasks 0, 1)
// twice as slow as the rest. Their excess crosses only as the channel plan carries it, and
// every task ends at eq. 9's target.
TEST(LiveBalancingTest, MovesBetweenClustersFollowTheChannelPlan) {
  for (auto planner :
       {redistribution::ChannelPlanner::kDistPM, redistribution::ChannelPlanner::kGreedy}) {
    LiveBalancing b(BalanceMode::kProposed, 6);
    ClusterView view;
    view.cluster = {0, 0, 1, 1, 2, 2};
    view.latency = {{0, 0.01, 0.05}, {0.01, 0, 0.01}, {0.05, 0.01, 0}};
    view.seconds_per_byte = {{0, 1e-6, 4e-6}, {1e-6, 0, 1e-6}, {4e-6, 1e-6, 0}};
    view.planner = planner;
    b.SetClusters(view);
    for (double at = 0; at <= 3; at += 0.25) {
      for (size_t t = 0; t < 6; ++t) Report(b, t, at, t < 2 ? 500 : 1000, 20000);
    }
    const auto moves = b.Check(3);
    ASSERT_FALSE(moves.empty());
    std::vector<double> work(6, 20000);
    double to1 = 0, to2 = 0;
    for (const auto& m : moves) {
      EXPECT_LT(m.from, 2u) << "only the slow cluster gives";
      EXPECT_GE(m.to, 2u);
      work[m.from] -= m.work;
      work[m.to] += m.work;
      (m.to < 4 ? to1 : to2) += m.work;
    }
    // Eq. 9: 120000 units split 1:1:2:2:2:2 -> 12000 for the slow tasks, 24000 for the others,
    // to within an item (200 units).
    for (size_t t = 0; t < 6; ++t) EXPECT_NEAR(work[t], t < 2 ? 12000 : 24000, 200) << "task " << t;
    ASSERT_FALSE(b.channels().empty());
    int64_t across = 0;
    for (const auto& f : b.channels()) {
      EXPECT_EQ(f.from, 0);
      across += f.amount;
    }
    EXPECT_EQ(across, 80);  // 16000 units at 200 per item
    // Each fast cluster lacks 40 items: the channels' amounts are forced here.
    EXPECT_NEAR(to1, 8000, 1e-6);
    EXPECT_NEAR(to2, 8000, 1e-6);
  }
}

// Tasks on a ring (--migration ring|nearest): task 0 is twice as slow as the rest, and its link
// to task 1 crosses a slow channel while its link to task 5 does not. Both planners move items
// between neighbours only and reach eq. 9's targets; the ring paper's plan sends less over the
// slow link than the nearest-neighbour shuffle, and its planned time is reported.
TEST(LiveBalancingTest, RingMovesJoinNeighboursAndTheOptimalPlanSparesTheSlowLink) {
  std::vector<int64_t> over_slow_link;
  for (auto planner :
       {redistribution::RingPlanner::kOptimal, redistribution::RingPlanner::kNearest}) {
    LiveBalancing b(BalanceMode::kProposed, 6);
    ClusterView view;
    view.cluster = {0, 1, 1, 2, 2, 2};
    view.latency.assign(3, std::vector<double>(3, 0.001));
    view.seconds_per_byte = {{1e-8, 1e-5, 1e-8}, {1e-5, 1e-8, 1e-8}, {1e-8, 1e-8, 1e-8}};
    view.ring = planner;
    b.SetClusters(view);
    for (double at = 0; at <= 3; at += 0.25) {
      for (size_t t = 0; t < 6; ++t) Report(b, t, at, t == 0 ? 500 : 1000, 20000);
    }
    const auto moves = b.Check(3);
    ASSERT_FALSE(moves.empty());
    ASSERT_TRUE(b.ring_plan().has_value());
    EXPECT_EQ(b.ring_plan()->ring_case,
              planner == redistribution::RingPlanner::kOptimal ? "bi-het" : "nearest");
    std::vector<double> work(6, 20000);
    for (const auto& m : moves) {
      EXPECT_TRUE((m.from + 1) % 6 == m.to || (m.to + 1) % 6 == m.from) << m.from << "->" << m.to;
      work[m.from] -= m.work;
      work[m.to] += m.work;
    }
    // Eq. 9: 120000 units split 1:2:2:2:2:2, to within an item (200 units) per task.
    for (size_t t = 0; t < 6; ++t)
      EXPECT_NEAR(work[t], t == 0 ? 120000.0 / 11 : 240000.0 / 11, 200) << "task " << t;
    over_slow_link.push_back(std::llabs(b.ring_plan()->flows[0]));
    for (const auto& m : moves) {
      const auto items = static_cast<uint64_t>(std::llround(m.work / 200));
      b.OnMoveDone({1, m.from, m.to, m.work, items, 64 * items}, 0.1);
    }
    b.OnRedistributionDone(0.5);
    EXPECT_GT(b.stats().planned_seconds, 0);
    EXPECT_EQ(b.stats().seconds_moving, 0.5);
  }
  EXPECT_LT(over_slow_link[0], over_slow_link[1]);
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
  EXPECT_GT(b.stats().predicted_gain, 47);  // 80 s -> 32 s, less the overhead
  b.OnMoveDone({1, 1, 0, 12000, 30, 3000, false, ""}, 0.02);
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
  // The speeds held: what was observed is what was predicted.
  EXPECT_NEAR(b.stats().observed_gain, b.stats().predicted_gain, 0.5);
  ASSERT_TRUE(b.last_judged().has_value());
  EXPECT_EQ(b.last_judged()->redistribution, 1u);
  EXPECT_DOUBLE_EQ(b.last_judged()->observed, b.stats().observed_gain);
  b.Check(6.5);
  EXPECT_FALSE(b.last_judged().has_value());  // judged once
}

// The slow host slows down further after the moves. The gain is observed on the speeds of the
// checking point that judges it: the end had the work stayed as it was at the decision (20,000
// units on task 1 at 125 units/s: 160 s, less the 6 s since) less the end as it is (7,250 at
// 125: 58 s), 96 s; on the old speeds the expected end before the moves, less the time since and
// the end now, would say 16 s, and a slowdown that made the moves pay more would have looked
// like a move that barely paid.
TEST(LiveBalancingTest, AGainIsObservedOnTheSpeedsOfTheCheckThatJudgesIt) {
  LiveBalancing b(BalanceMode::kMeans, 2);
  for (double at = 0; at <= 3; at += 0.25) {
    Report(b, 0, at, 1000, 20000);
    Report(b, 1, at, 250, 20000);
  }
  ASSERT_EQ(b.Check(3).size(), 1u);
  b.OnMoveDone({1, 1, 0, 12000, 30, 3000, false, ""}, 0.02);
  b.OnRedistributionDone(0.02);
  for (double at = 3.25; at <= 9; at += 0.25) {
    b.OnReport(0, {at, 1, 1000 * at, 32000 - 1000 * (at - 3), 80, 1, 1, 0});
    b.OnReport(1, {at, 1, 750 + 125 * (at - 3), 8000 - 125 * (at - 3), 20, 1, 1, 0});
  }
  b.Check(9);
  ASSERT_TRUE(b.last_judged().has_value());
  EXPECT_NEAR(b.last_judged()->observed, 154 - 58, 0.5);
  EXPECT_NEAR(b.last_judged()->predicted, 48, 0.5);
}

// Two tasks at 1,000 units a second with 10,000 and 14,000 units to go: the checking point at
// 3 s moves 2,000 from task 1 to task 0, and the move takes `seconds`.
void MoveTheSurplusAt3(LiveBalancing& b, double seconds) {
  for (double at = 0; at <= 3; at += 0.25) {
    Report(b, 0, at, 1000, 10000);
    Report(b, 1, at, 1000, 14000);
  }
  const auto moves = b.Check(3);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from, 1u);
  EXPECT_NEAR(moves[0].work, 2000, 1);
  b.OnMoveDone({1, 1, 0, 2000, 20, 2000, false, ""}, seconds);
  b.OnRedistributionDone(seconds);
}

// The slow host's owner comes back a second after a small move: its speed falls to a quarter.
// The move's gain is what the 2,000 units it gave cost at the new speed (8 s), not what the
// whole interval at that speed would make of the work it had at the decision (11 s: the second
// it still ran at full speed charged to the move).
TEST(LiveBalancingTest, ASpeedThatStepsAfterTheDecisionIsWeighedFromWhenItStepped) {
  LiveBalancing b(BalanceMode::kMeans, 2);
  MoveTheSurplusAt3(b, 0);
  EXPECT_NEAR(b.stats().predicted_gain, 2, 0.1);  // 14 s -> 12 s, less the overhead (0.05 s)
  for (double at = 3.25; at <= 9; at += 0.25) {
    const double done1 = 3000 + 1000 * std::min(at - 3, 1.0) + 250 * std::max(0.0, at - 4);
    b.OnReport(0, {at, 1, 1000 * at, 12000 - 1000 * (at - 3), 120, 1, 1, 0});
    b.OnReport(1, {at, 1, done1, 12000 - (done1 - 3000), 80, 1, 1, 0});
  }
  EXPECT_NEAR(b.rate(1), 250, 1);
  b.Check(9);
  ASSERT_TRUE(b.last_judged().has_value());
  // Had it stayed: 14,000 less the 2,250 done, at 250 a second, 47 s; as it is, 9,750, 39 s.
  EXPECT_NEAR(b.last_judged()->observed, 47 - 39, 0.1);
}

// The moves held both their tasks: had nothing moved, they would have worked meanwhile, so the
// time they took is a cost (counted in full for both ends, an upper bound).
TEST(LiveBalancingTest, TheTimeMovesHoldTheTasksIsACost) {
  LiveBalancing b(BalanceMode::kMeans, 2);
  MoveTheSurplusAt3(b, 0.5);
  // Both held the first half second, then on at the same speeds.
  for (double at = 3.25; at <= 6; at += 0.25) {
    const double worked = std::max(0.0, at - 3.5) * 1000;
    b.OnReport(0, {at, 1, 3000 + worked, 12000 - worked, 120, 1, 1, 0});
    b.OnReport(1, {at, 1, 3000 + worked, 12000 - worked, 80, 1, 1, 0});
  }
  b.Check(6);
  ASSERT_TRUE(b.last_judged().has_value());
  // Had it stayed: 14,000 less the 2,500 done and the 500 it would have done, 11 s; as it is,
  // 9.5 s: 1.5 s, the 2 s predicted less the half second the move held the run.
  EXPECT_NEAR(b.last_judged()->observed, 1.5, 0.1);
}

// A host that slows down by more than kSpeedChange brings the next checking point forward, not
// before min_check_s after the last one; small drifts leave it where eq. (12) put it.
TEST(LiveBalancingTest, ASpeedThatChangesBringsTheNextCheckForward) {
  balance::BalancerOptions options;
  options.max_check_s = 5;
  LiveBalancing b(BalanceMode::kProposed, 2, options);
  for (double at = 0; at <= 3; at += 0.25) {
    Report(b, 0, at, 1000, 1e6);
    Report(b, 1, at, 1000, 1e6);
  }
  EXPECT_TRUE(b.Check(3).empty());
  EXPECT_DOUBLE_EQ(b.next_check_s(), 8);
  // 10 % slower over the window: no change.
  for (double at = 3.25; at <= 6; at += 0.25) {
    b.OnReport(0, {at, 1, 1000 * at, 1e6, 100, 0, 1, 0});
    b.OnReport(1, {at, 1, 3000 + 900 * (at - 3), 1e6, 100, 0, 1, 0});
  }
  EXPECT_DOUBLE_EQ(b.next_check_s(), 8);
  // Then a quarter of the speed from 6 s: once the last second's speed is 30 % off the window's,
  // the window starts again there and the next checking point comes a second later, when the
  // speed measured is the new one alone.
  double seen_at = -1;
  double at = 6.25;
  for (; at <= 8 && seen_at < 0; at += 0.25) {
    b.OnReport(0, {at, 1, 1000 * at, 1e6, 100, 0, 1, 0});
    b.OnReport(1, {at, 1, 5700 + 250 * (at - 6), 1e6, 100, 0, 1, 0});
    if (b.next_check_s() < 8) seen_at = at;
  }
  ASSERT_GT(seen_at, 6);
  EXPECT_LE(seen_at, 7);
  EXPECT_DOUBLE_EQ(b.next_check_s(), seen_at + LiveBalancing::kRecentSpan);
  // Meanwhile its speed, measured again from there, is far from the one the last checking point
  // weighed: that does not bring the checking point forward onto a speed of less than a span.
  for (; at <= seen_at + LiveBalancing::kRecentSpan; at += 0.25) {
    b.OnReport(0, {at, 1, 1000 * at, 1e6, 100, 0, 1, 0});
    b.OnReport(1, {at, 1, 5700 + 250 * (at - 6), 1e6, 100, 0, 1, 0});
    EXPECT_DOUBLE_EQ(b.next_check_s(), seen_at + LiveBalancing::kRecentSpan) << at;
  }
  EXPECT_NEAR(b.rate(1), 250, 1);
  EXPECT_FALSE(b.Check(b.next_check_s()).empty());
}

// Along a chain a task's remaining work is its items x the slowest task's iterations to go
// (Remaining); the gain is observed on the work as the decision weighed it.
TEST(LiveBalancingTest, AlongAChainTheGainIsWeighedAtTheDecisionsHorizon) {
  balance::BalancerOptions chain;
  chain.chain = true;
  LiveBalancing b(BalanceMode::kMeans, 2, chain);
  // 100 items each, 100 iterations to go (10,000 units); task 0 does 400 units a second, task 1
  // 100.
  for (double at = 0; at <= 3; at += 0.25) {
    b.OnReport(0, {at, 1, 400 * at, 10000, 100, 0, 1, 0});
    b.OnReport(1, {at, 1, 100 * at, 10000, 100, 0, 1, 0});
  }
  const auto moves = b.Check(3);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from, 1u);
  EXPECT_NEAR(moves[0].work, 6000, 100);  // 60 items of 100 units: 160 : 40
  b.OnMoveDone({1, 1, 0, moves[0].work, 60, 6000, false, ""}, 0.02);
  b.OnRedistributionDone(0.02);
  // 3 s later, 94 iterations to go on every task, at the same speeds.
  for (double at = 3.25; at <= 6; at += 0.25) {
    b.OnReport(0, {at, 1, 1200 + 400 * (at - 3), 160 * 94.0, 160, 1, 1, 0});
    b.OnReport(1, {at, 1, 300 + 100 * (at - 3), 40 * 94.0, 40, 1, 1, 0});
  }
  b.Check(6);
  ASSERT_TRUE(b.last_judged().has_value());
  // Had the 60 items stayed: the 10,000 units task 1 had then less the 300 it did since, at the
  // speed it computed at since (300 units in the 2.98 s the move did not hold it: its speed now
  // was measured across the move), 96.4 s; as it is, 160 rows x 94 iterations at 400 a second,
  // 37.6 s. (Weighed at today's horizon, the rows it gave would say less: the horizon of a CG
  // task is estimated again at every report, and near the end of a run it says nothing of what
  // the rows would have cost.)
  EXPECT_NEAR(b.last_judged()->observed, 9700 / (300 / 2.98) - 37.6, 0.1);
}

// The slow task gives most of its rows away, computes them in a second and then waits, locally
// converged. Had nothing moved it would have computed all along: the gain is what was predicted,
// not what the work it did while it waited would make of it (counting only the work done, the
// slow task kept, had nothing moved, nearly all its work to go: 15 s where 12 s were predicted).
TEST(LiveBalancingTest, ATaskThatWaitsAfterGivingItsWorkAwayIsNotChargedTheWait) {
  balance::BalancerOptions chain;
  chain.chain = true;
  LiveBalancing b(BalanceMode::kMeans, 2, chain);
  // 100 items each, 20 iterations to go; task 0 does 400 units a second, task 1 100: 5 s and 20 s.
  for (double at = 0.25; at <= 3; at += 0.25) {
    b.OnReport(0, {at, 1, 400 * at, 2000, 100, 0, 1, 0, at, false});
    b.OnReport(1, {at, 1, 100 * at, 2000, 100, 0, 1, 0, at, false});
  }
  const auto moves = b.Check(3);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from, 1u);
  EXPECT_NEAR(moves[0].work, 1200, 20);  // 60 items: 160 : 40, 8 s each
  b.OnMoveDone({1, 1, 0, moves[0].work, 60, 1200, false, ""}, 0.02);
  b.OnRedistributionDone(0.02);
  EXPECT_NEAR(b.stats().predicted_gain, 12, 0.1);
  // Task 0 computes on at its speed; task 1 for one second, then waits. 4 s after the decision
  // task 0 has 10 iterations of its 160 items to go (4 s), task 1 is converged.
  for (double at = 3.25; at <= 7; at += 0.25) {
    const double busy1 = 3 + std::min(1.0, at - 3);
    b.OnReport(0, {at, 1, 400 * at, 1600 + 400 * (7 - at), 160, 1, 1, 0, at, false});
    b.OnReport(1, {at, 1, 100 * busy1, 400, 40, 1, 1, 0, busy1, at > 4});
  }
  b.Check(7);
  ASSERT_TRUE(b.last_judged().has_value());
  // Had nothing moved: task 1's 2,000 units less 4 s at 100 a second, 16 s; as it is, 4 s.
  EXPECT_NEAR(b.last_judged()->observed, 16 - 4, 0.1);
  ASSERT_EQ(b.last_judged()->speeds_since.size(), 2u);
  EXPECT_NEAR(b.last_judged()->speeds_since[1], 100, 0.1);  // over its one second computing
  EXPECT_NEAR(b.last_judged()->unmoved_ends[1], 16, 0.1);
}

// Task 0 does 1,000 units a second, task 1 250, with 20,000 units each: the checking point at
// 3 s moves 12,000 units (30 items) from task 1 to task 0, and the move ends at 5 s (both computed
// until then). The reports go on to `until`, task 1's after the move computing `after` units a
// second of its time computing, and computing `share` of the time.
void MoveEndingAt5(LiveBalancing& b, double until, double after, double share) {
  for (double at = 0; at <= 3; at += 0.25) {
    b.OnReport(0, {at, 1, 1000 * at, 20000, 100, 0, 1, 0, at, false});
    b.OnReport(1, {at, 1, 250 * at, 20000, 100, 0, 1, 0, at, false});
  }
  const auto moves = b.Check(3);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from, 1u);
  EXPECT_NEAR(moves[0].work, 12000, 1);
  for (double at = 3.25; at <= until; at += 0.25) {
    if (at == 5.25) {
      b.OnMoveDone({1, 1, 0, 12000, 30, 3000, false, ""}, 0.02);
      b.OnRedistributionDone(2);
    }
    const bool moved = at > 5;
    b.OnReport(0, {at, 1, 1000 * at, (moved ? 32000 : 20000) - 1000 * (at - 3), moved ? 130 : 100,
                   moved ? 1u : 0u, 1, 0, at, false});
    const double busy1 = moved ? 5 + share * (at - 5) : at;
    const double done1 = moved ? 1250 + after * share * (at - 5) : 250 * at;
    b.OnReport(1, {at, 1, done1, (moved ? 8000 : 20000) - (done1 - 750), moved ? 70 : 100,
                   moved ? 1u : 0u, 1, 0, busy1, false});
  }
}

// The slow task (a node held to a quarter of a core) gives most of its work away, and its
// smaller load then runs at a full core's pace between its waits (it fits in the quota's
// periods): its speed now is four times the one it had. Had nothing moved, it would have kept its
// load and its pace: its remainder is weighed at its speed since the decision, not at the speed
// of the load it has now (which would make the run without moves end sooner than the run with).
TEST(LiveBalancingTest, ATaskThatGaveWorkAwayIsNotCreditedTheSpeedOfItsSmallerLoad) {
  LiveBalancing b(BalanceMode::kMeans, 2);
  // After the move, task 1 computes a quarter of the time, at 1,000 units a second of it.
  MoveEndingAt5(b, 7, 1000, 0.25);
  EXPECT_NEAR(b.rate(1), 1000, 1);
  b.Check(7);
  ASSERT_TRUE(b.last_judged().has_value());
  // Since the decision task 1 did 1,000 units in 2.5 s computing: 400 a second. Had nothing
  // moved: 20,000 less 4 s at 400, 46 s (at 1,000 a second, 18.4 s); as it is, task 0's 28,000
  // at 1,000 a second, 28 s.
  ASSERT_EQ(b.last_judged()->speeds_since.size(), 2u);
  EXPECT_NEAR(b.last_judged()->speeds_since[1], 400, 0.1);
  EXPECT_NEAR(b.last_judged()->unmoved_ends[1], 46, 0.1);
  EXPECT_NEAR(b.last_judged()->observed, 46 - 28, 0.1);
}

// The judgment comes as the slow task's move ends, and the speed it measures now spans the move
// (its export, its block rebuilt, the checkpoints after): it says nothing of the load it had.
// Had nothing moved, its remainder is weighed at its speed since the decision.
TEST(LiveBalancingTest, ASpeedMeasuredAcrossATasksMoveIsNotItsSpeedHadNothingMoved) {
  LiveBalancing b(BalanceMode::kMeans, 2);
  // After the move, task 1 computes all the time, at 150 units a second.
  MoveEndingAt5(b, 6, 150, 1);
  EXPECT_NEAR(b.rate(1), 150, 1);  // over the last second: the move's end and after
  b.Check(6);
  ASSERT_TRUE(b.last_judged().has_value());
  // Since the decision task 1 did 650 units in 3 s: 216.7 a second. Had nothing moved: 20,000
  // less 650, at that speed, 89.3 s (at 150 a second, 129 s); as it is, its 7,350 at 150 a
  // second, 49 s.
  ASSERT_EQ(b.last_judged()->speeds_since.size(), 2u);
  EXPECT_NEAR(b.last_judged()->speeds_since[1], 650 / 3.0, 0.1);
  EXPECT_NEAR(b.last_judged()->unmoved_ends[1], 19350 / (650 / 3.0), 0.1);
  EXPECT_NEAR(b.last_judged()->observed, 19350 / (650 / 3.0) - 49, 0.1);
}

// Along a chain the horizon is the slowest task's still iterating: a task locally converged
// waits for new input, and the few iterations of its local test are not the run's while another
// has iterations to go; when every task is converged, the slowest counts again.
TEST(LiveBalancingTest, AlongAChainALocallyConvergedTaskDoesNotSetTheHorizon) {
  balance::BalancerOptions chain;
  chain.chain = true;
  LiveBalancing b(BalanceMode::kMeans, 2, chain);
  // 100 items each; task 0 does 400 units a second (0.25 s an iteration of 100 units), task 1
  // 100 (1 s). Task 1 expects 3 iterations (converged), task 0 50.
  auto report = [&](double at, bool converged0, bool converged1) {
    const double left0 = (converged0 ? 3 : 50) * 100.0, left1 = 3 * 100.0;
    b.OnReport(0, {at, 1, 400 * at, left0, 100, 0, 1, 0, -1, converged0});
    b.OnReport(1, {at, 1, 100 * at, left1, 100, 0, 1, 0, -1, converged1});
  };
  for (double at = 0.25; at <= 3; at += 0.25) report(at, false, true);
  // Task 0's 50 iterations are everyone's: task 1 ends in 50 s, task 0 in 12.5 s.
  EXPECT_NEAR(b.ExpectedEnd(), 50, 1e-6);
  report(3.25, false, false);  // task 1 iterates again: its own 3 iterations, 3 s
  EXPECT_NEAR(b.ExpectedEnd(), 3, 1e-6);
  report(3.5, true, true);  // both converged: the slowest's 3 iterations
  EXPECT_NEAR(b.ExpectedEnd(), 3, 1e-6);
}

// Until a move is timed, a move is expected to cost what setting the tasks up did (a guess, not
// scaled by a slowness its tasks had from the start): a gain that does not pay for it moves
// nothing; the first timed move replaces the guess (and is scaled: here 2.5x the median's pace).
TEST(LiveBalancingTest, UntilAMoveIsTimedAMoveCostsWhatTheSetUpDid) {
  for (const double setup : {0.0, 15.0}) {
    LiveBalancing b(BalanceMode::kProposed, 2);
    b.SetMoveCostPrior(setup);
    for (double at = 0; at <= 3; at += 0.25) {
      Report(b, 0, at, 1000, 20000);
      Report(b, 1, at, 250, 20000);
    }
    // 80 s -> 32 s: worth a move even of 15 s (and the 0.2 s threshold).
    EXPECT_FALSE(b.Check(3).empty()) << setup;
    LiveBalancing c(BalanceMode::kProposed, 2);
    c.SetMoveCostPrior(setup);
    for (double at = 0; at <= 3; at += 0.25) {
      Report(c, 0, at, 1000, 2000);
      Report(c, 1, at, 250, 2000);
    }
    // 8 s -> 3.2 s: worth a 0.05 s move, not a 15 s one.
    EXPECT_EQ(c.Check(3).empty(), setup > 0) << setup;
    // A timed move of 0.1 s replaces the guess, and a later prior does not undo it.
    c.OnMoveDone({1, 1, 0, 1, 1, 64, false, ""}, 0.1);
    c.SetMoveCostPrior(setup);
    for (double at = 3.25; at <= 6; at += 0.25) {
      Report(c, 0, at, 1000, 2000 - 1000 * (at - 3) / 4);
      Report(c, 1, at, 250, 2000 - 250 * (at - 3) / 4);
    }
    EXPECT_FALSE(c.Check(6).empty()) << setup;
  }
}

// The set-up-time guess was timed on the hosts as they were then: a task whose host slowed to a
// quarter since the first speeds were measured is expected to move at a quarter of the pace.
TEST(LiveBalancingTest, AGuessedMoveOfATaskSlowedSinceCostsAsMuchMore) {
  LiveBalancing b(BalanceMode::kProposed, 2);
  b.SetMoveCostPrior(2);
  for (double at = 0; at <= 3; at += 0.25) {
    Report(b, 0, at, 1000, 1e6);
    Report(b, 1, at, 1000, 1e6);
  }
  EXPECT_TRUE(b.Check(3).empty());  // equal speeds: the guess's rates
  // Task 1 at a quarter of the speed from 3 s.
  for (double at = 3.25; at <= 8; at += 0.25) {
    b.OnReport(0, {at, 1, 1000 * at, 1e6, 100, 0, 1, 0});
    b.OnReport(1, {at, 1, 3000 + 250 * (at - 3), 1e6, 100, 0, 1, 0});
  }
  ASSERT_NEAR(b.rate(1), 250, 1);
  EXPECT_FALSE(b.Check(8).empty());
  // One move at 2 s x the median speed (625) over task 1's (250), where it was 1x: 5 s.
  EXPECT_NEAR(b.last_decision().overhead, 2 * 2.5, 1e-9);
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

// Rows along a chain (app::JobPlan::items_in_chain): four tasks of 1000 rows, task 1 at a
// quarter of the others' speed. Each task expects another horizon of iterations of its own
// (remaining / items); the slowest's is every task's, so the faster ones, which expect more
// iterations of their own, do not hide the imbalance. Moves go between neighbours only, each in
// whole rows expressed in its source's own units.
TEST(LiveBalancingTest, RowsAlongAChainMoveBetweenNeighboursAtTheSlowestTasksHorizon) {
  balance::BalancerOptions options;
  options.chain = true;
  LiveBalancing b(BalanceMode::kMeans, 4, options);
  const double speed[4] = {4000, 1000, 4000, 4000};  // rows solved per second
  const double horizon[4] = {400, 100, 400, 400};    // iterations each expects to need
  for (double at = 0; at <= 3; at += 0.25) {
    for (size_t t = 0; t < 4; ++t)
      b.OnReport(t, {at, 1, speed[t] * at, 1000 * horizon[t], 1000, 0, 1, 0});
  }
  const auto moves = b.Check(3);
  ASSERT_EQ(moves.size(), 3u);
  // The slow task keeps 4000 / 13 = 308 rows; the rows go to both its neighbours, and task 2
  // hands some on to task 3.
  double rows_left[4] = {1000, 1000, 1000, 1000};
  for (const auto& m : moves) {
    EXPECT_TRUE(m.from + 1 == m.to || m.to + 1 == m.from) << m.from << " -> " << m.to;
    const double rows = m.work / horizon[m.from];  // the source's own units: its rows x its horizon
    EXPECT_NEAR(rows, std::round(rows), 1e-9);
    rows_left[m.from] -= rows;
    rows_left[m.to] += rows;
  }
  EXPECT_NEAR(rows_left[1], 4000.0 / 13, 1);
  EXPECT_NEAR(rows_left[0], 16000.0 / 13, 1);
  // The slow task gives first.
  EXPECT_EQ(moves[0].from, 1u);
  EXPECT_EQ(moves[1].from, 1u);
  EXPECT_EQ(b.stats().redistributions, 1u);
  // At the slow task's horizon, 100 iterations of 1 s: balanced, 100 x 308 / 4000 = 7.7 s.
  EXPECT_NEAR(b.stats().predicted_gain, 100 - 100 * (4000.0 / 13) / 1000, 1);
}

// Along a chain a redistribution's moves run in waves. A move of a later wave is made only while
// some task is not locally converged and the run is expected to last longer than the move takes:
// once the slow task has shed its rows and the run is at its end, the next waves would only hold
// it.
TEST(LiveBalancingTest, ALaterWavesMoveIsMadeOnlyWhileTheRunLastsLongerThanIt) {
  balance::BalancerOptions options;
  options.chain = true;
  LiveBalancing b(BalanceMode::kMeans, 3, options);
  // 100 rows each, 100 iterations to go; task 0 solves 100 rows a second, the others 400.
  const double speed[3] = {100, 400, 400};
  for (double at = 0.25; at <= 3; at += 0.25) {
    for (size_t t = 0; t < 3; ++t)
      b.OnReport(t, {at, 1, speed[t] * at, 10000, 100, 0, 1, 0, at, false});
  }
  const auto moves = b.Check(3);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].from, 0u);  // the slow task gives first
  EXPECT_EQ(moves[0].wave, 0);
  const balance::MoveOrder later = moves[1];
  EXPECT_EQ(later.from, 1u);
  EXPECT_EQ(later.wave, 1);
  EXPECT_TRUE(b.StillPays(later, false));  // 100 s to go
  EXPECT_FALSE(b.StillPays(later, true));  // not while the confirmation rounds run
  // The first move took 8 s, 2 s between tasks of the median speed (its slow end took 4 times
  // longer): so would the next. Then task 0 holds 33 rows, task 1 167, task 2 100, every task
  // converged with 3 iterations to go: the run ends in 3 x 167 / 400 = 1.25 s.
  b.OnMoveDone({1, 0, 1, moves[0].work, 67, 4288, false, ""}, 8);
  EXPECT_NEAR(b.MoveSeconds(later), 2, 0.01);
  const double items[3] = {33, 167, 100};
  for (double at = 11.25; at <= 12; at += 0.25) {
    for (size_t t = 0; t < 3; ++t) {
      b.OnReport(t, {at, 2, speed[t] * (at - 8), 3 * items[t], static_cast<int64_t>(items[t]), 1, 1,
                     0, at - 8, true});
    }
  }
  EXPECT_NEAR(b.ExpectedEnd(), 3 * 167.0 / 400, 0.01);
  EXPECT_FALSE(b.StillPays(later, false));
}

// Rows along a chain whose tasks sit in two clusters: the chain's case comes from the links'
// measured costs (the same cluster throughout: bi-hom; a slow channel between tasks 1 and 2:
// bi-het), and its planned time is the one-port replay of the moves over those links, at least
// the busiest link's flow x cost, counted in the summary at the items' measured size.
TEST(LiveBalancingTest, AChainsCaseAndPlannedTimeComeFromItsLinksCosts) {
  for (const bool split : {false, true}) {
    balance::BalancerOptions options;
    options.chain = true;
    LiveBalancing b(BalanceMode::kMeans, 4, options);
    ClusterView view;
    view.cluster = split ? std::vector<int>{0, 0, 1, 1} : std::vector<int>{0, 0, 0, 0};
    view.latency.assign(2, std::vector<double>(2, 0.001));
    view.seconds_per_byte = {{1e-8, 1e-6}, {1e-6, 1e-8}};
    b.SetClusters(view);
    const double speed[4] = {4000, 1000, 4000, 4000};
    for (double at = 0; at <= 3; at += 0.25) {
      for (size_t t = 0; t < 4; ++t)
        b.OnReport(t, {at, 1, speed[t] * at, 1000 * 100.0, 1000, 0, 1, 0});
    }
    const auto moves = b.Check(3);
    ASSERT_FALSE(moves.empty());
    ASSERT_TRUE(b.chain_plan().has_value());
    const auto& plan = *b.chain_plan();
    EXPECT_EQ(plan.ring_case, split ? "bi-het" : "bi-hom");
    ASSERT_EQ(plan.moves.size(), moves.size());
    int64_t over_slow_link = 0;
    for (size_t k = 0; k < moves.size(); ++k) {
      EXPECT_EQ(plan.moves[k].from, moves[k].from);
      EXPECT_EQ(plan.moves[k].items, std::llround(moves[k].work / 100));  // 100 units per row
      if (std::min(moves[k].from, moves[k].to) == 1) over_slow_link += plan.moves[k].items;
    }
    ASSERT_GT(over_slow_link, 0);
    // 64 bytes per item until a move measured them: the slow link alone takes its items x 64 us.
    const double slow = static_cast<double>(over_slow_link) * 64 * (split ? 1e-6 : 1e-8);
    EXPECT_GE(plan.lower_bound, slow * (1 - 1e-9));
    EXPECT_GE(plan.planned_time, plan.lower_bound * (1 - 1e-9));
    for (const auto& m : moves) {
      const auto items = static_cast<uint64_t>(std::llround(m.work / 100));
      b.OnMoveDone({1, m.from, m.to, m.work, items, 128 * items}, 0.1);  // rows of 128 bytes
    }
    b.OnRedistributionDone(0.5);
    EXPECT_NEAR(b.stats().planned_seconds, plan.planned_time * 2, 1e-9 + 1e-6 * plan.planned_time);
  }
}

// A resumed run's summary adds its predecessors' figures to its own (BalancingDriver::stats):
// every count and sum, while the mode, the migration and the coordinators are the run's own.
TEST(LiveBalancingTest, StatsPlusAddsEveryCountAndSumOfTheEarlierRuns) {
  BalancingStats earlier{"dp", "ring", 4, 2, 5, 1, 700, 300, 1.5, 0.5, 3.0, 2.0, 9, 11};
  BalancingStats own{"dm", "distpm", 1, 1, 2, 0, 100, 0, 0.25, 0.25, 1.0, -0.5, 3, 4};
  const BalancingStats sum = own.Plus(earlier);
  EXPECT_EQ(sum.mode, "dm");
  EXPECT_EQ(sum.migration, "distpm");
  EXPECT_EQ(sum.checks, 5u);
  EXPECT_EQ(sum.redistributions, 3u);
  EXPECT_EQ(sum.moves, 7u);
  EXPECT_EQ(sum.abandoned, 1u);
  EXPECT_EQ(sum.items_moved, 800u);
  EXPECT_EQ(sum.items_between_clusters, 300u);
  EXPECT_DOUBLE_EQ(sum.seconds_moving, 1.75);
  EXPECT_DOUBLE_EQ(sum.planned_seconds, 0.75);
  EXPECT_DOUBLE_EQ(sum.predicted_gain, 4.0);
  EXPECT_DOUBLE_EQ(sum.observed_gain, 1.5);
  EXPECT_EQ(sum.coordinators, 3u);
  EXPECT_EQ(sum.relayed_reports, 15u);
  // Nothing earlier: the run's own figures.
  const BalancingStats alone = own.Plus({});
  EXPECT_EQ(alone.moves, own.moves);
  EXPECT_EQ(alone.items_moved, own.items_moved);
}

}  // namespace
}  // namespace aiac::spawner
