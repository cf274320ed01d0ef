#include "redistribution/distpm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "core/sliding_window.h"
#include "redistribution/lp.h"

namespace aiac::redistribution {
namespace {

TEST(LpTest, SolvesASmallProgramAndReportsInfeasibility) {
  // max x + y s.t. x + 2y <= 4, 3x + y <= 6  ->  minimise -x - y; optimum at (1.6, 1.2).
  LinearProgram lp;
  const int x = lp.AddVariable(-1), y = lp.AddVariable(-1);
  lp.rows.push_back({{{x, 1}, {y, 2}}, -kInfinity, 4});
  lp.rows.push_back({{{x, 3}, {y, 1}}, -kInfinity, 6});
  auto s = Minimize(lp);
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->objective, -2.8, 1e-9);
  EXPECT_NEAR(s->x[x], 1.6, 1e-9);
  lp.rows.push_back({{{x, 1}}, 10, kInfinity});  // x >= 10 contradicts 3x + y <= 6
  EXPECT_FALSE(Minimize(lp).ok());
}

TEST(SlidingWindowMeanTest, KeepsTheNewestSamples) {
  SlidingWindowMean m(3);
  EXPECT_EQ(m.Mean(), 0);
  m.Add(3);
  EXPECT_EQ(m.Mean(), 3);
  m.Add(6);
  m.Add(9);
  EXPECT_EQ(m.Mean(), 6);
  m.Add(12);  // 3 drops out
  EXPECT_EQ(m.Mean(), 9);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_NEAR(m.StdDev(), std::sqrt(6.0), 1e-12);  // of 6, 9, 12
  SlidingWindowMean one(4);
  one.Add(5);
  EXPECT_EQ(one.StdDev(), 0);
}

MigrationInput Square(std::vector<Group> groups, double a, double b) {
  const size_t n = groups.size();
  return {std::move(groups), std::vector<std::vector<double>>(n, std::vector<double>(n, a)),
          std::vector<std::vector<double>>(n, std::vector<double>(n, b))};
}

TEST(DistPmTest, HandWorkedTwoByTwo) {
  // O = {a: +30}, U = {c: -10, d: -20}; channel a->c is 4x slower per item than a->d.
  MigrationInput in{{{"a", 130, 100}, {"b", 50, 50}, {"c", 90, 100}, {"d", 80, 100}},
                    {{0, 0, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}},
                    {{0, 0, 0.4, 0.1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}};
  ASSERT_TRUE(CheckMigrationInput(in).ok());
  auto p = PlanMigration(in);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->overloaded, (std::vector<int>{0}));
  EXPECT_EQ(p->underloaded, (std::vector<int>{2, 3}));
  // The deficits force 10 to c and 20 to d: T = max(1 + 4, 1 + 2) = 5.
  EXPECT_NEAR(p->distpm.lp_objective, 5, 1e-9);
  EXPECT_NEAR(p->distpm.makespan, 5, 1e-9);
  ASSERT_EQ(p->distpm.flows.size(), 2u);
  EXPECT_EQ(p->distpm.flows[0].amount, 10);
  EXPECT_EQ(p->greedy.makespan, p->distpm.makespan);
}

TEST(DistPmTest, LpSpreadsLoadWhereGreedyPilesItOnTheFastestChannel) {
  // o1 -> u1 is the fastest channel: greedy fills it (100 items), which leaves only the slowest
  // channel, o2 -> u2, for the other 100. The LP balances all four channels instead.
  MigrationInput in{{{"o1", 200, 100}, {"o2", 200, 100}, {"u1", 0, 100}, {"u2", 0, 100}},
                    std::vector<std::vector<double>>(4, std::vector<double>(4, 0)),
                    {{0, 0, 0.001, 0.002}, {0, 0, 0.002, 0.010}, {0, 0, 0, 0}, {0, 0, 0, 0}}};
  auto p = PlanMigration(in);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->greedy.makespan, 1.0, 1e-12);
  // delta_22 = a, delta_12 = delta_21 = 100 - a: 0.01 a = 0.002 (100 - a) at a = 50/3.
  EXPECT_NEAR(p->distpm.lp_objective, 0.5 / 3, 1e-9);
  EXPECT_LE(p->distpm.makespan, p->distpm.lp_objective + 0.010 + 1e-12);
  EXPECT_LT(p->distpm.makespan, p->greedy.makespan / 5);
}

