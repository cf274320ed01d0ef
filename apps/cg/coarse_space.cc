#include "apps/cg/coarse_space.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <utility>

namespace aiac::cg {

size_t BasisBatch(Eigen::Index rows) {
  return std::clamp<size_t>(kBasisBatchEntries / std::max<size_t>(1, static_cast<size_t>(rows)), 1,
                            kBasisBatch);
}

Result<CoarseBasis> HarmonicBasis(const Block& block, int pieces, const BlockSolve& solve) {
  const auto own = static_cast<Eigen::Index>(block.own.size());
  const Eigen::Index rows = block.size();
  std::vector<Eigen::VectorXd> columns;
  columns.push_back(Eigen::VectorXd::Ones(own));  // Nicolaides: the constant on the own rows
  // The right-hand sides -A_lm s for every piece s of every coupling m, a batch at a time.
  struct Piece {
    const Block::Coupling* c;
    int first, last;  // its columns, [first, last)
  };
  std::vector<Piece> all;
  for (const Block::Coupling& c : block.in) {
    const auto m = static_cast<int>(c.cols.size());
    const int count = std::clamp(pieces, 1, std::max(1, m));
    for (int p = 0; p < count; ++p) all.push_back({&c, m * p / count, m * (p + 1) / count});
  }
  const size_t batch = BasisBatch(rows);
  Eigen::MatrixXd rhs, y;
  Eigen::VectorXd s;
  for (size_t first = 0; first < all.size(); first += batch) {
    const auto count = static_cast<Eigen::Index>(std::min(all.size() - first, batch));
    rhs.resize(rows, count);
    for (Eigen::Index j = 0; j < count; ++j) {
      const Piece& p = all[first + static_cast<size_t>(j)];
      s = Eigen::VectorXd::Zero(p.c->a.cols());
      s.segment(p.first, p.last - p.first).setOnes();
      rhs.col(j) = -(p.c->a * s);
    }
    AIAC_RETURN_IF_ERROR(solve(rhs, y));
    if (y.rows() != rows || y.cols() != count) return Internal("cg: a block solve lost its shape");
    for (Eigen::Index j = 0; j < count; ++j) {
      Eigen::VectorXd z(own);
      for (Eigen::Index k = 0; k < own; ++k) z[k] = y(block.own[static_cast<size_t>(k)], j);
      if (!z.allFinite()) return InvalidArgument("cg: a coarse function is not finite");
      if (z.cwiseAbs().maxCoeff() > 1e-12) columns.push_back(std::move(z));
    }
  }
  CoarseBasis basis;
  const auto functions = static_cast<Eigen::Index>(columns.size());
  basis.z.resize(own, functions);
  for (Eigen::Index j = 0; j < functions; ++j) basis.z.col(j) = columns[static_cast<size_t>(j)];
  Eigen::VectorXd b_own(own);
  for (Eigen::Index k = 0; k < own; ++k) b_own[k] = block.b[block.own[static_cast<size_t>(k)]];
  basis.zb = basis.z.transpose() * b_own;
  // A Z_l: on the block's rows from its matrix, on the columns outside it from the couplings (A
  // symmetric: a_ci = a_ic). Z_l is zero off the own rows, so each product visits A's entries in
  // own columns (the block's) or own rows (the couplings'), reading Z_l by rows; the same sums,
  // term by term, as products with Z_l spread over the block's rows, without two dense
  // block-sized matrices (on a 564,000-row block they took 0.3-0.5 s of page faults and strided
  // reads, a third of the functions' set-up).
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const RowMatrix z_rows = basis.z;
  std::vector<int> position(static_cast<size_t>(rows), -1);  // in the own rows
  for (Eigen::Index k = 0; k < own; ++k)
    position[static_cast<size_t>(block.own[static_cast<size_t>(k)])] = static_cast<int>(k);
  basis.w_own.resize(own, functions);
  std::vector<std::pair<int, Eigen::VectorXd>> far;
  Eigen::RowVectorXd w(functions);
  for (Eigen::Index r = 0; r < rows; ++r) {
    w.setZero();
    for (SpMat::InnerIterator it(block.local, r); it; ++it) {
      const int k = position[static_cast<size_t>(it.col())];
      if (k >= 0) w.noalias() += it.value() * z_rows.row(k);
    }
    if (const int k = position[static_cast<size_t>(r)]; k >= 0) {
      basis.w_own.row(k) = w;
    } else if (w.cwiseAbs().maxCoeff() > 0) {
      far.emplace_back(block.rows[static_cast<size_t>(r)], w.transpose());
    }
  }
  for (const Block::Coupling& c : block.in) {
    RowMatrix wc = RowMatrix::Zero(static_cast<Eigen::Index>(c.cols.size()), functions);
    for (Eigen::Index r = 0; r < rows; ++r) {
      const int k = position[static_cast<size_t>(r)];
      if (k < 0) continue;
      for (SpMat::InnerIterator it(c.a, r); it; ++it)
        wc.row(it.col()).noalias() += it.value() * z_rows.row(k);
    }
    for (Eigen::Index k = 0; k < wc.rows(); ++k) {
      if (wc.row(k).cwiseAbs().maxCoeff() > 0)
        far.emplace_back(c.cols[static_cast<size_t>(k)], wc.row(k).transpose());
    }
  }
  std::sort(far.begin(), far.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  basis.far_rows.reserve(far.size());
  basis.w_far.resize(static_cast<Eigen::Index>(far.size()), functions);
  for (size_t k = 0; k < far.size(); ++k) {
    basis.far_rows.push_back(far[k].first);
    basis.w_far.row(static_cast<Eigen::Index>(k)) = far[k].second.transpose();
  }
  return basis;
}

bool IsSymmetric(const SpRef& a) {
  if (a.rows() != a.cols()) return false;
  const double* v = a.valuePtr();
  bool same = true;
  const bool pattern = VisitMirrors(a, [&](int, int k, int m) {
    const double scale = std::max(std::abs(v[k]), std::abs(v[m]));
    if (std::abs(v[k] - v[m]) > 1e-12 * scale) same = false;
  });
  return pattern && same;
}

bool WantsCoarseSpace(const SpRef& a) {
  if (!IsSymmetric(a)) return false;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    double diagonal = 0, off = 0;
    for (SpRef::InnerIterator it(a, i); it; ++it) {
      if (it.col() == i) {
        diagonal = std::abs(it.value());
      } else {
        off += std::abs(it.value());
      }
    }
    if (diagonal - off < kDominanceMargin * diagonal) return true;
  }
  return false;
}

Result<CoarseProblem> CoarseProblem::Make(const std::vector<Eigen::MatrixXd>& block_rows) {
  Eigen::Index n = 0;
  for (const auto& r : block_rows) n += r.rows();
  Eigen::MatrixXd a0(n, n);
  Eigen::Index at = 0;
  for (const auto& r : block_rows) {
    if (r.cols() != n) {
      return InvalidArgument("cg: a block row of the coarse matrix has " +
                             std::to_string(r.cols()) + " columns, not " + std::to_string(n));
    }
    a0.middleRows(at, r.rows()) = r;
    at += r.rows();
  }
  if (n == 0) return InvalidArgument("cg: the coarse space is empty");
  if (!a0.allFinite()) return InvalidArgument("cg: the coarse matrix has non-finite entries");
  const double scale = a0.cwiseAbs().maxCoeff();
  if ((a0 - a0.transpose()).cwiseAbs().maxCoeff() > 1e-8 * scale) {
    return InvalidArgument(
        "cg: the coarse matrix Z^T A Z is not symmetric: coarse = \"harmonic\" "
        "needs a symmetric matrix");
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen((a0 + a0.transpose()) / 2);
  if (eigen.info() != Eigen::Success) return InvalidArgument("cg: the coarse matrix's eigenvalues");
  const Eigen::VectorXd& lambda = eigen.eigenvalues();  // ascending
  const double largest = lambda[n - 1];
  if (!(largest > 0) || lambda[0] < -1e-8 * largest) {
    return InvalidArgument(
        "cg: the coarse matrix Z^T A Z is not positive semi-definite: "
        "coarse = \"harmonic\" needs a symmetric positive definite matrix");
  }
  Eigen::Index first = 0;
  while (lambda[first] <= 1e-12 * largest) ++first;
  CoarseProblem p;
  p.v_ = eigen.eigenvectors().rightCols(n - first);
  p.inv_ = lambda.tail(n - first).cwiseInverse();
  return p;
}

Eigen::VectorXd CoarseProblem::Solve(const Eigen::VectorXd& r) const {
  return v_ * (inv_.cwiseProduct(v_.transpose() * r));
}

}  // namespace aiac::cg
