#include "redistribution/ring_moves.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <random>

#include "redistribution/ring.h"

namespace aiac::redistribution {
namespace {

int64_t HopsOf(const std::vector<int64_t>& f) {
  int64_t sum = 0;
  for (int64_t x : f) sum += std::llabs(x);
  return sum;
}

// Replays the moves wave by wave: each source gives only what it held at its wave's start
// (keeping one item), moves join neighbours, and every task ends at items - surplus.
void ExpectValidMoves(const RingMovesInput& in, const RingMoves& m) {
  const size_t n = in.items.size();
  std::vector<int64_t> held = in.items;
  size_t k = 0;
  for (int wave = 0; k < m.moves.size(); ++wave) {
    std::vector<int64_t> left = held;
    for (; k < m.moves.size() && m.moves[k].wave == wave; ++k) {
      const RingMove& mv = m.moves[k];
      EXPECT_TRUE(mv.to == (mv.from + 1) % n || mv.from == (mv.to + 1) % n)
          << mv.from << "->" << mv.to;
      EXPECT_GT(mv.items, 0);
      left[mv.from] -= mv.items;
      EXPECT_GE(left[mv.from], 1) << "task " << mv.from << " gives more than it holds in wave "
                                  << wave;
    }
    for (size_t j = 0; j < k; ++j) {
      if (m.moves[j].wave != wave) continue;
      held[m.moves[j].from] -= m.moves[j].items;
      held[m.moves[j].to] += m.moves[j].items;
    }
    ASSERT_LT(wave, static_cast<int>(n) + 1) << "waves do not progress";
  }
  for (size_t t = 0; t < n; ++t) EXPECT_EQ(held[t], in.items[t] - in.surplus[t]) << "task " << t;
}

TEST(RingMovesTest, NearestFlowsMoveTheFewestItemHops) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 7);
    std::vector<int64_t> delta(static_cast<size_t>(n));
    int64_t sum = 0;
    for (int i = 0; i + 1 < n; ++i)
      sum += delta[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % 41) - 20;
    delta.back() = -sum;
    const std::vector<int64_t> f = NearestFlows(delta);
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(f[static_cast<size_t>(i)] - f[static_cast<size_t>((i + n - 1) % n)],
                delta[static_cast<size_t>(i)]);
    int64_t best = HopsOf(f);
    for (int64_t x = -200; x <= 200; ++x) best = std::min(best, HopsOf(NetFlows(delta, x)));
    EXPECT_EQ(HopsOf(f), best) << "trial " << trial;
  }
}

TEST(RingMovesTest, TheOptimalPlanGoesRoundASlowLinkWhereTheNearestCrossesIt) {
  // Task 0 has 40 items too many, its neighbours 1 and 5 lack 20 each; the link 0 - 1 is a
  // hundred times slower than the others.
  RingMovesInput in;
  in.items = {100, 60, 80, 80, 80, 60};
  in.surplus = {40, -20, 0, 0, 0, -20};
  in.c_next = {1.0, 0.01, 0.01, 0.01, 0.01, 0.01};
  in.c_prev = {0.01, 1.0, 0.01, 0.01, 0.01, 0.01};
  auto nearest = PlanRingMoves(in, RingPlanner::kNearest);
  auto ring = PlanRingMoves(in, RingPlanner::kOptimal);
  ASSERT_TRUE(nearest.ok()) << nearest.status().message();
  ASSERT_TRUE(ring.ok()) << ring.status().message();
  EXPECT_EQ(nearest->flows, (std::vector<int64_t>{20, 0, 0, 0, 0, -20}));
  // One port: task 0 sends 20 items over the slow link and 20 over the fast one, one after the
  // other.
  EXPECT_NEAR(nearest->planned_time, 20 * 1.0 + 20 * 0.01, 1e-9);
  EXPECT_EQ(ring->ring_case, "bi-het");
  EXPECT_LT(ring->flows[0], 20);
  EXPECT_LT(ring->planned_time, nearest->planned_time / 10);
  EXPECT_GE(ring->planned_time, ring->lower_bound - 1e-9);
  ExpectValidMoves(in, *nearest);
  ExpectValidMoves(in, *ring);
}

