#include "apps/cg/smoothed_aggregation.h"

#include <algorithm>
#include <cmath>

namespace aiac::cg {
namespace {

// Row i of M times x, M in compressed rows.
inline double RowTimes(const SpMat& m, const double* x, Eigen::Index i) {
  const int* inner = m.innerIndexPtr();
  const double* val = m.valuePtr();
  double s = 0;
  for (int k = m.outerIndexPtr()[i]; k < m.outerIndexPtr()[i + 1]; ++k) s += val[k] * x[inner[k]];
  return s;
}

// y = M x.
void Multiply(const SpMat& m, const double* x, double* y) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) y[i] = RowTimes(m, x, i);
}

// y += M x.
void MultiplyAdd(const SpMat& m, const double* x, double* y) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) y[i] += RowTimes(m, x, i);
}

// res = b - A x.
void Residual(const SpMat& a, const double* b, const double* x, double* res) {
  for (Eigen::Index i = 0; i < a.rows(); ++i) res[i] = b[i] - RowTimes(a, x, i);
}

// Gauss-Seidel sweeps: x_i += (b_i - (A x)_i) / a_ii, rows ascending or descending.
void SweepForward(const SpMat& a, const double* inv_diag, const double* b, double* x) {
  for (Eigen::Index i = 0; i < a.rows(); ++i) x[i] += (b[i] - RowTimes(a, x, i)) * inv_diag[i];
}

void SweepBackward(const SpMat& a, const double* inv_diag, const double* b, double* x) {
  for (Eigen::Index i = a.rows() - 1; i >= 0; --i) x[i] += (b[i] - RowTimes(a, x, i)) * inv_diag[i];
}

// Gershgorin's bound of the spectral radius of D^-1 A: the largest sum of |a_ij| / a_ii.
double SpectralBound(const SpMat& a, const Eigen::VectorXd& inv_diag) {
  double bound = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (SpMat::InnerIterator it(a, i); it; ++it) s += std::abs(it.value());
    bound = std::max(bound, s * inv_diag[i]);
  }
  return bound;
}

// The aggregate of every row (-1: none, a row with no strong neighbour) and their count, by the
// three passes of Vaněk, Mandel and Brezina (1996), section 3: strong neighbours of i are the
// j != i with a_ij^2 >= eps^2 a_ii a_jj.
std::vector<int> Aggregate(const SpMat& a, const Eigen::VectorXd& diag, double eps, int& count) {
  const auto n = static_cast<int>(a.rows());
  const int* outer = a.outerIndexPtr();
  const int* inner = a.innerIndexPtr();
  const double* val = a.valuePtr();
  const double eps2 = eps * eps;
  auto strong = [&](int i, int k) {
    const int j = inner[k];
    return j != i && val[k] * val[k] >= eps2 * diag[i] * diag[j];
  };
  std::vector<int> agg(n, -1);
  std::vector<char> isolated(n, 1);
  count = 0;
  // 1: a row none of whose strong neighbours is taken starts an aggregate with all of them.
  for (int i = 0; i < n; ++i) {
    bool free = agg[i] < 0, any = false;
    for (int k = outer[i]; k < outer[i + 1] && free; ++k) {
      if (!strong(i, k)) continue;
      any = true;
      free = agg[inner[k]] < 0;
    }
    if (any) isolated[i] = 0;
    if (!free || !any) continue;
    agg[i] = count;
    for (int k = outer[i]; k < outer[i + 1]; ++k) {
      if (strong(i, k)) agg[inner[k]] = count;
    }
    ++count;
  }
  // 2: a row left joins the aggregate of its most strongly coupled neighbour taken in pass 1.
  const std::vector<int> first = agg;
  for (int i = 0; i < n; ++i) {
    if (agg[i] >= 0 || isolated[i]) continue;
    double best = 0;
    for (int k = outer[i]; k < outer[i + 1]; ++k) {
      if (!strong(i, k) || first[inner[k]] < 0) continue;
      const double w = std::abs(val[k]) / std::sqrt(diag[inner[k]]);
      if (w > best) {
        best = w;
        agg[i] = first[inner[k]];
      }
    }
  }
  // 3: the rows still left form aggregates of their neighbourhoods' rows still left.
  for (int i = 0; i < n; ++i) {
    if (agg[i] >= 0 || isolated[i]) continue;
    agg[i] = count;
    for (int k = outer[i]; k < outer[i + 1]; ++k) {
      if (strong(i, k) && agg[inner[k]] < 0) agg[inner[k]] = count;
    }
    ++count;
  }
  return agg;
}

