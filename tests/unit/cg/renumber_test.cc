// The reverse Cuthill-McKee renumbering (renumber.h): a permutation of every row, also of a graph
// in several parts; the renumbered matrix is P A P^T entry for entry; a scrambled grid gets its
// band back.
#include "apps/cg/renumber.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "apps/cg/partition.h"

namespace aiac::cg {
namespace {

SpMat Scrambled(const SpMat& a, uint32_t seed) {
  std::vector<int> order(static_cast<size_t>(a.rows()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  return Renumbered(a, order);
}

bool IsPermutation(std::vector<int> order, int n) {
  std::sort(order.begin(), order.end());
  std::vector<int> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  return order == all;
}

TEST(RenumberTest, AScrambledGridGetsItsBandBack) {
  const SpMat grid = GridLaplacian(60, 60);
  const SpMat scrambled = Scrambled(grid, 3);
  EXPECT_GT(CutFraction(scrambled, ContiguousPartition(3600, 4)), 0.5);
  const std::vector<int> order = ReverseCuthillMcKee(scrambled);
  ASSERT_TRUE(IsPermutation(order, 3600));
  const SpMat back = Renumbered(scrambled, order);
  EXPECT_LE(Bandwidth(back), 2 * 60);
  EXPECT_LT(CutFraction(back, ContiguousPartition(3600, 4)), 0.05);  // the grid's own slices: 0.02
  EXPECT_EQ(back.nonZeros(), grid.nonZeros());
}

TEST(RenumberTest, TheRenumberedMatrixIsPAPTransposed) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 rng(seed);
    const int n = 2 + static_cast<int>(rng() % 20);
    Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i) dense(i, i) = 5;
    for (int k = 0; k < 2 * n; ++k)
      dense(static_cast<int>(rng() % n), static_cast<int>(rng() % n)) = -1.0 - k;
    const SpMat a = dense.sparseView();
    const std::vector<int> order = ReverseCuthillMcKee(a);
    ASSERT_TRUE(IsPermutation(order, n))
        << "seed " << seed;  // (the graph may fall apart in pieces)
    const Eigen::MatrixXd r = Eigen::MatrixXd(Renumbered(a, order));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        EXPECT_EQ(r(i, j), dense(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]))
            << "seed " << seed;
      }
    }
  }
}

}  // namespace
}  // namespace aiac::cg
