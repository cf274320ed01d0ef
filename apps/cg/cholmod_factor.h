// The sparse Cholesky factor of an SPD block that is not banded (docs/user-guide.md), by CHOLMOD
// (SuiteSparse): its analysis picks the fill-reducing ordering (AMD, and METIS's nested
// dissection when AMD's fill is high), the numbers are factored supernodally (dense kernels
// through BLAS). The factor stays supernodal for solves with many right-hand sides (the coarse
// space's, coarse_space.h), whose dense kernels then go through BLAS too, and is turned
// simplicial at the first single solve: its triangular solves are the faster ones for the one
// right-hand side of every outer iteration.
//
// Measured on the 182,700-row block of a 700 x 700 grid in 4 strips with overlap (one run,
// OpenBLAS serial): Eigen's SimplicialLLT (AMD) factors in 1.67 s and solves in 45 ms; CHOLMOD
// supernodal factors in 0.81 s, and its simplicial factor solves in 25 ms. With 32 right-hand
// sides at once (one run each, OpenBLAS serial): 0.54 s supernodal, 0.67 s simplicial, 32 single
// solves 1.4-2.1 s on a 300,000-row block of a 2-D grid; 0.61 s, 1.36 s and 2.5-3.0 s on a
// 128,000-row block of a 3-D one.
//
// The matrix is viewed, not copied: a row-major symmetric matrix's rows are its columns.
#pragma once

#include <cholmod.h>

#include <memory>
#include <string>

#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {

class CholmodFactor {
 public:
  // Factors the symmetric matrix `a` (its lower triangle is read). Refused with the reason: not
  // positive definite, or a factor whose predicted size does not fit the memory this process may
  // use (core/memory_budget.h), or (most_fill > 0) would have more than most_fill times the
  // nonzeros of a's lower triangle (kResourceExhausted, "fills ..."), checked between the
  // analysis and the numbers.
  static Result<std::unique_ptr<CholmodFactor>> Factor(const SpMat& a, double most_fill = 0);
  // The fill Factor(a, most_fill) checks against most_fill: the nonzeros of a's factor in AMD's
  // ordering over those of a's lower triangle, from the symbolic analysis alone (no numbers).
  static Result<double> AmdFill(const SpMat& a);
  ~CholmodFactor();
  CholmodFactor(const CholmodFactor&) = delete;
  CholmodFactor& operator=(const CholmodFactor&) = delete;

  // x = A^-1 b; false when CHOLMOD could not solve. The first one turns the factor simplicial.
  bool Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x);
  // X = A^-1 B, all columns in one pass; false when CHOLMOD could not solve.
  bool SolveMany(const Eigen::MatrixXd& b, Eigen::MatrixXd& x);
  double factor_nonzeros() const { return nonzeros_; }
  // The ordering CHOLMOD chose: "amd", "metis", "nesdis", "natural", ...
  const char* ordering() const;

 private:
  CholmodFactor() = default;
  // cholmod_start, without messages on stdout (errors come back as statuses).
  void Start();
  // common_'s ordering methods: AMD alone.
  void OnlyAmd();
  // factor_ = the analysis of `view` with common_'s ordering methods.
  Status Analyze(cholmod_sparse& view);
  // A^-1 B for the column-major rows x cols matrix at b, for the caller to free; null when
  // CHOLMOD could not solve.
  cholmod_dense* SolveDense(const double* b, Eigen::Index rows, Eigen::Index cols);

  cholmod_common common_{};  // CHOLMOD's workspace, used by every solve
  bool started_ = false;
  cholmod_factor* factor_ = nullptr;
  double nonzeros_ = 0;
};

}  // namespace aiac::cg