TEST(RingMovesTest, ItemsPassedOnGoInALaterWave) {
  RingMovesInput in;
  in.items = {10, 2, 2, 2};
  in.surplus = {6, 0, -3, -3};
  in.c_next = in.c_prev = {1, 1, 1, 1};
  auto m = PlanRingMoves(in, RingPlanner::kNearest);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const std::vector<RingMove> expected{{0, 1, 3, 0}, {0, 3, 3, 0}, {1, 2, 3, 1}};
  EXPECT_EQ(m->moves, expected);
}

TEST(RingMovesTest, EveryPlanEndsAtTheTargetsAndTheOptimalIsNeverSlowerOnLightInstances) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> cost(0.001, 0.1);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 2 + rng() % 7;
    RingMovesInput in;
    int64_t sum = 0, moved = 0;
    for (size_t i = 0; i < n; ++i) {
      in.surplus.push_back(i + 1 < n ? static_cast<int64_t>(rng() % 31) - 15 : -sum);
      if (i + 1 < n) sum += in.surplus.back();
      moved += std::llabs(in.surplus.back());
    }
    // Each task holds more than all that moves: no task sends more than it holds (light).
    for (size_t i = 0; i < n; ++i) in.items.push_back(moved + 1 + static_cast<int64_t>(rng() % 50));
    const bool homogeneous = trial % 3 == 0;
    for (size_t i = 0; i < n; ++i) {
      in.c_next.push_back(homogeneous ? 0.01 : cost(rng));
      in.c_prev.push_back(homogeneous ? 0.01 : cost(rng));
    }
    auto nearest = PlanRingMoves(in, RingPlanner::kNearest);
    auto ring = PlanRingMoves(in, RingPlanner::kOptimal);
    ASSERT_TRUE(nearest.ok()) << nearest.status().message();
    ASSERT_TRUE(ring.ok()) << ring.status().message();
    ExpectValidMoves(in, *nearest);
    ExpectValidMoves(in, *ring);
    EXPECT_LE(ring->planned_time, nearest->planned_time + 1e-9) << "trial " << trial;
    EXPECT_GE(nearest->planned_time, ring->lower_bound - 1e-9);
  }
}

TEST(RingMovesTest, APureCirculationIsTakenOut) {
  const std::vector<Transfer> round{{0, 1, 5, 0, 1}, {1, 2, 7, 0, 1}, {2, 0, 5, 0, 1}};
  EXPECT_EQ(FlowsOfTransfers(3, round), (std::vector<int64_t>{0, 2, 0}));
  const std::vector<Transfer> back{{1, 0, 4, 0, 1}, {2, 1, 4, 0, 1}, {0, 2, 6, 0, 1}};
  EXPECT_EQ(FlowsOfTransfers(3, back), (std::vector<int64_t>{0, 0, -2}));
}

TEST(RingMovesTest, NothingToMoveMeansNoMove) {
  RingMovesInput in;
  in.items = {5, 5, 5};
  in.surplus = {0, 0, 0};
  in.c_next = in.c_prev = {1, 1, 1};
  auto m = PlanRingMoves(in, RingPlanner::kOptimal);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->moves.empty());
  EXPECT_EQ(m->planned_time, 0);
}

TEST(RingMovesTest, BadInputIsNamed) {
  RingMovesInput in;
  in.items = {5, 5, 5};
  in.surplus = {5, -5, 0};
  in.c_next = in.c_prev = {1, 1, 1};
  EXPECT_NE(
      PlanRingMoves(in, RingPlanner::kOptimal).status().message().find("task 0 would hold no item"),
      std::string::npos);
  in.surplus = {1, 0, 0};
  EXPECT_NE(PlanRingMoves(in, RingPlanner::kNearest).status().message().find("sum to 0"),
            std::string::npos);
  in.surplus = {1, -1, 0};
  in.c_prev[2] = 0;
  EXPECT_NE(PlanRingMoves(in, RingPlanner::kNearest).status().message().find("positive"),
            std::string::npos);
  in.c_prev = {1, 1};
  EXPECT_NE(PlanRingMoves(in, RingPlanner::kNearest).status().message().find("one entry per task"),
            std::string::npos);
  in.items = {5};
  EXPECT_NE(PlanRingMoves(in, RingPlanner::kNearest).status().message().find("at least 2"),
            std::string::npos);
}

}  // namespace
}  // namespace aiac::redistribution
