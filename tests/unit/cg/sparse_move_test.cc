// Eigen 3.4's SparseMatrix has no move operations; ours (lib/core/eigen_sparse_matrix_move.h)
// hand the arrays over instead of copying them, also into and out of a Result and a Block.
#include <gtest/gtest.h>

#include <utility>

#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {
namespace {

TEST(SparseMatrixMoveTest, MovingHandsTheArraysOver) {
  SpMat a = GridLaplacian(10, 10);
  const double* values = a.valuePtr();
  const int* columns = a.innerIndexPtr();
  const int* starts = a.outerIndexPtr();
  const SpMat copy = a;
  EXPECT_NE(copy.valuePtr(), values);  // a copy is still a copy

  SpMat b = std::move(a);
  EXPECT_EQ(b.valuePtr(), values);
  EXPECT_EQ(a.nonZeros(), 0);  // NOLINT(bugprone-use-after-move): left empty, 0 x 0
  EXPECT_EQ(a.rows(), 0);
  Result<SpMat> result(std::move(b));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->valuePtr(), values);
  SpMat c = GridLaplacian(3, 3);
  c = std::move(*result);
  EXPECT_EQ(c.valuePtr(), values);
  EXPECT_EQ(c.innerIndexPtr(), columns);
  EXPECT_EQ(c.outerIndexPtr(), starts);
  EXPECT_EQ(SpMat(c - copy).norm(), 0);

  Block block;
  block.local = std::move(c);
  Block moved = std::move(block);
  EXPECT_EQ(moved.local.valuePtr(), values);
}

}  // namespace
}  // namespace aiac::cg
