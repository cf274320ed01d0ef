// IC(0) against what it must be: L L^T equals A on A's pattern, an exact Cholesky factor where
// A's pattern has no fill (a tridiagonal matrix), refused on blocks that are not positive
// definite; and as BlockCg's preconditioner, fewer iterations than Jacobi and inexact
// solves (with Jacobi, IC(0) or the multigrid cycle) that stop at the reduction asked.
#include "apps/cg/incomplete_cholesky.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <string>

#include "apps/cg/block_cg.h"

namespace aiac::cg {
namespace {

// z = (L L^T)^-1 r for every unit vector r: the inverse of L L^T, densely.
Eigen::MatrixXd PreconditionerInverse(const IncompleteCholesky& f) {
  const int n = f.rows();
  Eigen::MatrixXd inv(n, n);
  Eigen::VectorXd z(n);
  for (int j = 0; j < n; ++j) {
    const Eigen::VectorXd r = Eigen::VectorXd::Unit(n, j);
    const double rz = f.Apply(r.data(), z.data());
    EXPECT_NEAR(rz, z[j], 1e-12 * std::max(1.0, std::abs(z[j])));  // r'z, from the same sweep
    inv.col(j) = z;
  }
  return inv;
}

TEST(IncompleteCholeskyTest, MatchesTheMatrixOnItsPatternAndIsExactWithoutFill) {
  for (const SpMat& a : {GridLaplacian(7, 5), GridLaplacian3d(4), GridLaplacian(9, 1)}) {
    auto f = IncompleteCholesky::Factor(a);
    ASSERT_TRUE(f.has_value());
    // An M-matrix: no shift needed.
    EXPECT_EQ(f->shift(), 0);
    const Eigen::MatrixXd m = PreconditionerInverse(*f).inverse();  // L L^T
    EXPECT_LT((m - m.transpose()).cwiseAbs().maxCoeff(), 1e-9);
    const Eigen::MatrixXd dense = Eigen::MatrixXd(a);
    for (int i = 0; i < a.rows(); ++i) {
      for (SpMat::InnerIterator it(a, i); it; ++it)
        EXPECT_NEAR(m(i, it.col()), it.value(), 1e-9) << i << ", " << it.col();
    }
    if (a.cols() == 9) {  // tridiagonal: IC(0) is the Cholesky factor
      EXPECT_LT((m - dense).cwiseAbs().maxCoeff(), 1e-9);
    } else {
      EXPECT_GT((m - dense).cwiseAbs().maxCoeff(), 1e-3);  // the fill it left out
    }
  }
}

TEST(IncompleteCholeskyTest, ABlockThatIsNotPositiveDefiniteIsRefused) {
  // Negative definite: no shift of the diagonal gives a positive pivot.
  const SpMat negative = -GridLaplacian(4, 4);
  EXPECT_FALSE(IncompleteCholesky::Factor(negative).has_value());
  // Indefinite, a zero on the diagonal.
  SpMat a = GridLaplacian(3, 3);
  a.coeffRef(4, 4) = 0;
  EXPECT_FALSE(IncompleteCholesky::Factor(a).has_value());
}

TEST(BlockCgTest, IncompleteCholeskyTakesFewerIterationsThanJacobi) {
  const SpMat a = GridLaplacian3d(14);
  const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(a.rows(), -1, 2);
  BlockCg jacobi(a), ic(a);
  ic.UseIncompleteCholesky();
  ASSERT_TRUE(ic.incomplete_cholesky());
  EXPECT_FALSE(jacobi.incomplete_cholesky());
  Eigen::VectorXd x1 = Eigen::VectorXd::Zero(a.rows()), x2 = x1;
  const auto slow = jacobi.Solve(b, x1, 1e-10, 1000);
  const auto fast = ic.Solve(b, x2, 1e-10, 1000);
  EXPECT_LE(fast.relative_residual, 1e-10);
  EXPECT_LE((x1 - x2).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT(3 * fast.iterations, 2 * slow.iterations)
      << fast.iterations << " vs " << slow.iterations;
  // An unsymmetric block keeps BiCGSTAB with Jacobi.
  SpMat u = a;
  u.coeffRef(0, 1) = -0.5;
  BlockCg bicgstab(u);
  bicgstab.UseIncompleteCholesky();
  EXPECT_FALSE(bicgstab.incomplete_cholesky());
}

TEST(BlockCgTest, AnInexactSolveStopsOnceItCutItsResidualAsAsked) {
  const SpMat a = GridLaplacian3d(12);
  const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(a.rows(), -1, 2);
  for (const std::string preconditioner : {"jacobi", "ic", "amg"}) {
    BlockCg solver(a);
    if (preconditioner == "ic") solver.UseIncompleteCholesky();
    if (preconditioner == "amg") solver.UseAlgebraicMultigrid();
    Eigen::VectorXd x = Eigen::VectorXd::Constant(a.rows(), 0.3);
    const double before = (b - a * x).norm();
    const auto cut = solver.Solve(b, x, 1e-12, 1000, 0.2);
    const double after = (b - a * x).norm();
    EXPECT_LE(after, 0.2 * before * (1 + 1e-9)) << preconditioner;
    EXPECT_GT(after, 1e-6 * before) << preconditioner;  // it stopped there, not at the tolerance
    EXPECT_GE(cut.iterations, 1);
    // A cycle cuts every component of the error: one or two iterations.
    if (preconditioner == "amg") {
      EXPECT_LE(cut.iterations, 3);
    }
    // Reduction 0: to the tolerance.
    const auto full = solver.Solve(b, x, 1e-12, 1000, 0);
    EXPECT_LE(full.relative_residual, 1e-12) << preconditioner;
  }
}

}  // namespace
}  // namespace aiac::cg
