#include "apps/cg/cg_problem.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "apps/cg/byte_codec.h"
#include "core/huge_pages.h"
#include "core/splitmix.h"

namespace aiac::cg {
namespace {

// Every daemon computes the same entries from the seed.
constexpr auto Mix = SplitMix64;

double OffDiagonal(const GeneratedSpec& spec, int i, int j) {
  const uint64_t lo = static_cast<uint64_t>(std::min(i, j)),
                 hi = static_cast<uint64_t>(std::max(i, j));
  const uint64_t h = Mix(spec.seed ^ Mix(lo * 0x100000001b3ull ^ Mix(hi)));
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  return -(0.1 + 0.9 * u);
}

constexpr uint32_t kBlockMagic = 0x61636732;  // "acg2": rows and owned rows listed

}  // namespace

void GeneratedRow(const GeneratedSpec& spec, int i, std::vector<int>& cols,
                  std::vector<double>& vals) {
  cols.clear();
  vals.clear();
  const int lo = std::max(0, i - spec.bandwidth), hi = std::min(spec.n - 1, i + spec.bandwidth);
  double diagonal = 1;
  size_t diag_at = 0;
  for (int j = lo; j <= hi; ++j) {
    if (j == i) {
      diag_at = cols.size();
      cols.push_back(j);
      vals.push_back(0);
      continue;
    }
    const double v = OffDiagonal(spec, i, j);
    diagonal += std::abs(v);
    cols.push_back(j);
    vals.push_back(v);
  }
  vals[diag_at] = diagonal;  // strictly diagonally dominant: asynchronous iterations converge
}

SpMat GridLaplacian(int kx, int ky, double diag) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<size_t>(kx) * ky * 5);
  for (int i = 0; i < ky; ++i) {
    for (int j = 0; j < kx; ++j) {
      const int r = i * kx + j;
      t.emplace_back(r, r, diag);
      if (i > 0) t.emplace_back(r, r - kx, -1.0);
      if (i + 1 < ky) t.emplace_back(r, r + kx, -1.0);
      if (j > 0) t.emplace_back(r, r - 1, -1.0);
      if (j + 1 < kx) t.emplace_back(r, r + 1, -1.0);
    }
  }
  SpMat a(kx * ky, kx * ky);
  a.setFromTriplets(t.begin(), t.end());
  a.makeCompressed();
  return a;
}

SpMat GridLaplacian3d(int k) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<size_t>(k) * k * k * 7);
  auto at = [k](int x, int y, int z) { return (z * k + y) * k + x; };
  for (int z = 0; z < k; ++z) {
    for (int y = 0; y < k; ++y) {
      for (int x = 0; x < k; ++x) {
        const int i = at(x, y, z);
        t.emplace_back(i, i, 6.0);
        if (x > 0) t.emplace_back(i, at(x - 1, y, z), -1.0);
        if (x + 1 < k) t.emplace_back(i, at(x + 1, y, z), -1.0);
        if (y > 0) t.emplace_back(i, at(x, y - 1, z), -1.0);
        if (y + 1 < k) t.emplace_back(i, at(x, y + 1, z), -1.0);
        if (z > 0) t.emplace_back(i, at(x, y, z - 1), -1.0);
        if (z + 1 < k) t.emplace_back(i, at(x, y, z + 1), -1.0);
      }
    }
  }
  SpMat a(k * k * k, k * k * k);
  a.setFromTriplets(t.begin(), t.end());
  a.makeCompressed();
  return a;
}

Problem Generate(const GeneratedSpec& spec) {
  std::vector<Eigen::Triplet<double>> t;
  std::vector<int> cols;
  std::vector<double> vals;
  Eigen::VectorXd b(spec.n);
  for (int i = 0; i < spec.n; ++i) {
    GeneratedRow(spec, i, cols, vals);
    double sum = 0;
    for (size_t k = 0; k < cols.size(); ++k) {
      t.emplace_back(i, cols[k], vals[k]);
      sum += vals[k];
    }
    b[i] = sum;  // A * ones
  }
  SpMat a(spec.n, spec.n);
  a.setFromTriplets(t.begin(), t.end());
  a.makeCompressed();
  return {std::move(a), std::move(b)};
}

