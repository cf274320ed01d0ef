// The smoothed-aggregation preconditioner against what it must be: its sparse product equal to
// Eigen's, its cycle a symmetric positive definite operator (what CG needs), an exact solve on a
// block small enough for one level, CG iterations that stay few as a grid grows (where Jacobi's
// grow with it), a block without strong couplings swept rather than factored, and blocks that are
// not positive definite refused.
#include "apps/cg/smoothed_aggregation.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "apps/cg/block_cg.h"

namespace aiac::cg {
namespace {

// M^-1 densely: the cycle applied to every unit vector, with r'z checked on the way.
Eigen::MatrixXd CycleMatrix(SmoothedAggregation& amg) {
  const int n = amg.rows();
  Eigen::MatrixXd m(n, n);
  Eigen::VectorXd z(n);
  for (int j = 0; j < n; ++j) {
    const Eigen::VectorXd r = Eigen::VectorXd::Unit(n, j);
    const double rz = amg.Apply(r.data(), z.data());
    EXPECT_NEAR(rz, z[j], 1e-12 * std::max(1.0, std::abs(z[j])));
    m.col(j) = z;
  }
  return m;
}

SpMat RandomSparse(std::mt19937& rng, int rows, int cols, double density) {
  std::uniform_real_distribution<double> value(-1, 1), coin(0, 1);
  std::vector<Eigen::Triplet<double>> entries;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      if (coin(rng) < density) entries.emplace_back(i, j, value(rng));
    }
  }
  SpMat m(rows, cols);
  m.setFromTriplets(entries.begin(), entries.end());
  m.makeCompressed();
  return m;
}

TEST(SmoothedAggregationTest, SparseProductIsEigensProductWithColumnsAscending) {
  std::mt19937 rng(5);
  for (const auto& [rows, inner, cols, density] :
       {std::tuple{1, 1, 1, 1.0}, std::tuple{7, 5, 9, 0.3}, std::tuple{40, 60, 30, 0.05},
        std::tuple{50, 50, 50, 0.0}, std::tuple{30, 20, 1, 0.5}, std::tuple{25, 25, 25, 0.9}}) {
    const SpMat a = RandomSparse(rng, rows, inner, density);
    const SpMat b = RandomSparse(rng, inner, cols, density);
    const SpMat c = SparseProduct(a, b);
    ASSERT_EQ(c.rows(), rows);
    ASSERT_EQ(c.cols(), cols);
    const Eigen::MatrixXd expected = Eigen::MatrixXd(a) * Eigen::MatrixXd(b);
    EXPECT_LT((Eigen::MatrixXd(c) - expected).cwiseAbs().maxCoeff(), 1e-12) << rows << "x" << cols;
    for (int i = 0; i < rows; ++i) {
      for (int k = c.outerIndexPtr()[i] + 1; k < c.outerIndexPtr()[i + 1]; ++k)
        EXPECT_LT(c.innerIndexPtr()[k - 1], c.innerIndexPtr()[k]) << "row " << i;
    }
  }
}

TEST(SmoothedAggregationTest, TheCycleIsSymmetricPositiveDefinite) {
  for (const SpMat& a : {GridLaplacian(25, 18), GridLaplacian3d(8), GridLaplacian(22, 22, 4.5)}) {
    auto amg = SmoothedAggregation::Make(a);
    ASSERT_TRUE(amg.has_value());
    ASSERT_GE(amg->levels(), 2) << a.rows();  // more than kCoarsestRows: at least one coarsening
    const Eigen::MatrixXd cycle = CycleMatrix(*amg);  // M^-1
    EXPECT_LT((cycle - cycle.transpose()).cwiseAbs().maxCoeff(),
              1e-10 * cycle.cwiseAbs().maxCoeff());
    const Eigen::LLT<Eigen::MatrixXd> positive((cycle + cycle.transpose()) / 2);
    ASSERT_EQ(positive.info(), Eigen::Success) << a.rows();
    // A good preconditioner: M^-1 A's spectrum in [0.05, 1], a modest condition number; by
    // factors rather than eigenvalues (which took 40 s under ASan): (1 + 1e-6) M - A and
    // A - 0.05 M are positive definite (M - A alone is singular where the cycle is exact).
    const Eigen::MatrixXd m = positive.solve(Eigen::MatrixXd::Identity(a.rows(), a.rows()));
    const Eigen::MatrixXd dense = Eigen::MatrixXd(a);
    for (const Eigen::MatrixXd& d :
         {Eigen::MatrixXd((1 + 1e-6) * m - dense), Eigen::MatrixXd(dense - 0.05 * m)}) {
      EXPECT_EQ(Eigen::LLT<Eigen::MatrixXd>((d + d.transpose()) / 2).info(), Eigen::Success)
          << a.rows();
    }
  }
}

