#include "apps/cg/block_cg.h"

#include <cmath>

namespace aiac::cg {

BlockCg::BlockCg(const SpMat& a) : a_(a), inv_diag_(a.rows()), r_(a.rows()), z_(a.rows()), p_(a.rows()), q_(a.rows()) {
  for (int i = 0; i < a.rows(); ++i) {
    const double d = a.coeff(i, i);
    inv_diag_[i] = d != 0 ? 1.0 / d : 1.0;
  }
}

BlockCg::Outcome BlockCg::Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x, double tolerance, int max_iterations) {
  const double b_norm = b.norm();
  if (b_norm == 0) {
    x.setZero();
    return {0, 0};
  }
  r_.noalias() = b - a_ * x;
  double r_norm = r_.norm();
  const double target = tolerance * b_norm;
  if (r_norm <= target) return {0, r_norm / b_norm};
  z_ = inv_diag_.cwiseProduct(r_);
  p_ = z_;
  double rz = r_.dot(z_);
  int k = 0;
  for (; k < max_iterations; ++k) {
    q_.noalias() = a_ * p_;  // row-major SpMV: one pass over the block
    const double alpha = rz / p_.dot(q_);
    x.noalias() += alpha * p_;
    r_.noalias() -= alpha * q_;
    r_norm = r_.norm();
    if (r_norm <= target) {
      ++k;
      break;
    }
    z_ = inv_diag_.cwiseProduct(r_);
    const double rz_next = r_.dot(z_);
    p_ = z_ + (rz_next / rz) * p_;
    rz = rz_next;
  }
  return {k, r_norm / b_norm};
}

}  // namespace aiac::cg