Status CheckMatrix(const SpRef& a, const std::string& name) {
  if (a.rows() != a.cols()) {
    return InvalidArgument(name + ": the matrix is " + std::to_string(a.rows()) + " x " +
                           std::to_string(a.cols()) + ", not square");
  }
  for (int i = 0; i < a.rows(); ++i) {
    for (SpRef::InnerIterator it(a, i); it; ++it) {
      if (!std::isfinite(it.value())) {
        return InvalidArgument(name + ": the matrix is not finite at row " + std::to_string(i + 1));
      }
    }
  }
  return Status::Ok();
}

int FirstZeroOnDiagonal(const SpRef& a) {
  for (int i = 0; i < a.rows(); ++i) {
    if (a.coeff(i, i) == 0) return i;
  }
  return -1;
}

Status CheckSystem(const SpRef& a, const Eigen::VectorXd& b, const std::string& name) {
  AIAC_RETURN_IF_ERROR(CheckMatrix(a, name));
  if (b.size() != a.rows()) {
    return InvalidArgument(name + ": the right-hand side has " + std::to_string(b.size()) +
                           " entries, the matrix " + std::to_string(a.rows()) + " rows");
  }
  // Finite entries can still sum to an infinite b = A * ones.
  for (Eigen::Index i = 0; i < b.size(); ++i) {
    if (!std::isfinite(b[i])) {
      return InvalidArgument(name + ": the right-hand side is not finite at row " +
                             std::to_string(i + 1));
    }
  }
  return Status::Ok();
}

std::vector<int> Partition(int n, int tasks) {
  std::vector<int> starts(tasks + 1);
  for (int l = 0; l <= tasks; ++l)
    starts[l] = static_cast<int>(static_cast<int64_t>(n) * l / tasks);
  return starts;
}

int OwnerOf(const std::vector<int>& starts, int row) {
  return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), row) - starts.begin()) - 1;
}

std::string Block::Describe() const {
  if (rows.empty()) return "no rows";
  return "rows " + std::to_string(rows.front() + 1) + ".." + std::to_string(rows.back() + 1) +
         (own.size() < rows.size() ? " (with overlap)" : "");
}

SpMat CompressedMatrix(int rows, int cols, const std::vector<int>& outer,
                       const std::vector<int>& inner, const std::vector<double>& values) {
  SpMat m(rows, cols);
  m.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
  std::copy(outer.begin(), outer.end(), m.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), m.innerIndexPtr());
  std::copy(values.begin(), values.end(), m.valuePtr());
  return m;
}

