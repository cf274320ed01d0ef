#include "apps/cg/incomplete_cholesky.h"

#include <cmath>

namespace aiac::cg {

std::optional<IncompleteCholesky> IncompleteCholesky::Factor(const SpMat& a) {
  IncompleteCholesky f;
  for (const double alpha : {0.0, 1e-3, 1e-2, 1e-1, 1.0}) {
    if (f.Compute(a, alpha)) return f;
  }
  return std::nullopt;
}

bool IncompleteCholesky::Compute(const SpMat& a, double alpha) {
  const auto n = static_cast<size_t>(a.rows());
  const int* outer = a.outerIndexPtr();
  const int* inner = a.innerIndexPtr();
  const double* val = a.valuePtr();
  const int* nnz = a.isCompressed() ? nullptr : a.innerNonZeroPtr();
  outer_.assign(1, 0);
  inner_.clear();
  values_.clear();
  diag_.assign(n, 0);
  shift_ = alpha;
  std::vector<double> l_diag(n);
  for (size_t i = 0; i < n; ++i) {
    const int begin = outer[i];
    const int end = nnz ? begin + nnz[i] : outer[i + 1];
    double a_ii = 0;
    const auto row_start = static_cast<int>(inner_.size());
    for (int p = begin; p < end; ++p) {
      const int k = inner[p];
      if (k == static_cast<int>(i)) a_ii = val[p];
      if (k >= static_cast<int>(i)) continue;
      // L_ik = (a_ik - sum_{j < k} L_ij L_kj) / L_kk, over the entries of row i found so far
      // and row k of L (both ascending): IC(0) keeps only A's pattern.
      double s = val[p];
      int q = outer_[static_cast<size_t>(k)];
      const int q_end = outer_[static_cast<size_t>(k) + 1];
      for (auto m = static_cast<size_t>(row_start); m < inner_.size() && q < q_end;) {
        if (inner_[m] == inner_[static_cast<size_t>(q)]) {
          s -= values_[m] * values_[static_cast<size_t>(q)];
          ++m;
          ++q;
        } else if (inner_[m] < inner_[static_cast<size_t>(q)]) {
          ++m;
        } else {
          ++q;
        }
      }
      inner_.push_back(k);
      values_.push_back(s / l_diag[static_cast<size_t>(k)]);
    }
    double pivot = a_ii * (1 + alpha);
    for (auto m = static_cast<size_t>(row_start); m < inner_.size(); ++m)
      pivot -= values_[m] * values_[m];
    if (!(pivot > 0) || !std::isfinite(pivot)) return false;
    l_diag[i] = std::sqrt(pivot);
    diag_[i] = 1 / l_diag[i];
    outer_.push_back(static_cast<int>(inner_.size()));
  }
  return true;
}

double IncompleteCholesky::Apply(const double* r, double* z) const {
  const auto n = static_cast<int>(diag_.size());
  const int* outer = outer_.data();
  const int* inner = inner_.data();
  const double* val = values_.data();
  const double* inv = diag_.data();
  // L y = r, row by row.
  for (int i = 0; i < n; ++i) {
    double s = r[i];
    for (int p = outer[i]; p < outer[i + 1]; ++p) s -= val[p] * z[inner[p]];
    z[i] = s * inv[i];
  }
  // L^T z = y, by columns of L^T (rows of L) from the last: z_i is final when row i is reached.
  double rz = 0;
  for (int i = n - 1; i >= 0; --i) {
    const double zi = z[i] * inv[i];
    z[i] = zi;
    rz += r[i] * zi;
    for (int p = outer[i]; p < outer[i + 1]; ++p) z[inner[p]] -= val[p] * zi;
  }
  return rz;
}

}  // namespace aiac::cg
