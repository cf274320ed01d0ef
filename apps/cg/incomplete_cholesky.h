// The zero-fill incomplete Cholesky factor of a symmetric positive definite block, IC(0): L lower
// triangular with A's lower pattern, L L^T = A on that pattern (Meijerink and van der Vorst,
// Math. Comp. 31(137), 1977). The inner CG's preconditioner (block_cg.h): on a block of a
// discretised elliptic equation it takes fewer than two thirds of Jacobi's iterations, for two
// sweeps over L per iteration, and, unlike a complete factor, it costs one pass over the block
// to make whatever the block's fill (a 3-D grid's exact factor fills 50-120x its lower triangle).
//
// IC(0) exists for M-matrices and H-matrices; on another SPD block a pivot may come out
// non-positive. Then the diagonal is shifted, A + alpha diag(A) (Manteuffel, Math. Comp.
// 34(150), 1980), alpha = 1e-3, 1e-2, 1e-1, 1, until it works; if none does, there is no factor.
// Pure; the factor is immutable once made.
#pragma once

#include <optional>
#include <vector>

#include "apps/cg/cg_problem.h"

namespace aiac::cg {

class IncompleteCholesky {
 public:
  // The factor of the lower triangle of `a` (its upper triangle is not read: `a` is taken as
  // symmetric), or nothing when no shift gives positive pivots (a block that is not positive
  // definite, a zero or negative diagonal).
  static std::optional<IncompleteCholesky> Factor(const SpMat& a);

  // z = (L L^T)^{-1} r, and returns r'z, computed in the same sweep. `r` and `z` have rows()
  // entries and do not overlap.
  double Apply(const double* r, double* z) const;

  int rows() const { return static_cast<int>(diag_.size()); }
  // The shift the factor needed (0: none).
  double shift() const { return shift_; }

 private:
  // Rows of L below the diagonal (CSR, columns ascending) and the inverse of its diagonal.
  std::vector<int> outer_, inner_;
  std::vector<double> values_, diag_;  // diag_: 1 / L_ii
  double shift_ = 0;

  // IC(0) of a's lower triangle with its diagonal times (1 + alpha): false at a pivot that is
  // not positive (or not finite).
  bool Compute(const SpMat& a, double alpha);
};

}  // namespace aiac::cg