Block BuildBlock(const RowFn& row, const std::vector<double>& b_rows, int n, std::vector<int> rows,
                 std::vector<int> own, const OwnerFn& owner, std::vector<Block::Send> out,
                 int64_t nonzeros_hint) {
  Block blk;
  blk.n = n;
  blk.rows = std::move(rows);
  blk.own = std::move(own);
  blk.out = std::move(out);
  blk.b =
      Eigen::Map<const Eigen::VectorXd>(b_rows.data(), static_cast<Eigen::Index>(b_rows.size()));
  const int size = blk.size();
  const RowIndex index(blk.rows);
  // The rows come in order and their columns ascending (RowFn), and both maps to local columns
  // keep that order: the local matrix's compressed arrays are filled as the entries come, with
  // no sort and no copy (room for `nonzeros_hint` entries made at once, in 2 MiB pages).
  blk.local.resize(size, size);
  auto& local = blk.local.data();
  local.reserve(static_cast<Eigen::Index>(nonzeros_hint));
  AdviseHugePages(local.indexPtr(), static_cast<size_t>(nonzeros_hint) * sizeof(int));
  AdviseHugePages(local.valuePtr(), static_cast<size_t>(nonzeros_hint) * sizeof(double));
  int* starts = blk.local.outerIndexPtr();
  starts[0] = 0;
  struct Entry {
    uint32_t task;
    int r;
    int col;
    double v;
  };
  std::vector<Entry> coupled;  // entries whose column is outside the block
  std::vector<int> cols;
  std::vector<double> vals;
  for (int r = 0; r < size; ++r) {
    row(blk.rows[static_cast<size_t>(r)], cols, vals);
    blk.nonzeros += static_cast<int64_t>(cols.size());
    for (size_t k = 0; k < cols.size(); ++k) {
      const int c = cols[k];
      if (const int at = index(c); at >= 0) {
        local.append(vals[k], at);
      } else {
        coupled.push_back({owner(c), r, c, vals[k]});
      }
    }
    starts[r + 1] = static_cast<int>(local.size());
  }
  std::vector<int> outer(static_cast<size_t>(size) + 1, 0), inner;
  std::vector<double> values;
  // Per other task, in task order, its entries still in (row, column) order.
  std::stable_sort(coupled.begin(), coupled.end(),
                   [](const Entry& x, const Entry& y) { return x.task < y.task; });
  for (size_t begin = 0; begin < coupled.size();) {
    size_t end = begin;
    while (end < coupled.size() && coupled[end].task == coupled[begin].task) ++end;
    Block::Coupling cp;
    cp.task = coupled[begin].task;
    for (size_t k = begin; k < end; ++k) cp.cols.push_back(coupled[k].col);
    std::sort(cp.cols.begin(), cp.cols.end());
    cp.cols.erase(std::unique(cp.cols.begin(), cp.cols.end()), cp.cols.end());
    std::fill(outer.begin(), outer.end(), 0);
    inner.clear();
    values.clear();
    for (size_t k = begin; k < end; ++k) {
      const Entry& e = coupled[k];
      inner.push_back(static_cast<int>(std::lower_bound(cp.cols.begin(), cp.cols.end(), e.col) -
                                       cp.cols.begin()));
      values.push_back(e.v);
      ++outer[static_cast<size_t>(e.r) + 1];
    }
    for (int r = 0; r < size; ++r)
      outer[static_cast<size_t>(r) + 1] += outer[static_cast<size_t>(r)];
    cp.a = CompressedMatrix(size, static_cast<int>(cp.cols.size()), outer, inner, values);
    blk.in.push_back(std::move(cp));
    begin = end;
  }
  return blk;
}

std::vector<std::vector<Block::Send>> SendLists(const SpRef& a, const std::vector<uint32_t>& owner,
                                                const std::vector<std::vector<int>>& block_rows) {
  const size_t tasks = block_rows.size();
  // needs[l][m] = rows of l (global) whose x block m uses.
  std::vector<std::map<uint32_t, std::vector<int>>> needs(tasks);
  for (size_t m = 0; m < tasks; ++m) {
    const RowIndex in_m(block_rows[m]);
    for (int r : block_rows[m]) {
      for (SpRef::InnerIterator it(a, r); it; ++it) {
        const int c = static_cast<int>(it.col());
        if (in_m(c) < 0)
          needs[owner[static_cast<size_t>(c)]][static_cast<uint32_t>(m)].push_back(c);
      }
    }
  }
  std::vector<std::vector<Block::Send>> out(tasks);
  for (size_t l = 0; l < tasks; ++l) {
    const RowIndex in_l(block_rows[l]);
    for (auto& [m, rows] : needs[l]) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      for (int& r : rows) r = in_l(r);  // owned by l, so in l's block
      out[l].push_back({m, std::move(rows)});
    }
  }
  return out;
}