// P_tent: the constant on each aggregate, each column scaled to unit norm.
SpMat TentativeProlongation(const std::vector<int>& agg, int count) {
  std::vector<int> size(count, 0);
  for (const int g : agg) {
    if (g >= 0) ++size[g];
  }
  const auto n = static_cast<Eigen::Index>(agg.size());
  SpMat pt(n, count);
  pt.reserve(Eigen::VectorXi::Constant(n, 1));
  for (Eigen::Index i = 0; i < n; ++i) {
    if (const int g = agg[i]; g >= 0) pt.insert(i, g) = 1.0 / std::sqrt(size[g]);
  }
  pt.makeCompressed();
  return pt;
}

}  // namespace

SpMat SparseProduct(const SpMat& a, const SpMat& b) {
  const int* a_outer = a.outerIndexPtr();
  const int* a_inner = a.innerIndexPtr();
  const double* a_val = a.valuePtr();
  const int* b_outer = b.outerIndexPtr();
  const int* b_inner = b.innerIndexPtr();
  const double* b_val = b.valuePtr();
  SpMat c(a.rows(), b.cols());
  int* outer = c.outerIndexPtr();
  std::vector<int> mark(b.cols(), -1);  // the last row that met a column
  outer[0] = 0;
  for (int i = 0; i < a.rows(); ++i) {
    int count = 0;
    for (int k = a_outer[i]; k < a_outer[i + 1]; ++k) {
      const int j = a_inner[k];
      for (int m = b_outer[j]; m < b_outer[j + 1]; ++m) {
        if (mark[b_inner[m]] != i) {
          mark[b_inner[m]] = i;
          ++count;
        }
      }
    }
    outer[i + 1] = outer[i] + count;
  }
  c.resizeNonZeros(outer[a.rows()]);
  int* inner = c.innerIndexPtr();
  double* values = c.valuePtr();
  std::vector<double> row(b.cols(), 0.0);  // the row being made, dense
  std::fill(mark.begin(), mark.end(), -1);
  for (int i = 0; i < a.rows(); ++i) {
    int end = outer[i];
    for (int k = a_outer[i]; k < a_outer[i + 1]; ++k) {
      const double v = a_val[k];
      const int j = a_inner[k];
      for (int m = b_outer[j]; m < b_outer[j + 1]; ++m) {
        const int col = b_inner[m];
        if (mark[col] != i) {
          mark[col] = i;
          inner[end++] = col;
        }
        row[col] += v * b_val[m];
      }
    }
    // Columns ascending, as Eigen's lookups expect.
    std::sort(inner + outer[i], inner + end);
    for (int m = outer[i]; m < end; ++m) {
      values[m] = row[inner[m]];
      row[inner[m]] = 0;
    }
  }
  return c;
}

