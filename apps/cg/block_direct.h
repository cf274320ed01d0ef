// The factor-once inner solver of the multisplitting method (docs/user-guide.md): a task's
// diagonal block A_ll never changes, so it is factorized once, when the task is built, and each
// outer iteration only solves with the factor (two triangular solves) instead of running an
// inner CG from scratch. Unsymmetric blocks (from `general` files): UMFPACK (SuiteSparse),
// through Eigen's wrapper, without iterative refinement (the outer iteration refines): on the
// 90,000-row block of a 2-D convection-diffusion grid it factored in 0.50 s and solved in 21 ms,
// where Eigen's SparseLU took 1.25 s and 30 ms, for the same answer to 1e-14.
//
// SPD blocks: a banded or profile block (the envelope of its lower triangle, which bounds the
// fill of a factor in the natural order, at most twice its nonzeros) is factored as it is,
// since reordering cannot beat that fill by more than 2x and AMD's analysis alone took 1.06 s of
// a 1.48 s factorization on a 400,000-row banded block; any other block (a 2-D grid's envelope
// is sqrt(n) times its nonzeros) by CHOLMOD, which orders it (cholmod_factor.h). In the natural
// order, a block whose band (n x (bandwidth + 1)) is itself at most twice its lower nonzeros goes
// to LAPACK's band Cholesky (dpbtrf): on a 201,024-row block of bandwidth 8, 9 ms against 28 ms
// for Eigen's SimplicialLLT, which also copies the block into a permuted column-major matrix
// first; a profile block (a few long rows) to SimplicialLLT.
//
// A symmetric block that is not positive definite (indefinite, negative definite, or singular)
// is factored by LU with pivoting (UMFPACK), as an unsymmetric one is. A block that LU finds
// singular is solved in the least-squares sense by SuiteSparseQR's rank-revealing QR: for the
// right-hand sides a consistent system gives, an exact solution (the outer iteration then goes
// on as with any other block). method() says which.
// Pure; the factor is the only large allocation.
#pragma once

#include <Eigen/SPQRSupport>
#include <Eigen/SparseCholesky>
#include <Eigen/UmfPackSupport>
#include <memory>
#include <string>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "apps/cg/cholmod_factor.h"
#include "core/status.h"

namespace aiac::cg {

class BlockDirect {
 public:
  // Factors `a` (kept by reference: it must outlive the solver): Cholesky when it is symmetric
  // and positive definite, else LU, else (singular) a least-squares QR. Refused, with the reason,
  // when no factor fits the memory this process may use (core/memory_budget.h), and (most_fill
  // > 0) when CHOLMOD's Cholesky factor would have more than most_fill times the nonzeros of a's
  // lower triangle (kResourceExhausted: a 3-D grid's blocks fill 50-120x, a 2-D grid's 11-12x;
  // banded and profile factors fill at most 2x).
  static Result<std::unique_ptr<BlockDirect>> Factor(const SpMat& a, bool symmetric,
                                                     double most_fill = 0);
  // The fill most_fill is checked against, for a symmetric positive definite `a`: the nonzeros
  // of the Cholesky factor Factor would make over those of a's lower triangle; at most 2 for a
  // banded or profile block (factored as it is, never refused), else from CHOLMOD's AMD
  // analysis. Symbolic only: no number is computed.
  static Result<double> PredictedFill(const SpMat& a);

