// CHOLMOD's factor of SPD blocks that are not banded: the same answers as Eigen's LDL', from a
// compressed or an uncompressed matrix, for one right-hand side or many at once, and an
// indefinite block refused with the reason.
#include "apps/cg/cholmod_factor.h"

#include <gtest/gtest.h>

#include <Eigen/SparseCholesky>

#include "apps/cg/cg_messages.h"

namespace aiac::cg {
namespace {

TEST(CholmodFactorTest, SolvesLikeEigenFromCompressedAndUncompressedMatrices) {
  SpMat a = GridLaplacian(70, 40);
  const Eigen::SparseMatrix<double> columns = a;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(columns);
  const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(a.rows(), -3, 5);
  const Eigen::VectorXd exact = ldlt.solve(b);
  SpMat loose = a;
  loose.uncompress();  // room left in every row: CHOLMOD reads the counts, not the offsets
  loose.reserve(Eigen::VectorXi::Constant(a.rows(), 2));
  ASSERT_FALSE(loose.isCompressed());
  for (const SpMat* m : {&a, &loose}) {
    auto f = CholmodFactor::Factor(*m);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_STRNE((*f)->ordering(), "unknown");
    EXPECT_GT((*f)->factor_nonzeros(), static_cast<double>(a.nonZeros() + a.rows()) / 2);
    Eigen::VectorXd x;
    // Twice: the factor is reused.
    for (int k = 0; k < 2; ++k) {
      ASSERT_TRUE((*f)->Solve(b, x));
      EXPECT_LT((x - exact).cwiseAbs().maxCoeff(), 1e-9 * exact.cwiseAbs().maxCoeff());
    }
  }
}

TEST(CholmodFactorTest, ManyRightHandSidesSolveAtOnceBeforeAndAfterTheFirstSingleSolve) {
  const SpMat a = GridLaplacian(40, 30);
  const Eigen::SparseMatrix<double> columns = a;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(columns);
  Eigen::MatrixXd b(a.rows(), 5);
  for (Eigen::Index j = 0; j < b.cols(); ++j)
    b.col(j) = Eigen::VectorXd::LinSpaced(a.rows(), -1.0 - static_cast<double>(j), 2.0 * j);
  const Eigen::MatrixXd exact = ldlt.solve(b);
  auto f = CholmodFactor::Factor(a);
  ASSERT_TRUE(f.ok()) << f.status().message();
  Eigen::MatrixXd x;
  // Supernodal first (the coarse space's solves), then simplicial after a single solve.
  ASSERT_TRUE((*f)->SolveMany(b, x));
  EXPECT_LT((x - exact).cwiseAbs().maxCoeff(), 1e-9 * exact.cwiseAbs().maxCoeff());
  Eigen::VectorXd one;
  ASSERT_TRUE((*f)->Solve(b.col(3), one));
  EXPECT_LT((one - exact.col(3)).cwiseAbs().maxCoeff(), 1e-9 * exact.cwiseAbs().maxCoeff());
  ASSERT_TRUE((*f)->SolveMany(b, x));
  ASSERT_EQ(x.cols(), 5);
  EXPECT_LT((x - exact).cwiseAbs().maxCoeff(), 1e-9 * exact.cwiseAbs().maxCoeff());
}

TEST(CholmodFactorTest, AnIndefiniteBlockIsRefusedSayingSo) {
  auto f =
      CholmodFactor::Factor(GridLaplacian(30, 30, 1.0));  // the Laplacian shifted by -3: indefinite
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            "the block is not positive definite (its Cholesky factorization failed)");
}

// A limit on the fill (inner = "auto"): a 3-D grid's factor fills far more than a 2-D one's of
// as many rows, and a factor over the limit is refused before its numbers are computed.
TEST(CholmodFactorTest, AFactorThatWouldFillMoreThanAllowedIsRefused) {
  const SpMat flat = GridLaplacian(125, 125), deep = GridLaplacian3d(25);  // 15,625 rows each
  auto fill = [](const SpMat& a) {
    auto f = CholmodFactor::Factor(a);
    EXPECT_TRUE(f.ok()) << f.status().message();
    return f.ok() ? (*f)->factor_nonzeros() / LowerNonzeros(a) : 0.0;
  };
  const double flat_fill = fill(flat), deep_fill = fill(deep);
  EXPECT_GT(deep_fill, 2 * flat_fill) << deep_fill << " vs " << flat_fill;
  const double limit = (flat_fill + deep_fill) / 2;
  auto refused = CholmodFactor::Factor(deep, limit);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("its factor would fill "), std::string::npos)
      << refused.status().message();
  auto kept = CholmodFactor::Factor(flat, limit);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(flat.rows());
  Eigen::VectorXd x;
  ASSERT_TRUE((*kept)->Solve(b, x));
  EXPECT_LT((flat * x - b).norm(), 1e-10 * b.norm());
}

// AmdFill predicts, without a number, exactly the fill the limit is checked against.
TEST(CholmodFactorTest, AmdFillIsTheFillTheLimitSees) {
  const SpMat deep = GridLaplacian3d(20);
  auto fill = CholmodFactor::AmdFill(deep);
  ASSERT_TRUE(fill.ok()) << fill.status().message();
  EXPECT_GT(*fill, 5);
  auto refused = CholmodFactor::Factor(deep, *fill * 0.999);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("would fill " + FormatDouble(*fill) + "x"),
            std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(CholmodFactor::Factor(deep, *fill * 1.001).ok());
}

}  // namespace
}  // namespace aiac::cg