std::optional<SmoothedAggregation> SmoothedAggregation::Make(const SpMat& a) {
  if (!a.isCompressed() || a.rows() != a.cols() || a.rows() == 0) return std::nullopt;
  SmoothedAggregation s;
  s.finest_ = &a;
  SpMat next;            // the matrix of the level being made, once past the finest
  Eigen::VectorXd diag;  // its diagonal: the coarsest level's once the loop stops
  double eps = kStrength;
  for (;;) {
    const SpMat& cur = s.levels_.empty() ? a : next;
    diag = cur.diagonal();
    // A positive definite matrix has a positive diagonal, and so has P^T A P with full-rank P.
    if (!(diag.array() > 0).all() || !diag.allFinite()) return std::nullopt;
    const auto n = static_cast<int>(cur.rows());
    if (n <= kCoarsestRows || static_cast<int>(s.levels_.size()) + 1 >= kMostLevels) break;
    int count = 0;
    const std::vector<int> agg = Aggregate(cur, diag, eps, count);
    if (count == 0 || count > kStallRatio * n) break;

    Level level;
    level.inv_diag = diag.cwiseInverse();
    const SpMat pt = TentativeProlongation(agg, count);
    const double omega = 4.0 / 3.0 / SpectralBound(cur, level.inv_diag);
    const SpMat ap = SparseProduct(cur, pt);
    level.p = pt - (omega * level.inv_diag).asDiagonal() * ap;
    level.p.makeCompressed();
    level.r = level.p.transpose();
    level.r.makeCompressed();
    SpMat coarse = SparseProduct(level.r, SparseProduct(cur, level.p));
    level.res.resize(n);
    level.next_b.resize(count);
    level.next_x.resize(count);
    if (!s.levels_.empty()) level.own = std::move(next);
    s.levels_.push_back(std::move(level));
    next = std::move(coarse);
    eps *= 0.5;
  }
  if (!s.levels_.empty()) s.coarsest_ = std::move(next);
  const SpMat& last = s.Matrix(s.levels_.size());
  s.coarsest_dense_ = last.rows() <= kCoarsestRows;
  if (s.coarsest_dense_) {
    s.coarsest_factor_.compute(Eigen::MatrixXd(last));
    if (s.coarsest_factor_.info() != Eigen::Success) return std::nullopt;
  } else {
    s.coarsest_inv_diag_ = diag.cwiseInverse();
  }
  return s;
}

const SpMat& SmoothedAggregation::Matrix(size_t l) const {
  if (l == 0) return *finest_;
  return l < levels_.size() ? levels_[l].own : coarsest_;
}

std::vector<int> SmoothedAggregation::level_rows() const {
  std::vector<int> rows;
  for (size_t l = 0; l <= levels_.size(); ++l) rows.push_back(static_cast<int>(Matrix(l).rows()));
  return rows;
}

double SmoothedAggregation::operator_complexity() const {
  double nonzeros = 0;
  for (size_t l = 0; l <= levels_.size(); ++l)
    nonzeros += static_cast<double>(Matrix(l).nonZeros());
  return nonzeros / static_cast<double>(finest_->nonZeros());
}

double SmoothedAggregation::Apply(const double* r, double* z) {
  Cycle(0, r, z);
  double rz = 0;
  for (int i = 0; i < rows(); ++i) rz += r[i] * z[i];
  return rz;
}

void SmoothedAggregation::Cycle(size_t l, const double* b, double* x) {
  if (l == levels_.size()) {
    SolveCoarsest(b, x);
    return;
  }
  Level& level = levels_[l];
  const SpMat& a = Matrix(l);
  std::fill(x, x + a.rows(), 0.0);
  SweepForward(a, level.inv_diag.data(), b, x);
  Residual(a, b, x, level.res.data());
  Multiply(level.r, level.res.data(), level.next_b.data());
  Cycle(l + 1, level.next_b.data(), level.next_x.data());
  MultiplyAdd(level.p, level.next_x.data(), x);
  SweepBackward(a, level.inv_diag.data(), b, x);
}

void SmoothedAggregation::SolveCoarsest(const double* b, double* x) {
  const SpMat& a = Matrix(levels_.size());
  const Eigen::Index n = a.rows();
  if (coarsest_dense_) {
    Eigen::Map<Eigen::VectorXd>(x, n) =
        coarsest_factor_.solve(Eigen::Map<const Eigen::VectorXd>(b, n));
    return;
  }
  std::fill(x, x + n, 0.0);
  for (int k = 0; k < kStalledSweeps; ++k) {
    SweepForward(a, coarsest_inv_diag_.data(), b, x);
    SweepBackward(a, coarsest_inv_diag_.data(), b, x);
  }
}

}  // namespace aiac::cg
