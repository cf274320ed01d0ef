#include "apps/cg/block_direct.h"

#include <cmath>

#include "core/memory_budget.h"

namespace aiac::cg {

Result<std::unique_ptr<BlockDirect>> BlockDirect::Factor(const SpMat& a, bool symmetric) {
  std::unique_ptr<BlockDirect> d(new BlockDirect(a));
  const std::string what = "the factor of a " + std::to_string(a.rows()) + "-row block";
  if (symmetric) {
    d->llt_ = std::make_unique<Cholesky>();
    d->llt_->analyzePattern(a);
    const double predicted = d->llt_->predicted_nonzeros() + static_cast<double>(a.rows());
    // Checked before the numbers are computed: 8 bytes of value and 4 of index per nonzero.
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory(what + " (" + std::to_string(static_cast<long long>(predicted)) +
                                               " nonzeros)",
                                           predicted * 12));
    d->llt_->factorize(a);
    if (d->llt_->info() != Eigen::Success) {
      return InvalidArgument("the block is not positive definite (its Cholesky factorization failed)");
    }
    d->factor_nonzeros_ = predicted;
    return d;
  }
  d->columns_ = a;
  d->columns_.makeCompressed();
  d->lu_ = std::make_unique<Eigen::SparseLU<ColMat, Eigen::COLAMDOrdering<int>>>();
  d->lu_->analyzePattern(d->columns_);
  d->lu_->factorize(d->columns_);
  if (d->lu_->info() != Eigen::Success) {
    return InvalidArgument("the block is singular (its LU factorization failed: " + d->lu_->lastErrorMessage() + ")");
  }
  // (SparseLU predicts no fill before it factors: unsymmetric blocks are checked afterwards
  // only by the allocation itself.)
  d->factor_nonzeros_ = static_cast<double>(d->lu_->nnzL() + d->lu_->nnzU());
  return d;
}

BlockDirect::Outcome BlockDirect::Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const {
  const double b_norm = b.norm();
  if (b_norm == 0) {
    x.setZero();
    return {0, ""};
  }
  bool ok;
  if (llt_) {
    x = llt_->solve(b);
    ok = llt_->info() == Eigen::Success;
  } else {
    x = lu_->solve(b);
    ok = lu_->info() == Eigen::Success;
  }
  const double residual = (b - a_ * x).norm() / b_norm;
  if (!ok) return {residual, "the solve with the block's factor failed"};
  if (!std::isfinite(residual)) return {residual, "the solve with the block's factor produced non-finite values"};
  return {residual, ""};
}

}  // namespace aiac::cg
