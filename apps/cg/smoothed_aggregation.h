// An algebraic multigrid preconditioner for a symmetric positive definite block: smoothed
// aggregation (Vaněk, Mandel and Brezina, "Algebraic multigrid by smoothed aggregation for
// second and fourth order elliptic problems", Computing 56(3), 1996). The inner CG's
// preconditioner (block_cg.h) for blocks of a discretised elliptic equation: unlike IC(0), whose
// preconditioned CG leaves a wide block's smooth error almost untouched, one V-cycle cuts every
// component of the error alike, and unlike a complete factor its set-up and its cycles cost in
// proportion to the block's nonzeros (a 2-D grid's block of 300,000 rows: a factor of 9.9M
// nonzeros against hierarchies of about 1.4 times the block's).
//
// Each level: the strongly coupled neighbours of row i are the j with
// a_ij^2 >= eps^2 |a_ii a_jj| (eps = 0.08 on the finest level, halved on each coarser one:
// section 3 of the paper); rows are grouped into aggregates by the paper's three passes (a row
// and its strong neighbours when none of them is taken; then left rows join a neighbouring
// aggregate; then the rest form aggregates of what is left of their neighbourhoods), and a row
// without a strong neighbour in no aggregate (the smoother alone handles it); the tentative
// prolongation keeps the constant on each aggregate (columns scaled to unit norm), and is
// smoothed by one damped Jacobi step, P = (I - omega D^-1 A) P_tent with omega = 4/3 over a
// bound of the spectral radius of D^-1 A (the paper's choice; the bound is Gershgorin's); the
// coarse matrix is P^T A P. Coarsening stops at kCoarsestRows rows, solved exactly (dense), or
// where it stalls (aggregates that keep more than kStallRatio of the rows: a block with few
// strong couplings, which a few Gauss-Seidel sweeps solve well).
//
// The cycle is a V-cycle with one forward Gauss-Seidel sweep before the coarse correction and
// one backward sweep after: a symmetric positive definite operator, as CG needs.
// Pure; not safe to apply from two threads at once (the cycle's work vectors are its own).
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <vector>

#include "apps/cg/cg_problem.h"

namespace aiac::cg {

// C = A B, both in compressed rows, by rows (Gustavson's algorithm: a first pass counts each
// row's columns, a second one accumulates the row in a dense row of B's width), columns
// ascending. Eigen's product went through a column-major temporary and took two thirds of the
// hierarchy's set-up on a 300,000-row block.
SpMat SparseProduct(const SpMat& a, const SpMat& b);

class SmoothedAggregation {
 public:
  static constexpr double kStrength = 0.08;   // eps on the finest level
  static constexpr int kCoarsestRows = 400;   // solved by a dense factor at or below this size
  static constexpr double kStallRatio = 0.8;  // coarse rows over fine rows past which it stops
  static constexpr int kStalledSweeps = 4;    // symmetric sweep pairs on a stalled last level
  static constexpr int kMostLevels = 12;

  // The hierarchy of `a`'s lower and upper triangles (symmetric, compressed), or nothing when a
  // diagonal entry is not positive (not positive definite). Keeps a reference to `a`: it must
  // outlive the preconditioner.
  static std::optional<SmoothedAggregation> Make(const SpMat& a);

  // z = M^{-1} r (one V-cycle from zero) and returns r'z. `r` and `z` have rows() entries and do
  // not overlap.
  double Apply(const double* r, double* z);

  int rows() const { return static_cast<int>(finest_->rows()); }
  int levels() const { return static_cast<int>(levels_.size()) + 1; }
  // The rows of each level, finest first.
  std::vector<int> level_rows() const;
  // Nonzeros of every level's matrix over the finest one's: what a cycle costs in products.
  double operator_complexity() const;

 private:
  // One level above the coarsest: its matrix (kept here on every level but the finest, which is
  // the block), the inverse of its diagonal, the prolongation from the next level and its
  // transpose, and the cycle's vectors: the residual here, the next level's right-hand side and
  // its correction.
  struct Level {
    SpMat own;
    Eigen::VectorXd inv_diag;
    SpMat p, r;
    Eigen::VectorXd res, next_b, next_x;
  };

  const SpMat* finest_ = nullptr;
  std::vector<Level> levels_;  // every level but the coarsest, finest first
  // The coarsest level's matrix (when it is not the block itself) and either its dense factor
  // or, when coarsening stalled, the inverse of its diagonal for sweeps.
  SpMat coarsest_;
  Eigen::LDLT<Eigen::MatrixXd> coarsest_factor_;
  Eigen::VectorXd coarsest_inv_diag_;
  bool coarsest_dense_ = true;

  const SpMat& Matrix(size_t l) const;  // level l's matrix (levels_.size(): the coarsest)
  // x = the cycle's approximation of A_l^{-1} b on level l (levels_.size(): the coarsest).
  void Cycle(size_t l, const double* b, double* x);
  void SolveCoarsest(const double* b, double* x);
};

}  // namespace aiac::cg