  struct Outcome {
    double relative_residual;  // ||b - A x|| / ||b||; -1 when not measured
    std::string breakdown;     // non-empty: the solve failed (why); x is then not to be used
  };
  // x = A^-1 b. A failed or non-finite solve is reported, never taken for an answer. The
  // residual costs a product with A, as much as the solve on a banded block: the outer
  // iteration, which needs only the breakdown, leaves it out (`measure` false).
  Outcome Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x, bool measure = true) const;
  // X = A^-1 B for many right-hand sides: all in one pass through CHOLMOD's factor (its dense
  // kernels, cholmod_factor.h), one column after the other through the other factors; no
  // residual measured.
  Outcome SolveMany(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const;
  // Nonzeros of the factor(s): its memory is about 12 bytes each.
  double factor_nonzeros() const { return factor_nonzeros_; }
  // "natural" (a banded or profile block, factored as it is), CHOLMOD's choice ("amd",
  // "metis", ...), or "umfpack" (LU, UMFPACK's own ordering).
  const char* ordering() const {
    return natural_ || !band_.empty() ? "natural" : cholmod_ ? cholmod_->ordering() : "umfpack";
  }
  // The factor is LAPACK's band Cholesky (rather than SimplicialLLT's, CHOLMOD's or UMFPACK's).
  bool banded() const { return !band_.empty(); }
  // "Cholesky", "LU" (a symmetric block that is not positive definite, or an unsymmetric one),
  // or "least-squares QR" (a singular block).
  const char* method() const { return qr_ ? "least-squares QR" : lu_ ? "LU" : "Cholesky"; }

  // Entries of the lower triangle's envelope: for each row, from its first stored column to the
  // diagonal. A Cholesky factor in the natural order has no entry outside it.
  static double LowerEnvelope(const SpMat& a);
  // The largest i - j over the stored entries (i, j) below the diagonal (0 for a diagonal block).
  static int LowerBandwidth(const SpMat& a);

 private:
  // SimplicialLLT with the predicted size of its factor readable between analyzePattern and
  // factorize (Eigen keeps the per-column counts of its symbolic analysis protected).
  template <typename Ordering>
  class Cholesky : public Eigen::SimplicialLLT<SpMat, Eigen::Lower, Ordering> {
   public:
    double predicted_nonzeros() const { return static_cast<double>(this->m_nonZerosPerCol.sum()); }
  };
  template <typename Ordering>
  static Result<std::unique_ptr<Cholesky<Ordering>>> FactorCholesky(const SpMat& a,
                                                                    double& nonzeros);

  // How a symmetric positive definite block is factored: as it is (its band by LAPACK, or its
  // envelope by SimplicialLLT), or ordered by CHOLMOD. `fill`: the first two's factor size over
  // a's lower nonzeros.
  enum class SpdPath { kBand, kEnvelope, kCholmod };
  static SpdPath ChooseSpdPath(const SpMat& a, int& bandwidth, double& fill);
  // LAPACK's band Cholesky of a_ into band_ (dpbtrf); an error when a_ is not positive definite
  // or its band does not fit in memory.
  Status FactorBand(int bandwidth);
  // Cholesky of the symmetric a_: kNotPositiveDefinite when it is not; most_fill as in Factor.
  Status FactorSpd(double most_fill);
  // UMFPACK's LU of a_: kSingular when it is singular.
  Status FactorLu();
  // SuiteSparseQR's rank-revealing QR of a_, for a least-squares solve; `peak` bounds its memory.
  Status FactorQr(double peak);

  explicit BlockDirect(const SpMat& a) : a_(a) {}

  const SpMat& a_;
  std::unique_ptr<CholmodFactor> cholmod_;
  std::unique_ptr<Cholesky<Eigen::NaturalOrdering<int>>> natural_;
  // UMFPACK reads column-major storage.
  using ColMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;
  // UmfPackLU with UMFPACK's statistics readable (Eigen keeps them protected): the predicted
  // peak memory between analyzePattern and factorize, the factor's size after.
  class Umfpack : public Eigen::UmfPackLU<ColMat> {
   public:
    double statistic(int field) const { return m_umfpackInfo(field); }
  };
  ColMat columns_;
  std::unique_ptr<Umfpack> lu_;
  double lu_peak_ = 0;  // UMFPACK's estimate of its peak memory, in bytes
  // Rank-revealing QR of a singular block (SuiteSparseQR's indices are 64-bit).
  using LongMat = Eigen::SparseMatrix<double, Eigen::ColMajor, SuiteSparse_long>;
  std::unique_ptr<Eigen::SPQR<LongMat>> qr_;
  // LAPACK's band storage of the lower triangle, then its Cholesky factor in place (dpbtrf):
  // column j holds rows j..j + bandwidth_, band_[j * (bandwidth_ + 1) + (i - j)] = L(i, j).
  std::vector<double> band_;
  int bandwidth_ = 0;
  double factor_nonzeros_ = 0;
};

}  // namespace aiac::cg
