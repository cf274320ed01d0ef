#include "apps/cg/block_direct.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/memory_budget.h"

// LAPACK (Fortran calling convention: arguments by address, each character argument's length
// after the others).
extern "C" {
void dpbtrf_(const char* uplo, const int* n, const int* kd, double* ab, const int* ldab, int* info,
             size_t uplo_len);
void dpbtrs_(const char* uplo, const int* n, const int* kd, const int* nrhs, const double* ab,
             const int* ldab, double* b, const int* ldb, int* info, size_t uplo_len);
}

namespace aiac::cg {

double BlockDirect::LowerEnvelope(const SpMat& a) {
  double envelope = 0;
  for (Eigen::Index i = 0; i < a.outerSize(); ++i) {
    SpMat::InnerIterator it(a, i);  // columns ascending: the first is the row's leftmost
    envelope += it && it.col() < i ? static_cast<double>(i - it.col() + 1) : 1;
  }
  return envelope;
}

int BlockDirect::LowerBandwidth(const SpMat& a) {
  int bandwidth = 0;
  for (Eigen::Index i = 0; i < a.outerSize(); ++i) {
    SpMat::InnerIterator it(a, i);
    if (it && it.col() < i) bandwidth = std::max(bandwidth, static_cast<int>(i - it.col()));
  }
  return bandwidth;
}

template <typename Ordering>
Result<std::unique_ptr<BlockDirect::Cholesky<Ordering>>> BlockDirect::FactorCholesky(
    const SpMat& a, double& nonzeros) {
  auto llt = std::make_unique<Cholesky<Ordering>>();
  llt->analyzePattern(a);
  const double predicted = llt->predicted_nonzeros() + static_cast<double>(a.rows());
  // Checked before the numbers are computed: 8 bytes of value and 4 of index per nonzero.
  AIAC_RETURN_IF_ERROR(
      CheckFitsInMemory("the factor of a " + std::to_string(a.rows()) + "-row block (" +
                            std::to_string(static_cast<long long>(predicted)) + " nonzeros)",
                        predicted * 12));
  llt->factorize(a);
  if (llt->info() != Eigen::Success) {
    return InvalidArgument(
        "the block is not positive definite (its Cholesky factorization failed)");
  }
  nonzeros = predicted;
  return llt;
}

Status BlockDirect::FactorBand(int bandwidth) {
  const SpMat& a = a_;
  const int n = static_cast<int>(a.rows()), ld = bandwidth + 1;
  const double band = static_cast<double>(n) * ld;
  AIAC_RETURN_IF_ERROR(CheckFitsInMemory("the band factor of a " + std::to_string(n) +
                                             "-row block (bandwidth " + std::to_string(bandwidth) +
                                             ")",
                                         band * sizeof(double)));
  band_.assign(static_cast<size_t>(band), 0.0);
  for (int i = 0; i < n; ++i) {
    for (SpMat::InnerIterator it(a, i); it && it.col() <= i; ++it) {
      const auto j = static_cast<size_t>(it.col());
      band_[j * static_cast<size_t>(ld) + static_cast<size_t>(i - it.col())] = it.value();
    }
  }
  int info = 0;
  dpbtrf_("L", &n, &bandwidth, band_.data(), &ld, &info, 1);
  if (info != 0) {
    band_.clear();
    return InvalidArgument(
        "the block is not positive definite (its Cholesky factorization failed)");
  }
  bandwidth_ = bandwidth;
  factor_nonzeros_ = band;
  return Status::Ok();
}

namespace {

// Why a factorization failed, told apart by its text: the next one is tried only for these.
constexpr std::string_view kNotPositiveDefinite = "the block is not positive definite";
constexpr std::string_view kSingular = "the block is singular";

bool Says(const Status& s, std::string_view what) {
  return s.code() == StatusCode::kInvalidArgument && s.message().starts_with(what);
}

}  // namespace

BlockDirect::SpdPath BlockDirect::ChooseSpdPath(const SpMat& a, int& bandwidth, double& fill) {
  const double lower = LowerNonzeros(a);
  bandwidth = LowerBandwidth(a);
  const double band = static_cast<double>(a.rows()) * (bandwidth + 1);
  fill = band / lower;
  // (LAPACK indexes the band with ints.)
  if (band <= 2 * lower && band < std::numeric_limits<int>::max()) return SpdPath::kBand;
  fill = LowerEnvelope(a) / lower;
  return fill <= 2 ? SpdPath::kEnvelope : SpdPath::kCholmod;
}

Result<double> BlockDirect::PredictedFill(const SpMat& a) {
  int bandwidth = 0;
  double fill = 0;
  if (ChooseSpdPath(a, bandwidth, fill) != SpdPath::kCholmod) return fill;
  return CholmodFactor::AmdFill(a);
}

Status BlockDirect::FactorSpd(double most_fill) {
  const SpMat& a = a_;
  int bandwidth = 0;
  double fill = 0;
  const SpdPath path = ChooseSpdPath(a, bandwidth, fill);
  if (path == SpdPath::kBand) return FactorBand(bandwidth);
  if (path == SpdPath::kEnvelope) {
    AIAC_ASSIGN_OR_RETURN(natural_,
                          FactorCholesky<Eigen::NaturalOrdering<int>>(a, factor_nonzeros_));
    return Status::Ok();
  }
  AIAC_ASSIGN_OR_RETURN(cholmod_, CholmodFactor::Factor(a, most_fill));
  factor_nonzeros_ = cholmod_->factor_nonzeros();
  return Status::Ok();
}

Status BlockDirect::FactorLu() {
  columns_ = a_;
  columns_.makeCompressed();
  lu_ = std::make_unique<Umfpack>();
  lu_->umfpackControl()(UMFPACK_IRSTEP) = 0;  // no refinement steps: the outer iteration refines
  lu_->analyzePattern(columns_);
  if (lu_->info() != Eigen::Success) {
    return InvalidArgument("the block cannot be factored (UMFPACK's analysis failed)");
  }
  // Checked before the numbers are computed: UMFPACK's own estimate of its peak memory.
  const double peak =
      lu_->statistic(UMFPACK_PEAK_MEMORY_ESTIMATE) * lu_->statistic(UMFPACK_SIZE_OF_UNIT);
  lu_peak_ = peak;
  AIAC_RETURN_IF_ERROR(
      CheckFitsInMemory("the LU factors of a " + std::to_string(a_.rows()) + "-row block", peak));
  lu_->factorize(columns_);
  // UMFPACK finishes a singular matrix's factors, with zeros on U's diagonal, and says so: they
  // cannot be solved with.
  const double rcond = lu_->statistic(UMFPACK_RCOND);
  if (lu_->info() != Eigen::Success || !(rcond > 1e3 * std::numeric_limits<double>::epsilon())) {
    lu_.reset();
    return Status(StatusCode::kInvalidArgument,
                  std::string(kSingular) + " (LU finds its condition number over 1e13)");
  }
  factor_nonzeros_ = lu_->statistic(UMFPACK_LNZ) + lu_->statistic(UMFPACK_UNZ);
  return Status::Ok();
}

Status BlockDirect::FactorQr(double peak) {
  // SuiteSparseQR gives no estimate before it factors: the LU's peak, twice, bounds it here
  // (Q's Householder vectors and R take about what L and U take, for a square block).
  AIAC_RETURN_IF_ERROR(CheckFitsInMemory(
      "the QR factors of a singular " + std::to_string(a_.rows()) + "-row block", 2 * peak));
  qr_ = std::make_unique<Eigen::SPQR<LongMat>>();
  qr_->compute(LongMat(a_));
  if (qr_->info() != Eigen::Success) {
    qr_.reset();
    return InvalidArgument(std::string(kSingular) + " and its QR factorization failed");
  }
  factor_nonzeros_ = static_cast<double>(qr_->matrixR().nonZeros());
  return Status::Ok();
}

Result<std::unique_ptr<BlockDirect>> BlockDirect::Factor(const SpMat& a, bool symmetric,
                                                         double most_fill) {
  std::unique_ptr<BlockDirect> d(new BlockDirect(a));
  if (symmetric) {
    Status spd = d->FactorSpd(most_fill);
    if (spd.ok()) return d;
    if (!Says(spd, kNotPositiveDefinite)) return spd;
    d.reset(new BlockDirect(a));  // (what the failed attempt left)
  }
  Status lu = d->FactorLu();
  if (lu.ok()) return d;
  if (!Says(lu, kSingular)) return lu;
  AIAC_RETURN_IF_ERROR(d->FactorQr(d->lu_peak_));
  return d;
}

BlockDirect::Outcome BlockDirect::Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x,
                                        bool measure) const {
  const double b_norm = b.norm();
  if (b_norm == 0) {
    x.setZero();
    return {0, ""};
  }
  bool ok;
  if (!band_.empty()) {
    x = b;
    const int n = static_cast<int>(b.size()), ld = bandwidth_ + 1, one = 1;
    int info = 0;
    dpbtrs_("L", &n, &bandwidth_, &one, band_.data(), &ld, x.data(), &n, &info, 1);
    ok = info == 0;
  } else if (natural_) {
    x = natural_->solve(b);
    ok = natural_->info() == Eigen::Success;
  } else if (cholmod_) {
    ok = cholmod_->Solve(b, x);
  } else if (lu_) {
    x = lu_->solve(b);
    ok = lu_->info() == Eigen::Success;
  } else {
    x = qr_->solve(b);
    ok = qr_->info() == Eigen::Success;
  }
  const double residual = measure ? (b - a_ * x).norm() / b_norm : -1;
  if (!ok) return {residual, "the solve with the block's factor failed"};
  if (measure ? !std::isfinite(residual) : !x.allFinite()) {
    return {residual, "the solve with the block's factor produced non-finite values"};
  }
  return {residual, ""};
}

BlockDirect::Outcome BlockDirect::SolveMany(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const {
  if (cholmod_) {
    if (!cholmod_->SolveMany(b, x)) return {-1, "the solve with the block's factor failed"};
    if (!x.allFinite()) return {-1, "the solve with the block's factor produced non-finite values"};
    return {-1, ""};
  }
  x.resize(b.rows(), b.cols());
  Eigen::VectorXd column;
  for (Eigen::Index j = 0; j < b.cols(); ++j) {
    Outcome o = Solve(b.col(j), column, false);
    if (!o.breakdown.empty()) return o;
    x.col(j) = column;
  }
  return {-1, ""};
}

}  // namespace aiac::cg
