// The coarse space of the CG app's two-level method (coarse = "harmonic", docs/user-guide.md).
//
// One-level multisplitting slows down as blocks are added, and overlap alone does not follow:
// the error it leaves is smooth and, in each block, the block's response to its neighbours'
// values. So task l's coarse functions are its own rows' constant (Nicolaides) and the responses
// of its block to unit values on `pieces` consecutive pieces of each coupling, restricted to its
// own rows: discrete harmonic extensions of interface pieces, the idea of the GDSW coarse space
// (Dohrmann, Klawonn and Widlund, SIAM J. Numer. Anal. 46(4), 2008), computed with the block's
// own solver. The prolongation Z is then block diagonal by owned rows: task l holds Z_l alone,
// computes A Z_l on every row it sees (A symmetric), and the coarse matrix A_0 = Z^T A Z is the
// sum of per-task block rows (coarse_rounds.h exchanges them). Pure: no I/O.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {

// Most functions a coupling may have; coarse_pieces is checked against it.
inline constexpr int kMostCoarsePieces = 64;
// coarse = "auto" stops here: every task sends every other one its section at each iteration,
// and each solves the coarse problem.
inline constexpr int kMostCoarseTasks = 64;

struct CoarseBasis {
  Eigen::MatrixXd z;          // own rows (Block::own order) x functions: Z_l
  Eigen::VectorXd zb;         // Z_l^T b on the own rows
  Eigen::MatrixXd w_own;      // (A Z_l) on the own rows
  std::vector<int> far_rows;  // rows of other tasks where A Z_l is not zero (global), ascending
  Eigen::MatrixXd w_far;      // (A Z_l) on them
  int size() const { return static_cast<int>(z.cols()); }
};

// x = the block's solutions for the columns of `rhs` (its own solver: factor or inner CG).
using BlockSolve = std::function<Status(const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x)>;
// Right-hand sides solved at once: one pass through a factor for all of them (its dense kernels)
// costs a fraction of as many single solves. Fewer for a block so large that a batch would hold
// more than kBasisBatchEntries values (64 MB; the solve's answer and its copy as much again).
inline constexpr size_t kBasisBatch = 32;
inline constexpr size_t kBasisBatchEntries = 8'000'000;
// The batch for a block of `rows` rows: kBasisBatch, or fewer (at least 1) for a large block.
size_t BasisBatch(Eigen::Index rows);

// Task l's coarse functions and what the others need of them. Functions whose restriction to the
// own rows vanishes (a coupling that reaches no own row) are left out.
Result<CoarseBasis> HarmonicBasis(const Block& block, int pieces, const BlockSolve& solve);

// Whether coarse = "auto" turns the coarse space on for this matrix (from a file, several
// tasks): it is symmetric, and some row is not diagonally dominant by kDominanceMargin of its
// diagonal. Strongly dominant systems (the generated banded ones) converge in a few one-level
// iterations; elliptic ones (Poisson: dominant by nothing inside the grid) are the ones that need
// a second level.
inline constexpr double kDominanceMargin = 0.01;
bool IsSymmetric(const SpRef& a);
bool WantsCoarseSpace(const SpRef& a);

// A_0 = Z^T A Z from the tasks' block rows (task l's: its functions x all of them, in task
// order), symmetrised, and its pseudo-inverse: eigenvalues below 1e-12 of the largest are left
// out (a task's functions may be combinations of each other).
class CoarseProblem {
 public:
  // An error naming the problem: rows of the wrong width, non-finite entries, an unsymmetric or
  // indefinite A_0 (A was not symmetric positive definite).
  static Result<CoarseProblem> Make(const std::vector<Eigen::MatrixXd>& block_rows);
  Eigen::VectorXd Solve(const Eigen::VectorXd& r) const;
  int size() const { return static_cast<int>(v_.rows()); }

 private:
  Eigen::MatrixXd v_;    // eigenvectors kept
  Eigen::VectorXd inv_;  // 1 / their eigenvalues
};

}  // namespace aiac::cg