std::vector<Block::Send> SymmetricSendLists(const RowFn& row, int n, const std::vector<int>& starts,
                                            uint32_t l, int overlap) {
  // Block m holds rows [starts[m] - overlap, starts[m + 1] + overlap) (within 0..n-1) when it
  // owns any: it holds column c exactly when it owns a row within `overlap` of c.
  const int tasks = static_cast<int>(starts.size()) - 1;
  auto block_lo = [&](int m) { return std::max(0, starts[m] - overlap); };
  auto block_hi = [&](int m) { return std::min(n, starts[m + 1] + overlap); };
  const int first = block_lo(static_cast<int>(l));
  std::map<uint32_t, std::vector<int>> needs;
  std::vector<int> cols;
  std::vector<double> vals;
  for (int r = starts[l]; r < starts[l + 1]; ++r) {
    row(r, cols, vals);
    for (int c : cols) {
      const int from = OwnerOf(starts, std::max(0, c - overlap)),
                to = OwnerOf(starts, std::min(n - 1, c + overlap));
      for (int m = std::max(0, from); m <= std::min(tasks - 1, to); ++m) {
        // a_rc != 0 and A symmetric: row c of block m uses x_r, which m gets from us unless it
        // holds row r itself.
        if (m == static_cast<int>(l) || starts[m] == starts[m + 1] || c < block_lo(m) ||
            c >= block_hi(m) || (r >= block_lo(m) && r < block_hi(m))) {
          continue;
        }
        auto& rows = needs[static_cast<uint32_t>(m)];
        if (rows.empty() || rows.back() != r - first) rows.push_back(r - first);
      }
    }
  }
  std::vector<Block::Send> out;
  for (auto& [m, rows] : needs) out.push_back({m, std::move(rows)});
  return out;
}

std::string EncodeBlock(const Block& b) {
  SliceWriter w;
  w.Put<uint32_t>(kBlockMagic);
  w.Put<int32_t>(b.n);
  w.Put<int64_t>(b.nonzeros);
  w.PutVector(b.rows);
  w.PutVector(b.own);
  w.PutMatrix(b.local);
  w.PutVector(std::vector<double>(b.b.data(), b.b.data() + b.b.size()));
  w.Put<uint32_t>(static_cast<uint32_t>(b.in.size()));
  for (const auto& c : b.in) {
    w.Put<uint32_t>(c.task);
    w.PutVector(c.cols);
    w.PutMatrix(c.a);
  }
  w.Put<uint32_t>(static_cast<uint32_t>(b.out.size()));
  for (const auto& s : b.out) {
    w.Put<uint32_t>(s.task);
    w.PutVector(s.rows);
  }
  return w.Take();
}

Result<Block> DecodeBlock(std::string_view bytes) {
  SliceReader r(bytes);
  Block b;
  uint32_t magic = 0, nin = 0, nout = 0;
  std::vector<double> rhs;
  auto bad = [] { return Corruption("cg: the task's data slice does not decode"); };
  if (!r.Get(magic) || magic != kBlockMagic || !r.Get(b.n) || b.n < 1 || !r.Get(b.nonzeros) ||
      !r.GetVector(b.rows, bytes.size()) || !AscendingBelow(b.rows, b.n) ||
      !r.GetVector(b.own, bytes.size()) || !AscendingBelow(b.own, b.size()) ||
      !r.GetMatrix(b.local) || !r.GetVector(rhs, bytes.size()) ||
      static_cast<int>(rhs.size()) != b.size() || b.local.rows() != b.size() ||
      b.local.cols() != b.size()) {
    return bad();
  }
  b.b = Eigen::Map<Eigen::VectorXd>(rhs.data(), static_cast<Eigen::Index>(rhs.size()));
  if (!r.Get(nin)) return bad();
  for (uint32_t k = 0; k < nin; ++k) {
    Block::Coupling c;
    if (!r.Get(c.task) || !r.GetVector(c.cols, bytes.size()) || !AscendingBelow(c.cols, b.n) ||
        !r.GetMatrix(c.a) || c.a.rows() != b.size() ||
        c.a.cols() != static_cast<Eigen::Index>(c.cols.size())) {
      return bad();
    }
    b.in.push_back(std::move(c));
  }
  if (!r.Get(nout)) return bad();
  for (uint32_t k = 0; k < nout; ++k) {
    Block::Send s;
    if (!r.Get(s.task) || !r.GetVector(s.rows, bytes.size()) || !AscendingBelow(s.rows, b.size()))
      return bad();
    b.out.push_back(std::move(s));
  }
  if (!r.done()) return bad();
  return b;
}

}  // namespace aiac::cg
