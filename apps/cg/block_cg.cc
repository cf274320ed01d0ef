#include "apps/cg/block_cg.h"

#include <algorithm>
#include <cmath>

namespace aiac::cg {
namespace {

// ||A - A^T||_F <= 1e-14 max(1, ||A||_F), read from A's rows with a search for each entry's
// mirror: no transpose is built (on a 400,000-row block that took 0.3 s of the task's set-up).
bool IsSymmetricBySearch(const SpMat& a) {
  const int* outer = a.outerIndexPtr();
  const int* inner = a.innerIndexPtr();
  const double* val = a.valuePtr();
  double diff2 = 0, norm2 = 0;
  for (int i = 0; i < a.rows(); ++i) {
    for (int k = outer[i]; k < outer[i + 1]; ++k) {
      const int j = inner[k];
      norm2 += val[k] * val[k];
      if (j == i) continue;
      const int* row_j = inner + outer[j];
      const int* end_j = inner + outer[j + 1];
      const int* at = std::lower_bound(row_j, end_j, i);
      // (A - A^T)_ij = a_ij - a_ji; an entry with no mirror counts at (i, j) and at (j, i).
      if (at != end_j && *at == i) {
        const double d = val[k] - val[at - inner];
        diff2 += d * d;
      } else {
        diff2 += 2 * val[k] * val[k];
      }
    }
  }
  return std::sqrt(diff2) <= 1e-14 * std::max(1.0, std::sqrt(norm2));
}

// The same test in one pass without a search when the pattern is symmetric (a block of a
// symmetric matrix always is; a third of the search's time on a 200,000-row banded block), each
// entry above the diagonal against its mirror (VisitMirrors). Any other pattern: the search.
bool IsSymmetric(const SpMat& a) {
  const double* val = a.valuePtr();
  double diff2 = 0;
  const bool mirrored = VisitMirrors(a, [&](int, int k, int m) {
    const double d = val[k] - val[m];
    diff2 += 2 * d * d;  // at (i, j) and at (j, i)
  });
  if (!mirrored) return IsSymmetricBySearch(a);
  return std::sqrt(diff2) <= 1e-14 * std::max(1.0, a.norm());
}

}  // namespace

BlockCg::BlockCg(const SpMat& a)
    : a_(a), inv_diag_(a.rows()), r_(a.rows()), z_(a.rows()), p_(a.rows()), q_(a.rows()) {
  for (int i = 0; i < a.rows(); ++i) {
    const double d = a.coeff(i, i);
    inv_diag_[i] = d != 0 ? 1.0 / d : 1.0;
  }
  if (!IsSymmetric(a)) {
    bicgstab_ = std::make_unique<Eigen::BiCGSTAB<SpMat, Eigen::DiagonalPreconditioner<double>>>();
    bicgstab_->compute(a);
  } else if ((a.diagonal().array() <= 0).any()) {
    // A positive definite matrix has a positive diagonal: this one is not, CG would break down.
    UseMinres();
  }
}

void BlockCg::UseIncompleteCholesky() {
  if (!bicgstab_ && !minres_ && !ic_ && !amg_) ic_ = IncompleteCholesky::Factor(a_);
}

void BlockCg::UseAlgebraicMultigrid() {
  if (!bicgstab_ && !minres_ && !ic_ && !amg_) amg_ = SmoothedAggregation::Make(a_);
}

const char* BlockCg::preconditioner() const {
  return ic_ ? " with IC(0)" : amg_ ? " with AMG" : " with Jacobi";
}

double BlockCg::Precondition(const double* r, double* z) {
  return ic_ ? ic_->Apply(r, z) : amg_->Apply(r, z);
}

void BlockCg::UseMinres() {
  minres_ = std::make_unique<
      Eigen::MINRES<SpMat, Eigen::Lower | Eigen::Upper, AbsDiagonalPreconditioner>>();
  minres_->compute(a_);
}

template <typename Solver>
BlockCg::Outcome BlockCg::SolveWith(Solver& solver, const char* name, const Eigen::VectorXd& b,
                                    Eigen::VectorXd& x, double tolerance, int max_iterations,
                                    double b_norm) {
  solver.setTolerance(tolerance);
  solver.setMaxIterations(max_iterations);
  x = solver.solveWithGuess(b, x);
  const double residual = (b - a_ * x).norm() / b_norm;
  std::string breakdown;
  if (solver.info() == Eigen::NumericalIssue) {
    breakdown = std::string(name) + " broke down (numerical issue)";
  } else if (!std::isfinite(residual)) {
    breakdown = std::string(name) + " produced non-finite values";
  }
  return {static_cast<int>(solver.iterations()), residual, breakdown};
}

template <typename MatType>
BlockCg::AbsDiagonalPreconditioner& BlockCg::AbsDiagonalPreconditioner::factorize(
    const MatType& mat) {
  m_invdiag.resize(mat.cols());
  for (Eigen::Index i = 0; i < mat.rows(); ++i) {
    const double d = std::abs(mat.coeff(i, i));
    m_invdiag(i) = d != 0 ? 1.0 / d : 1.0;
  }
  m_isInitialized = true;
  return *this;
}

double BlockCg::MultiplyP() {
  const int* outer = a_.outerIndexPtr();
  const int* inner = a_.innerIndexPtr();
  const double* val = a_.valuePtr();
  const double* p = p_.data();
  double* q = q_.data();
  double pq = 0;
  for (Eigen::Index i = 0; i < a_.rows(); ++i) {
    // Two accumulators: the adds of one row's products no longer wait on each other.
    double s0 = 0, s1 = 0;
    int j = outer[i];
    const int end = outer[i + 1];
    for (; j + 1 < end; j += 2) {
      s0 += val[j] * p[inner[j]];
      s1 += val[j + 1] * p[inner[j + 1]];
    }
    if (j < end) s0 += val[j] * p[inner[j]];
    const double sum = s0 + s1;
    q[i] = sum;
    pq += p[i] * sum;
  }
  return pq;
}

BlockCg::Outcome BlockCg::Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x, double tolerance,
                                int max_iterations, double reduction) {
  const double b_norm = b.norm();
  if (b_norm == 0) {
    x.setZero();
    return {0, 0, ""};
  }
  // A reduction is turned into a tolerance relative to ||b||, which Eigen's solvers take.
  auto reduce = [&](double r_norm) {
    if (reduction > 0) tolerance = std::max(tolerance, reduction * r_norm / b_norm);
  };
  if (bicgstab_ || minres_) {
    if (reduction > 0) reduce((b - a_ * x).norm());
    if (bicgstab_)
      return SolveWith(*bicgstab_, "BiCGSTAB", b, x, tolerance, max_iterations, b_norm);
    return SolveWith(*minres_, "MINRES", b, x, tolerance, max_iterations, b_norm);
  }
  r_.noalias() = b - a_ * x;
  double rr = r_.squaredNorm();
  reduce(std::sqrt(rr));
  const Eigen::Index n = a_.rows();
  double* xp = x.data();
  double* r = r_.data();
  double* z = z_.data();
  double* p = p_.data();
  double* q = q_.data();
  const double* inv = inv_diag_.data();

  const double target2 = tolerance * tolerance * b_norm * b_norm;
  if (rr <= target2) return {0, std::sqrt(rr) / b_norm, ""};
  if (!std::isfinite(rr)) return {0, rr, "the residual is not finite"};
  double rz = 0;
  const bool preconditioned = ic_ || amg_;
  if (preconditioned) {
    rz = Precondition(r, z);
    p_ = z_;
  } else {
    for (Eigen::Index i = 0; i < n; ++i) {
      z[i] = inv[i] * r[i];
      p[i] = z[i];
      rz += r[i] * z[i];
    }
  }
  int k = 0;
  // Three passes over the vectors per iteration instead of the textbook seven: q = A p fused
  // with p.q; x, r, z updated with r.r and r.z in one sweep; then p.
  while (k < max_iterations) {
    const double pq = MultiplyP();
    // (rz <= 0: the Jacobi preconditioner itself is not positive definite, a negative diagonal.)
    if ((!(pq > 0) || !(rz > 0)) && std::isfinite(pq) && std::isfinite(rz)) {
      // Negative or zero curvature: the block is not positive definite, and CG cannot go on.
      // MINRES can, on any symmetric block, from the iterate CG reached.
      UseMinres();
      Outcome rest = SolveWith(*minres_, "MINRES", b, x, tolerance, max_iterations, b_norm);
      rest.iterations += k;
      return rest;
    }
    const double alpha = rz / pq;
    double rr_next = 0, rz_next = 0;
    if (preconditioned) {
      for (Eigen::Index i = 0; i < n; ++i) {
        xp[i] += alpha * p[i];
        const double ri = r[i] - alpha * q[i];
        r[i] = ri;
        rr_next += ri * ri;
      }
    } else {
      for (Eigen::Index i = 0; i < n; ++i) {
        xp[i] += alpha * p[i];
        const double ri = r[i] - alpha * q[i];
        r[i] = ri;
        const double zi = inv[i] * ri;
        z[i] = zi;
        rr_next += ri * ri;
        rz_next += ri * zi;
      }
    }
    ++k;
    rr = rr_next;
    if (rr <= target2) break;
    if (preconditioned) rz_next = Precondition(r, z);
    const double beta = rz_next / rz;
    rz = rz_next;
    for (Eigen::Index i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
  if (!std::isfinite(rr)) return {k, rr, "the residual is not finite"};
  return {k, std::sqrt(rr) / b_norm, ""};
}

}  // namespace aiac::cg