TEST(DistPmTest, BadInputNamed) {
  auto msg = [](MigrationInput in) { return CheckMigrationInput(in).message(); };
  EXPECT_EQ(msg(Square({{"a", 10, 5}, {"b", 0, 4}}, 0, 1)), "total load 10 != total target 9");
  EXPECT_EQ(msg(Square({{"a", -1, 0}, {"b", 1, 0}}, 0, 1)),
            "group 'a': load and target must be non-negative numbers");
  EXPECT_EQ(msg(Square({{"a", 1.5, 1}, {"b", 0, 0.5}}, 0, 1)),
            "group 'a': load and target must be whole numbers of items");
  EXPECT_EQ(msg(Square({{"a", 1, 0}, {"b", 0, 1}}, -1, 1)),
            "alpha has a negative or non-finite entry");
  MigrationInput wrong = Square({{"a", 1, 0}, {"b", 0, 1}}, 0, 1);
  wrong.beta.pop_back();
  EXPECT_EQ(msg(wrong), "beta must be 2 x 2");
}

// The integer optimum of LP (3)'s objective by exhaustive search over every integer plan.
double IntegerOptimum(const MigrationInput& in, const std::vector<int>& over,
                      const std::vector<int>& under, std::vector<int64_t> excess,
                      std::vector<int64_t> deficit) {
  double best = 1e300;
  std::vector<std::vector<int64_t>> amount(over.size(), std::vector<int64_t>(under.size(), 0));
  std::function<void(size_t, size_t)> go = [&](size_t i, size_t j) {
    if (i == over.size()) {
      for (int64_t d : deficit)
        if (d != 0) return;
      double t = 0;
      for (size_t a = 0; a < over.size(); ++a)
        for (size_t b = 0; b < under.size(); ++b)
          t = std::max(t, in.alpha[over[a]][under[b]] + in.beta[over[a]][under[b]] * amount[a][b]);
      best = std::min(best, t);
      return;
    }
    if (j == under.size()) {
      if (excess[i] == 0) go(i + 1, 0);
      return;
    }
    for (int64_t k = 0; k <= std::min(excess[i], deficit[j]); ++k) {
      amount[i][j] = k;
      excess[i] -= k;
      deficit[j] -= k;
      go(i, j + 1);
      excess[i] += k;
      deficit[j] += k;
    }
    amount[i][j] = 0;
  };
  go(0, 0);
  return best;
}

TEST(DistPmTest, RandomInstancesConserveAndBoundTheIntegerOptimum) {
  std::mt19937 rng(17);
  int compared = 0;
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 4;
    MigrationInput in;
    std::vector<double> loads(n), targets(n);
    int total = 0;
    for (int g = 0; g < n; ++g) total += static_cast<int>(loads[g] = 5 + rng() % 8);
    // Targets: a random permutation of the totals, so sums match.
    int left = total;
    for (int g = 0; g < n; ++g) {
      targets[g] = g + 1 == n ? left : std::min<int>(left, 3 + rng() % 10);
      left -= static_cast<int>(targets[g]);
    }
    if (left != 0 || targets[n - 1] < 0) continue;
    for (int g = 0; g < n; ++g)
      in.groups.push_back({"g" + std::to_string(g), loads[g], targets[g]});
    in.alpha.assign(n, std::vector<double>(n));
    in.beta.assign(n, std::vector<double>(n));
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        in.alpha[a][b] = 0.01 * std::floor(10 * unit(rng));
        in.beta[a][b] = 0.001 * (1 + std::floor(10 * unit(rng)));
      }
    ASSERT_TRUE(CheckMigrationInput(in).ok()) << trial;
    auto p = PlanMigration(in);
    ASSERT_TRUE(p.ok()) << p.status().message();
    for (const MigrationPlan* plan : {&p->distpm, &p->greedy}) {
      std::vector<int64_t> net(n, 0);
      for (const auto& f : plan->flows) {
        ASSERT_GT(f.amount, 0);
        net[f.from] -= f.amount;
        net[f.to] += f.amount;
      }
      for (int g = 0; g < n; ++g)
        ASSERT_EQ(net[g], static_cast<int64_t>(targets[g] - loads[g])) << "trial " << trial;
      ASSERT_NEAR(plan->makespan, Makespan(in, plan->flows), 1e-12);
    }
    if (p->overloaded.empty()) continue;
    std::vector<int64_t> excess, deficit;
    for (int g : p->overloaded) excess.push_back(static_cast<int64_t>(loads[g] - targets[g]));
    for (int g : p->underloaded) deficit.push_back(static_cast<int64_t>(targets[g] - loads[g]));
    const double opt = IntegerOptimum(in, p->overloaded, p->underloaded, excess, deficit);
    // The LP relaxation bounds the integer optimum from below...
    ASSERT_LE(p->distpm.lp_objective, opt + 1e-9) << "trial " << trial;
    // ...and rounding adds at most one item on a channel.
    double max_beta = 0;
    for (int a : p->overloaded)
      for (int b : p->underloaded) max_beta = std::max(max_beta, in.beta[a][b]);
    ASSERT_LE(p->distpm.makespan, p->distpm.lp_objective + max_beta + 1e-9) << "trial " << trial;
    ++compared;
  }
  EXPECT_GE(compared, 150) << "too few instances reached the exhaustive comparison";
}

}  // namespace
}  // namespace aiac::redistribution
