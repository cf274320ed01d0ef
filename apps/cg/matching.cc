#include "apps/cg/matching.h"

#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace aiac::cg {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The matrix by columns, with each entry's cost c(i, j) = log(max_k |a_kj|) - log|a_ij|.
struct Columns {
  std::vector<int> start;  // column j's entries are [start[j], start[j + 1])
  std::vector<int> row;
  std::vector<double> cost;
};

Columns ByColumn(const SpRef& a) {
  const int n = static_cast<int>(a.cols());
  Columns c;
  c.start.assign(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < a.rows(); ++i) {
    for (SpRef::InnerIterator it(a, i); it; ++it) {
      if (it.value() != 0) ++c.start[static_cast<size_t>(it.col()) + 1];
    }
  }
  for (int j = 0; j < n; ++j) c.start[j + 1] += c.start[j];
  c.row.resize(static_cast<size_t>(c.start[n]));
  c.cost.resize(c.row.size());
  std::vector<double> colmax(static_cast<size_t>(n), 0);
  std::vector<int> fill(c.start.begin(), c.start.end() - 1);
  for (int i = 0; i < a.rows(); ++i) {
    for (SpRef::InnerIterator it(a, i); it; ++it) {
      if (it.value() == 0) continue;
      const auto j = static_cast<size_t>(it.col());
      const double mag = std::abs(it.value());
      c.row[static_cast<size_t>(fill[j])] = i;
      c.cost[static_cast<size_t>(fill[j]++)] = mag;
      colmax[j] = std::max(colmax[j], mag);
    }
  }
  for (int j = 0; j < n; ++j) {
    for (int k = c.start[j]; k < c.start[j + 1]; ++k) {
      c.cost[k] = std::log(colmax[j]) - std::log(c.cost[k]);
    }
  }
  return c;
}

}  // namespace

Result<std::vector<int>> LargeDiagonalRows(const SpRef& a) {
  if (a.rows() != a.cols()) return InvalidArgument("the matrix is not square");
  const int n = static_cast<int>(a.rows());
  const Columns c = ByColumn(a);
  // Duals: every reduced cost c(i, j) - u[i] - v[j] is >= 0, and 0 on matched pairs. With
  // c >= 0 and each column's largest entry at 0, zeros start them off.
  std::vector<double> u(static_cast<size_t>(n), 0), v(static_cast<size_t>(n), 0);
  std::vector<int> row_of(static_cast<size_t>(n), -1);  // column -> its matched row
  std::vector<int> col_of(static_cast<size_t>(n), -1);  // row -> its matched column
  // One search's state, reset only where it was touched.
  std::vector<double> d_row(static_cast<size_t>(n), kInf), d_col(static_cast<size_t>(n), kInf);
  std::vector<int> pred(static_cast<size_t>(n), -1);  // row -> the column it was reached from
  std::vector<char> done(static_cast<size_t>(n), 0);  // row -> its distance is final
  std::vector<int> rows_seen, cols_seen;
  using Item = std::pair<double, int>;  // distance, row
  for (int s = 0; s < n; ++s) {
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    auto scan = [&](int j) {
      cols_seen.push_back(j);
      for (int k = c.start[j]; k < c.start[j + 1]; ++k) {
        const auto i = static_cast<size_t>(c.row[static_cast<size_t>(k)]);
        if (done[i]) continue;
        const double nd = d_col[static_cast<size_t>(j)] + c.cost[static_cast<size_t>(k)] - u[i] -
                          v[static_cast<size_t>(j)];
        if (nd < d_row[i]) {
          if (d_row[i] == kInf) rows_seen.push_back(static_cast<int>(i));
          d_row[i] = nd;
          pred[i] = j;
          heap.push({nd, static_cast<int>(i)});
        }
      }
    };
    d_col[static_cast<size_t>(s)] = 0;
    scan(s);
    int free_row = -1;
    double shortest = kInf;
    while (!heap.empty()) {
      const auto [dist, i] = heap.top();
      heap.pop();
      if (done[static_cast<size_t>(i)] || dist > d_row[static_cast<size_t>(i)]) continue;
      done[static_cast<size_t>(i)] = 1;
      const int j = col_of[static_cast<size_t>(i)];
      if (j < 0) {
        free_row = i;
        shortest = dist;
        break;
      }
      // A matched row leads on to its column at no cost (its pair's reduced cost is 0).
      d_col[static_cast<size_t>(j)] = dist;
      scan(j);
    }
    if (free_row < 0) {
      return InvalidArgument(
          "the matrix is structurally singular: no row permutation puts a "
          "nonzero on the diagonal of column " +
          std::to_string(s + 1));
    }
    // New duals: each node's potential is its distance capped at the shortest one, less that
    // (0 for every node not closer): every reduced cost stays >= 0, the path's pairs become
    // tight, and only the nodes this search settled change. Then the path's pairs swap.
    for (int i : rows_seen) {
      u[static_cast<size_t>(i)] += std::min(d_row[static_cast<size_t>(i)], shortest) - shortest;
    }
    for (int j : cols_seen) {
      v[static_cast<size_t>(j)] -= std::min(d_col[static_cast<size_t>(j)], shortest) - shortest;
    }
    for (int i = free_row; i >= 0;) {
      const int j = pred[static_cast<size_t>(i)];
      const int previous = row_of[static_cast<size_t>(j)];  // -1 for s, the path's start
      row_of[static_cast<size_t>(j)] = i;
      col_of[static_cast<size_t>(i)] = j;
      i = previous;
    }
    for (int i : rows_seen) {
      d_row[static_cast<size_t>(i)] = kInf;
      pred[static_cast<size_t>(i)] = -1;
      done[static_cast<size_t>(i)] = 0;
    }
    for (int j : cols_seen) d_col[static_cast<size_t>(j)] = kInf;
    rows_seen.clear();
    cols_seen.clear();
  }
  return row_of;
}

SpMat PermuteRows(const SpRef& a, const std::vector<int>& perm) {
  SpMat out(a.rows(), a.cols());
  std::vector<int> sizes(static_cast<size_t>(a.rows()));
  for (size_t j = 0; j < perm.size(); ++j) {
    sizes[j] = static_cast<int>(a.outerIndexPtr()[perm[j] + 1] - a.outerIndexPtr()[perm[j]]);
  }
  out.reserve(sizes);
  for (size_t j = 0; j < perm.size(); ++j) {
    for (SpRef::InnerIterator it(a, perm[j]); it; ++it) {
      out.insert(static_cast<Eigen::Index>(j), it.col()) = it.value();
    }
  }
  out.makeCompressed();
  return out;
}

}  // namespace aiac::cg
