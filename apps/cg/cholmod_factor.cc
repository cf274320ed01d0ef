#include "apps/cg/cholmod_factor.h"

#include <algorithm>

#include "apps/cg/cg_messages.h"
#include "core/memory_budget.h"

namespace aiac::cg {

namespace {

// CSR of a symmetric matrix viewed as CSC: stype -1 reads what is then the lower triangle.
cholmod_sparse LowerView(const SpMat& a) {
  cholmod_sparse view{};
  view.nrow = view.ncol = static_cast<size_t>(a.rows());
  view.nzmax = static_cast<size_t>(a.nonZeros());
  view.p = const_cast<int*>(a.outerIndexPtr());
  view.i = const_cast<int*>(a.innerIndexPtr());
  view.nz = const_cast<int*>(a.innerNonZeroPtr());  // null when compressed
  view.x = const_cast<double*>(a.valuePtr());
  view.stype = -1;
  view.itype = CHOLMOD_INT;
  view.xtype = CHOLMOD_REAL;
  view.dtype = CHOLMOD_DOUBLE;
  view.sorted = 1;
  view.packed = a.isCompressed() ? 1 : 0;
  return view;
}

}  // namespace

void CholmodFactor::Start() {
  cholmod_start(&common_);
  started_ = true;
  common_.print = 0;
  common_.error_handler = nullptr;
}

void CholmodFactor::OnlyAmd() {
  common_.nmethods = 1;
  common_.method[0].ordering = CHOLMOD_AMD;
}

Result<double> CholmodFactor::AmdFill(const SpMat& a) {
  std::unique_ptr<CholmodFactor> f(new CholmodFactor());
  f->Start();
  f->OnlyAmd();
  f->common_.supernodal = CHOLMOD_SIMPLICIAL;  // the count is all that is wanted
  cholmod_sparse view = LowerView(a);
  AIAC_RETURN_IF_ERROR(f->Analyze(view));
  return f->common_.lnz / LowerNonzeros(a);
}

Result<std::unique_ptr<CholmodFactor>> CholmodFactor::Factor(const SpMat& a, double most_fill) {
  std::unique_ptr<CholmodFactor> f(new CholmodFactor());
  f->Start();
  cholmod_sparse view = LowerView(a);
  if (most_fill > 0) {
    // AMD alone first: METIS's analysis of a 3-D block costs more than an inner CG's whole
    // set-up, and AMD's fill tells a block that fills too much as well.
    f->OnlyAmd();
    AIAC_RETURN_IF_ERROR(f->Analyze(view));
    const double fill = f->common_.lnz / LowerNonzeros(a);
    if (fill > most_fill) {
      return ResourceExhausted("its factor would fill " + FormatDouble(fill) +
                               "x its lower triangle (more than " + FormatDouble(most_fill) + "x)");
    }
    // CHOLMOD's own choice stops at AMD's ordering when its fill is low (below 5x A's
    // nonzeros) or its factor cheap (under 500 flops per nonzero), else tries METIS too.
    if (f->common_.lnz >= 5 * static_cast<double>(a.nonZeros()) &&
        f->common_.fl >= 500 * f->common_.lnz) {
      cholmod_free_factor(&f->factor_, &f->common_);
      f->common_.nmethods = 0;
      AIAC_RETURN_IF_ERROR(f->Analyze(view));
    }
  } else {
    AIAC_RETURN_IF_ERROR(f->Analyze(view));
  }
  // Supernodal storage keeps some zeros: its size (xsize) can exceed nnz(L).
  const double predicted = std::max(f->common_.lnz, static_cast<double>(f->factor_->xsize)) +
                           static_cast<double>(a.rows());
  AIAC_RETURN_IF_ERROR(
      CheckFitsInMemory("the factor of a " + std::to_string(a.rows()) + "-row block (" +
                            std::to_string(static_cast<long long>(predicted)) + " nonzeros)",
                        predicted * 12));
  cholmod_factorize(&view, f->factor_, &f->common_);
  if (f->common_.status == CHOLMOD_NOT_POSDEF || f->factor_->minor < f->factor_->n) {
    return InvalidArgument(
        "the block is not positive definite (its Cholesky factorization failed)");
  }
  if (f->common_.status < CHOLMOD_OK) {
    return Internal("CHOLMOD could not factor the block (status " +
                    std::to_string(f->common_.status) + ")");
  }
  // A simplicial factor is LDL' and does not fail on a block that is not positive definite: its
  // D does. (D(j,j) is stored first in column j, where L's unit diagonal would be.)
  if (!f->factor_->is_super && !f->factor_->is_ll) {
    const auto* p = static_cast<const int*>(f->factor_->p);
    const auto* x = static_cast<const double*>(f->factor_->x);
    for (size_t j = 0; j < f->factor_->n; ++j) {
      if (!(x[p[j]] > 0)) {
        return InvalidArgument(
            "the block is not positive definite (its Cholesky factorization failed)");
      }
    }
  }
  f->nonzeros_ = f->common_.lnz;
  return f;
}

Status CholmodFactor::Analyze(cholmod_sparse& view) {
  factor_ = cholmod_analyze(&view, &common_);
  if (!factor_ || common_.status < CHOLMOD_OK) {
    return Internal("CHOLMOD could not analyze the block (status " +
                    std::to_string(common_.status) + ")");
  }
  return Status::Ok();
}

CholmodFactor::~CholmodFactor() {
  if (factor_) cholmod_free_factor(&factor_, &common_);
  if (started_) cholmod_finish(&common_);
}

bool CholmodFactor::Solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) {
  // Simplicial LL' from the first single solve on: its triangular solves are the faster ones
  // for one right-hand side.
  if (factor_->is_super && !cholmod_change_factor(CHOLMOD_REAL, 1, 0, 1, 1, factor_, &common_)) {
    return false;
  }
  cholmod_dense* out = SolveDense(b.data(), b.size(), 1);
  if (!out) return false;
  x = Eigen::Map<const Eigen::VectorXd>(static_cast<const double*>(out->x), b.size());
  cholmod_free_dense(&out, &common_);
  return true;
}

bool CholmodFactor::SolveMany(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) {
  cholmod_dense* out = SolveDense(b.data(), b.rows(), b.cols());
  if (!out) return false;
  x = Eigen::Map<const Eigen::MatrixXd>(static_cast<const double*>(out->x), b.rows(), b.cols());
  cholmod_free_dense(&out, &common_);
  return true;
}

cholmod_dense* CholmodFactor::SolveDense(const double* b, Eigen::Index rows, Eigen::Index cols) {
  cholmod_dense rhs{};
  rhs.nrow = rhs.d = static_cast<size_t>(rows);
  rhs.ncol = static_cast<size_t>(cols);
  rhs.nzmax = rhs.nrow * rhs.ncol;
  rhs.x = const_cast<double*>(b);
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  return cholmod_solve(CHOLMOD_A, factor_, &rhs, &common_);
}

const char* CholmodFactor::ordering() const {
  switch (factor_ ? factor_->ordering : -1) {
    case CHOLMOD_NATURAL:
      return "natural";
    case CHOLMOD_GIVEN:
      return "given";
    case CHOLMOD_AMD:
      return "amd";
    case CHOLMOD_METIS:
      return "metis";
    case CHOLMOD_NESDIS:
      return "nesdis";
    case CHOLMOD_COLAMD:
      return "colamd";
    case CHOLMOD_POSTORDERED:
      return "postordered";
    default:
      return "unknown";
  }
}

}  // namespace aiac::cg
