#include "apps/cg/held_rows.h"

#include <algorithm>

namespace aiac::cg {

void HeldRows::Row(int r, std::vector<int>& row_cols, std::vector<double>& row_vals) const {
  const auto k = static_cast<size_t>(r - lo);
  row_cols.assign(cols.begin() + ptr[k], cols.begin() + ptr[k + 1]);
  row_vals.assign(vals.begin() + ptr[k], vals.begin() + ptr[k + 1]);
}

HeldRows HeldRows::Part(int from, int to) const {
  from = std::clamp(from, lo, hi());
  to = std::clamp(to, from, hi());
  HeldRows part;
  part.lo = from;
  const auto a = static_cast<size_t>(from - lo), z = static_cast<size_t>(to - lo);
  part.b.assign(b.begin() + static_cast<std::ptrdiff_t>(a),
                b.begin() + static_cast<std::ptrdiff_t>(z));
  part.cols.assign(cols.begin() + ptr[a], cols.begin() + ptr[z]);
  part.vals.assign(vals.begin() + ptr[a], vals.begin() + ptr[z]);
  part.ptr.resize(z - a + 1);
  for (size_t k = a; k <= z; ++k) part.ptr[k - a] = ptr[k] - ptr[a];
  return part;
}

HeldRows HeldRowsOf(const Block& block, int from, int to) {
  AIAC_CHECK(!block.rows.empty() && block.rows.front() <= from && from <= to &&
             to <= block.rows.back() + 1);
  HeldRows held;
  held.lo = from;
  std::vector<std::pair<int, double>> row;
  for (int r = from; r < to; ++r) {
    const int k = r - block.rows.front();
    row.clear();
    for (SpMat::InnerIterator it(block.local, k); it; ++it)
      row.emplace_back(block.rows[static_cast<size_t>(it.col())], it.value());
    for (const auto& c : block.in) {
      for (SpMat::InnerIterator it(c.a, k); it; ++it)
        row.emplace_back(c.cols[static_cast<size_t>(it.col())], it.value());
    }
    std::sort(row.begin(), row.end());
    for (const auto& [col, v] : row) {
      held.cols.push_back(col);
      held.vals.push_back(v);
    }
    held.ptr.push_back(static_cast<int64_t>(held.cols.size()));
    held.b.push_back(block.b[k]);
  }
  return held;
}

Result<HeldRows> JoinRows(HeldRows below, HeldRows above) {
  if (below.empty()) return above;
  if (above.empty()) return below;
  if (below.hi() != above.lo) {
    return InvalidArgument("cg: rows " + std::to_string(below.lo + 1) + ".." +
                           std::to_string(below.hi()) + " and " + std::to_string(above.lo + 1) +
                           ".." + std::to_string(above.hi()) + " are not next to each other");
  }
  const int64_t base = below.ptr.back();
  for (size_t k = 1; k < above.ptr.size(); ++k) below.ptr.push_back(base + above.ptr[k]);
  below.cols.insert(below.cols.end(), above.cols.begin(), above.cols.end());
  below.vals.insert(below.vals.end(), above.vals.begin(), above.vals.end());
  below.b.insert(below.b.end(), above.b.begin(), above.b.end());
  return below;
}

void PutHeldRows(SliceWriter& w, const HeldRows& rows) {
  w.Put<int32_t>(rows.lo);
  w.PutVector(rows.ptr);
  w.PutVector(rows.cols);
  w.PutVector(rows.vals);
  w.PutVector(rows.b);
}

bool GetHeldRows(SliceReader& r, HeldRows& rows, int n) {
  const auto most = static_cast<uint64_t>(std::max(0, n));
  if (!r.Get(rows.lo) || !r.GetVector(rows.ptr, most + 1) || !r.GetVector(rows.cols, UINT64_MAX) ||
      !r.GetVector(rows.vals, UINT64_MAX) || !r.GetVector(rows.b, most)) {
    return false;
  }
  if (rows.lo < 0 || rows.hi() > n || rows.ptr.size() != rows.b.size() + 1 ||
      rows.ptr.front() != 0 || rows.ptr.back() != static_cast<int64_t>(rows.cols.size()) ||
      rows.cols.size() != rows.vals.size()) {
    return false;
  }
  for (size_t k = 0; k + 1 < rows.ptr.size(); ++k) {
    if (rows.ptr[k] > rows.ptr[k + 1]) return false;
    for (int64_t e = rows.ptr[k]; e < rows.ptr[k + 1]; ++e) {
      const int c = rows.cols[static_cast<size_t>(e)];
      if (c < 0 || c >= n || (e > rows.ptr[k] && c <= rows.cols[static_cast<size_t>(e - 1)]))
        return false;
    }
  }
  return true;
}

}  // namespace aiac::cg
