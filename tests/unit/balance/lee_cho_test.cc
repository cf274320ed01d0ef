#include "balance/lee_cho.h"

#include <gtest/gtest.h>

#include <cmath>

#include "balance/workstation_sim.h"

namespace aiac::balance {
namespace {

TEST(LeeChoTest, ExpectedTimeAndItsDeviation) {
  Workstation w{100, 2.0, 0.5};
  // Eq. (6): 2 * 2000 / (100 (1 + 0.25 / 4)) = 4000 / 106.25.
  EXPECT_NEAR(ExpectedTime(w, 2000), 4000 / 106.25, 1e-12);
  // Eq. (7): sqrt(T) (0.25) / sqrt(1.0625).
  const double t = ExpectedTime(w, 2000);
  EXPECT_NEAR(TimeStdDev(w, t), std::sqrt(t) * 0.25 / std::sqrt(1.0625), 1e-12);
  EXPECT_EQ(TimeStdDev(Workstation{100, 2, 0}, t), 0);
}

TEST(LeeChoTest, StaticSplits) {
  std::vector<Workstation> ws = {{100, 2, 0}, {100, 2, 2}};
  // Same N: S_M splits evenly, S_P gives more to the varying one (section 4.1's example).
  auto m = SplitMeans(ws, 1000);
  EXPECT_NEAR(m[0], 500, 1e-9);
  auto p = SplitProposed(ws, 1000);
  // T_1 ∝ 2 / 1, T_2 ∝ 2 / 2: X_2 = 2 X_1.
  EXPECT_NEAR(p[0], 1000.0 / 3, 1e-9);
  EXPECT_NEAR(p[1], 2000.0 / 3, 1e-9);
  EXPECT_NEAR(ExpectedTime(ws[0], p[0]), ExpectedTime(ws[1], p[1]), 1e-9)
      << "S_P equalises the times";
  EXPECT_EQ(SplitEven(ws, 1000), (std::vector<double>{500, 500}));
}

TEST(LeeChoTest, CheckingPointRedistributesWhenTheGainBeatsTheThreshold) {
  std::vector<Workstation> ws = {{100, 2, 0}, {50, 1, 0}};  // the same speed: mu / N = 50
  auto step = CheckingPoint(ws, {300, 100}, 1.0, 0.5, 0.0);
  EXPECT_NEAR(step.t_rem[0], 6, 1e-12);
  EXPECT_NEAR(step.t_rem[1], 2, 1e-12);
  EXPECT_NEAR(step.t_after, 4, 1e-12);  // 400 items at 100 per interval in total
  EXPECT_NEAR(step.gain, 6 - 4 - 0.5, 1e-12);
  EXPECT_TRUE(step.redistribute);
  EXPECT_NEAR(step.new_remaining[0], 200, 1e-9);
  EXPECT_NEAR(step.t_check, 4, 1e-12);  // sigma_n = 0: no margin
  auto keep = CheckingPoint(ws, {300, 100}, 1.0, 0.5, 2.0);
  EXPECT_FALSE(keep.redistribute);
  EXPECT_EQ(keep.new_remaining, (std::vector<double>{300, 100}));
  EXPECT_NEAR(keep.t_check, 2, 1e-12);  // min of T_rem when not redistributing
  // With variation, the next check comes h sigma_t earlier.
  std::vector<Workstation> varying = {{100, 2, 1}, {100, 2, 1}};
  auto v = CheckingPoint(varying, {100, 100}, 1.0, 0, 0);
  const double t = v.t_after;
  EXPECT_NEAR(v.t_check, t - TimeStdDev(varying[0], t), 1e-12);
}

TEST(LeeChoTest, RejectsBadWorkstations) {
  EXPECT_FALSE(CheckWorkstations({}).ok());
  EXPECT_EQ(CheckWorkstations({{0, 1, 0}}).message(), "workstation 0: mu must be positive");
  EXPECT_EQ(CheckWorkstations({{1, 0, 0}}).message(), "workstation 0: N must be positive");
  EXPECT_EQ(CheckWorkstations({{1, 1, -1}}).message(),
            "workstation 0: sigma_n must not be negative");
}

TEST(WorkstationSimTest, ProposedSplitBeatsMeansOnlyWhenVariationsDiffer) {
  // Two workstations with about the same mean load; the second's arrivals come in bursts.
  std::vector<BackgroundLoad> loads = {{1.0, 0.5, 0.05, 1.0, 0.1}, {1.0, 0.5, 1.2, 1.0, 0.1}};
  std::vector<Workstation> measured;
  for (size_t i = 0; i < loads.size(); ++i) measured.push_back(MeasureRunQueue(loads[i], 99 + i));
  EXPECT_GT(measured[1].sigma_n, 1.5 * measured[0].sigma_n);
  const double x = 400;
  const auto sp = SplitProposed(measured, x), sm = SplitMeans(measured, x);
  double t_sp = 0, t_sm = 0;
  const int seeds = 60;
  for (int seed = 1; seed <= seeds; ++seed) {
    t_sp += SimulateTargetJob(loads, sp, seed);
    t_sm += SimulateTargetJob(loads, sm, seed);
  }
  std::printf(
      "mean target-job time over %d seeds: S_P %.1f, S_M %.1f intervals (S_M / S_P = %.3f)\n",
      seeds, t_sp / seeds, t_sm / seeds, t_sm / t_sp);
  EXPECT_LT(t_sp, t_sm);
}

}  // namespace
}  // namespace aiac::balance
