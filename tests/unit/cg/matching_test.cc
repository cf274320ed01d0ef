// The maximum product transversal (apps/cg/matching.h) against every permutation on small
// random sparse matrices, structurally singular ones included, and on the shapes it is for.
#include "apps/cg/matching.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace aiac::cg {
namespace {

SpMat FromDense(const std::vector<std::vector<double>>& rows) {
  const int n = static_cast<int>(rows.size());
  SpMat a(n, n);
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (rows[i][j] != 0) t.emplace_back(i, j, rows[i][j]);
    }
  }
  a.setFromTriplets(t.begin(), t.end());
  a.makeCompressed();
  return a;
}

// The largest sum of log|a(perm[j], j)| over every permutation with a zero-free diagonal, or
// -infinity when there is none.
double BestByBruteForce(const SpMat& a) {
  const int n = static_cast<int>(a.rows());
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  double best = -INFINITY;
  do {
    double sum = 0;
    for (int j = 0; j < n && sum > -INFINITY; ++j) {
      const double v = std::abs(a.coeff(perm[j], j));
      sum = v == 0 ? -INFINITY : sum + std::log(v);
    }
    best = std::max(best, sum);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

TEST(MatchingTest, FindsTheLargestDiagonalProductOfEveryPermutation) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> value(-10, 10);
  std::uniform_real_distribution<double> coin(0, 1);
  int solvable = 0, singular = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = 1 + trial % 7;
    const double density = 0.2 + 0.6 * coin(rng);
    std::vector<std::vector<double>> rows(n, std::vector<double>(n, 0));
    for (auto& row : rows) {
      for (double& x : row) {
        if (coin(rng) < density) x = std::pow(10.0, value(rng) / 3) * (coin(rng) < 0.5 ? -1 : 1);
      }
    }
    const SpMat a = FromDense(rows);
    const double best = BestByBruteForce(a);
    auto perm = LargeDiagonalRows(a);
    if (best == -INFINITY) {
      EXPECT_FALSE(perm.ok()) << "trial " << trial << ": no zero-free diagonal exists";
      ++singular;
      continue;
    }
    ASSERT_TRUE(perm.ok()) << "trial " << trial << ": " << perm.status().message();
    ++solvable;
    std::vector<int> sorted = *perm;
    std::sort(sorted.begin(), sorted.end());
    for (int j = 0; j < n; ++j) ASSERT_EQ(sorted[j], j) << "not a permutation";
    double sum = 0;
    for (int j = 0; j < n; ++j) {
      const double v = std::abs(a.coeff((*perm)[j], j));
      ASSERT_NE(v, 0) << "trial " << trial << ": a zero on the diagonal at " << j;
      sum += std::log(v);
    }
    EXPECT_NEAR(sum, best, 1e-9 * std::max(1.0, std::abs(best))) << "trial " << trial;
  }
  EXPECT_GT(solvable, 200);
  EXPECT_GT(singular, 20);
}

TEST(MatchingTest, AZeroDiagonalGetsItsLargeEntriesAndTheRowsMoveWithTheirValues) {
  // A saddle-point-like matrix: zeros on the diagonal, large entries off it.
  const SpMat a = FromDense({{0, 5, 0, 0}, {4, 0, 0, 1}, {0, 1e-3, 0, 7}, {0, 0, 3, 0}});
  auto perm = LargeDiagonalRows(a);
  ASSERT_TRUE(perm.ok()) << perm.status().message();
  const SpMat p = PermuteRows(a, *perm);
  EXPECT_EQ(p.coeff(0, 0), 4);
  EXPECT_EQ(p.coeff(1, 1), 5);
  EXPECT_EQ(p.coeff(2, 2), 3);
  EXPECT_EQ(p.coeff(3, 3), 7);
  // Only rows moved: P A x = P b for the x of A x = b.
  const Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(4, 1, 4);
  const Eigen::VectorXd b = a * x, pb = p * x;
  for (int j = 0; j < 4; ++j) EXPECT_EQ(pb[j], b[(*perm)[j]]);
  // A structurally singular one (two rows with entries in one column only) names the column.
  auto singular = LargeDiagonalRows(FromDense({{1, 0, 0}, {1, 0, 0}, {1, 1, 1}}));
  ASSERT_FALSE(singular.ok());
  EXPECT_NE(singular.status().message().find("structurally singular"), std::string::npos);
}

TEST(MatchingTest, ALargeBandedMatrixWithAZeroDiagonalIsMatchedFast) {
  // 20,000 rows whose diagonal is zero and whose first super- and sub-diagonals are not: the
  // permutation must pair them up without a search over the whole matrix per column.
  const int n = 20000;
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    if (i + 1 < n) t.emplace_back(i, i + 1, 2.0 + i % 3);
    if (i > 0) t.emplace_back(i, i - 1, 1.0 + i % 5);
  }
  SpMat a(n, n);
  a.setFromTriplets(t.begin(), t.end());
  a.makeCompressed();
  auto perm = LargeDiagonalRows(a);
  ASSERT_TRUE(perm.ok()) << perm.status().message();
  const SpMat p = PermuteRows(a, *perm);
  for (int j = 0; j < n; ++j) ASSERT_NE(p.coeff(j, j), 0) << j;
}

}  // namespace
}  // namespace aiac::cg