TEST(SmoothedAggregationTest, HierarchiesShrinkByAggregatesAndStayLight) {
  const SpMat a = GridLaplacian(100, 100);
  auto amg = SmoothedAggregation::Make(a);
  ASSERT_TRUE(amg.has_value());
  const std::vector<int> rows = amg->level_rows();
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows.front(), 10000);
  for (size_t l = 1; l < rows.size(); ++l) {
    // 5-point aggregates hold about 5 to 9 rows.
    EXPECT_LT(rows[l] * 3, rows[l - 1]) << l;
  }
  EXPECT_LE(rows.back(), SmoothedAggregation::kCoarsestRows);
  EXPECT_LT(amg->operator_complexity(), 1.6);
  EXPECT_GT(amg->operator_complexity(), 1.0);
}

TEST(SmoothedAggregationTest, ABlockOfOneLevelIsSolvedExactly) {
  const SpMat a = GridLaplacian(15, 12);  // 180 rows: the coarsest level at once
  auto amg = SmoothedAggregation::Make(a);
  ASSERT_TRUE(amg.has_value());
  EXPECT_EQ(amg->levels(), 1);
  const Eigen::VectorXd r = Eigen::VectorXd::LinSpaced(a.rows(), -1, 3);
  Eigen::VectorXd z(a.rows());
  amg->Apply(r.data(), z.data());
  EXPECT_LT((a * z - r).norm(), 1e-10 * r.norm());
}

TEST(SmoothedAggregationTest, CgIterationsStayFewAsTheGridGrows) {
  std::vector<int> amg_iterations;
  for (const int k : {40, 80, 160}) {
    const SpMat a = GridLaplacian(k, k);
    const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(a.rows(), -1, 2);
    BlockCg amg(a), jacobi(a);
    amg.UseAlgebraicMultigrid();
    ASSERT_TRUE(amg.algebraic_multigrid());
    EXPECT_STREQ(amg.preconditioner(), " with AMG");
    Eigen::VectorXd x1 = Eigen::VectorXd::Zero(a.rows()), x2 = x1;
    const auto fast = amg.Solve(b, x1, 1e-10, 2000);
    const auto slow = jacobi.Solve(b, x2, 1e-10, 2000);
    ASSERT_TRUE(fast.breakdown.empty()) << fast.breakdown;
    EXPECT_LE(fast.relative_residual, 1e-10);
    EXPECT_LT((b - a * x1).norm(), 1.01e-10 * b.norm());
    EXPECT_LE((x1 - x2).cwiseAbs().maxCoeff(), 1e-6 * x2.cwiseAbs().maxCoeff());
    EXPECT_LE(fast.iterations, 20) << k;
    EXPECT_LT(5 * fast.iterations, slow.iterations) << k;
    amg_iterations.push_back(fast.iterations);
  }
  // Jacobi's iterations double with the grid's side; the cycle's barely move.
  EXPECT_LE(amg_iterations.back(), amg_iterations.front() + 4);
}

TEST(SmoothedAggregationTest, ABlockWithoutStrongCouplingsIsSweptNotFactored) {
  // Diagonal 100 against couplings of -1: a_ij^2 = 1 < 0.08^2 * 100 * 100, no strong neighbour.
  const SpMat a = GridLaplacian(30, 30, 100);
  auto amg = SmoothedAggregation::Make(a);
  ASSERT_TRUE(amg.has_value());
  EXPECT_EQ(amg->levels(), 1);
  BlockCg solver(a);
  solver.UseAlgebraicMultigrid();
  const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(a.rows(), -1, 2);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
  const auto outcome = solver.Solve(b, x, 1e-12, 100);
  EXPECT_LE(outcome.relative_residual, 1e-12);
  EXPECT_LE(outcome.iterations, 5);
}

TEST(SmoothedAggregationTest, ABlockThatIsNotPositiveDefiniteIsRefused) {
  EXPECT_FALSE(SmoothedAggregation::Make(-GridLaplacian(30, 30)).has_value());
  SpMat zero = GridLaplacian(30, 30);
  zero.coeffRef(17, 17) = 0;
  EXPECT_FALSE(SmoothedAggregation::Make(zero).has_value());
  // BlockCg keeps Jacobi (MINRES, the diagonal not being positive) and says so.
  BlockCg solver(zero);
  solver.UseAlgebraicMultigrid();
  EXPECT_FALSE(solver.algebraic_multigrid());
}

// (An inexact solve with the cycle: BlockCgTest.AnInexactSolveStopsOnceItCutItsResidualAsAsked.)
TEST(SmoothedAggregationTest, AnUnsymmetricBlockKeepsBiCGSTABWithJacobi) {
  SpMat u = GridLaplacian3d(14);
  u.coeffRef(0, 1) = -0.5;
  BlockCg bicgstab(u);
  bicgstab.UseAlgebraicMultigrid();
  EXPECT_FALSE(bicgstab.algebraic_multigrid());
}

}  // namespace
}  // namespace aiac::cg
