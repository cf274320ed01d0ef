// The inner solver of the multisplitting method: preconditioned conjugate gradient on one task's
// diagonal block A_ll, warm-started from the previous iterate. Its preconditioner is Jacobi, or
// the block's incomplete Cholesky factor IC(0) (incomplete_cholesky.h) or a smoothed-aggregation
// multigrid cycle (smoothed_aggregation.h) when asked and the block has one.
// CG needs a symmetric positive definite block: an unsymmetric one (from a `general` Matrix
// Market file) is solved with Eigen's BiCGSTAB instead, same preconditioner and tolerance, and a
// symmetric one that turns out not to be positive definite (CG meets a direction of negative
// or zero curvature: indefinite, negative definite or singular) with MINRES from then on, whose
// Jacobi preconditioner takes the diagonal's magnitudes (MINRES needs a positive definite one);
// on a singular consistent block MINRES reaches a solution all the same.
// Pure; allocates its work vectors once per solver.
#pragma once

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/Sparse>
#include <memory>
#include <optional>
#include <string>
#include <unsupported/Eigen/IterativeSolvers>

#include "apps/cg/cg_problem.h"
#include "apps/cg/incomplete_cholesky.h"
#include "apps/cg/smoothed_aggregation.h"

namespace aiac::cg {

class BlockCg {
 public:
  // `a` must be symmetric positive definite (the diagonal block of a diagonally dominant or SPD
  // matrix is). Keeps a reference: `a` must outlive the solver.
  explicit BlockCg(const SpMat& a);
  bool symmetric() const { return !bicgstab_; }
  // From now on CG is preconditioned by the block's IC(0) factor instead of Jacobi, when the
  // block is symmetric with a positive diagonal and has one (incomplete_cholesky.h); else
  // nothing changes. Costs about a product with the block.
  void UseIncompleteCholesky();
  // From now on CG is preconditioned by one V-cycle of the block's smoothed-aggregation
  // hierarchy, when the block is symmetric with a positive diagonal; else nothing changes. Costs
  // a few products with the block.
  void UseAlgebraicMultigrid();
  // Whether CG runs with the incomplete Cholesky factor, with the multigrid cycle.
  bool incomplete_cholesky() const { return ic_.has_value(); }
  bool algebraic_multigrid() const { return amg_.has_value(); }
  // " with IC(0)", " with AMG" or " with Jacobi": what CG runs with, for a block's description.
  const char* preconditioner() const;
  // "CG", "MINRES" (a symmetric block CG found not positive definite) or "BiCGSTAB".
  const char* method() const { return bicgstab_ ? "BiCGSTAB" : minres_ ? "MINRES" : "CG"; }

  struct Outcome {
    int iterations;
    double relative_residual;  // ||b - A x|| / ||b||
    std::string breakdown;     // non-empty: the solver broke down (why); x is then not to be used
  };
  // Improves x (in place) until ||b - A x|| <= tolerance ||b||, or <= reduction ||b - A x0||
  // where x0 is x on entry (an inexact solve: the two-stage method, cg_task.h), or
  // `max_iterations`. A breakdown
  // (CG: a direction with p'Ap <= 0, the block is not positive definite; BiCGSTAB: Eigen's
  // numerical issue; either: a non-finite residual) is reported, never taken for an answer.
  Outcome Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x, double tolerance, int max_iterations,
                double reduction = 0);

 private:
  // One of Eigen's iterative solvers, `name` in a breakdown's message: BiCGSTAB (Jacobi
  // preconditioner) for an unsymmetric block, MINRES for a symmetric one that is not positive
  // definite.
  template <typename Solver>
  Outcome SolveWith(Solver& solver, const char* name, const Eigen::VectorXd& b, Eigen::VectorXd& x,
                    double tolerance, int max_iterations, double b_norm);
  // From now on MINRES solves this symmetric block: it is not positive definite.
  void UseMinres();
  // q = A p, fused with p'q (returned): one pass over the block.
  double MultiplyP();

  const SpMat& a_;
  Eigen::VectorXd inv_diag_, r_, z_, p_, q_;
  std::optional<IncompleteCholesky> ic_;
  std::optional<SmoothedAggregation> amg_;
  // z = M^{-1} r with IC(0) or the cycle, and returns r'z.
  double Precondition(const double* r, double* z);
  std::unique_ptr<Eigen::BiCGSTAB<SpMat, Eigen::DiagonalPreconditioner<double>>> bicgstab_;
  // Jacobi with the diagonal's magnitudes: positive definite whatever the block's signs.
  class AbsDiagonalPreconditioner : public Eigen::DiagonalPreconditioner<double> {
   public:
    template <typename MatType>
    AbsDiagonalPreconditioner& factorize(const MatType& mat);
    template <typename MatType>
    AbsDiagonalPreconditioner& compute(const MatType& mat) {
      return factorize(mat);
    }
  };
  std::unique_ptr<Eigen::MINRES<SpMat, Eigen::Lower | Eigen::Upper, AbsDiagonalPreconditioner>>
      minres_;
};

}  // namespace aiac::cg
