#include "apps/cg/partition.h"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace aiac::cg {

std::vector<int> SliceStarts(int n, int tasks, const Shares& shares) {
  if (shares.empty() ||
      std::all_of(shares.begin(), shares.end(), [&](double s) { return s == shares[0]; })) {
    return Partition(n, tasks);
  }
  double total = 0;
  for (double s : shares) total += s;
  std::vector<int> starts(static_cast<size_t>(tasks) + 1, 0);
  double before = 0;
  for (int l = 1; l < tasks; ++l) {
    before += shares[static_cast<size_t>(l - 1)];
    const auto at = static_cast<int>(std::llround(static_cast<double>(n) * before / total));
    // At least one row for every task, this one and those after it.
    starts[static_cast<size_t>(l)] =
        std::clamp(at, starts[static_cast<size_t>(l - 1)] + 1, n - (tasks - l));
  }
  starts[static_cast<size_t>(tasks)] = n;
  return starts;
}

namespace {
constexpr std::string_view kStartsMagic = "acgs";
}  // namespace

std::string EncodeSliceStarts(const std::vector<int>& starts) {
  std::string out(kStartsMagic);
  for (int s : starts) {
    const auto v = static_cast<int32_t>(s);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return out;
}

Result<std::vector<int>> DecodeSliceStarts(std::string_view bytes, int n, int tasks) {
  const size_t expected = kStartsMagic.size() + (static_cast<size_t>(tasks) + 1) * sizeof(int32_t);
  if (bytes.size() != expected || bytes.substr(0, kStartsMagic.size()) != kStartsMagic) {
    return InvalidArgument("cg: the slice starts are not " + std::to_string(tasks + 1) +
                           " row numbers");
  }
  std::vector<int> starts(static_cast<size_t>(tasks) + 1);
  for (size_t l = 0; l < starts.size(); ++l) {
    int32_t v;
    std::memcpy(&v, bytes.data() + kStartsMagic.size() + l * sizeof v, sizeof v);
    starts[l] = v;
  }
  bool ok = starts.front() == 0 && starts.back() == n;
  for (size_t l = 0; ok && l + 1 < starts.size(); ++l) ok = starts[l] < starts[l + 1];
  if (!ok)
    return InvalidArgument("cg: the slice starts do not split rows 0.." + std::to_string(n) +
                           " in order");
  return starts;
}

RowPartition ContiguousPartition(int n, int tasks, const Shares& shares) {
  RowPartition p;
  p.owner.resize(static_cast<size_t>(n));
  p.rows.resize(static_cast<size_t>(tasks));
  const auto starts = SliceStarts(n, tasks, shares);
  for (int l = 0; l < tasks; ++l) {
    for (int r = starts[l]; r < starts[l + 1]; ++r) {
      p.owner[static_cast<size_t>(r)] = static_cast<uint32_t>(l);
      p.rows[static_cast<size_t>(l)].push_back(r);
    }
  }
  return p;
}

Result<RowPartition> MetisPartition(const SpRef& a, int tasks, const Shares& shares) {
  const int n = static_cast<int>(a.rows());
  if (tasks < 1 || tasks > n)
    return InvalidArgument("cg: cannot split " + std::to_string(n) + " rows in " +
                           std::to_string(tasks));
  if (tasks == 1) return ContiguousPartition(n, 1);
  // The graph of A + A^T without the diagonal, as METIS wants it (CSR, both directions).
  SpMat pattern = a;
  pattern.coeffs().setOnes();
  SpMat both = pattern + SpMat(pattern.transpose());
  std::vector<idx_t> xadj(static_cast<size_t>(n) + 1, 0), adjncy, vwgt(static_cast<size_t>(n));
  adjncy.reserve(static_cast<size_t>(both.nonZeros()));
  for (int r = 0; r < n; ++r) {
    for (SpMat::InnerIterator it(both, r); it; ++it) {
      if (it.col() != r) adjncy.push_back(static_cast<idx_t>(it.col()));
    }
    xadj[static_cast<size_t>(r) + 1] = static_cast<idx_t>(adjncy.size());
    vwgt[static_cast<size_t>(r)] = static_cast<idx_t>(
        std::max<Eigen::Index>(1, a.outerIndexPtr()[r + 1] - a.outerIndexPtr()[r]));
  }
  idx_t nvtxs = n, ncon = 1, nparts = tasks, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same input gives the same partition
  // Target weights of the parts, summing to 1 (METIS's tpwgts); none: equal parts.
  std::vector<real_t> targets;
  if (!shares.empty()) {
    double total = 0;
    for (double s : shares) total += s;
    for (double s : shares) targets.push_back(static_cast<real_t>(s / total));
  }
  std::vector<idx_t> part(static_cast<size_t>(n));
  const int status = METIS_PartGraphKway(
      &nvtxs, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(), vwgt.data(), nullptr,
      nullptr, &nparts, targets.empty() ? nullptr : targets.data(), nullptr, options, &objval,
      part.data());
  if (status != METIS_OK) {
    return Internal(std::string("cg: METIS could not partition the matrix (") +
                    (status == METIS_ERROR_MEMORY  ? "out of memory"
                     : status == METIS_ERROR_INPUT ? "bad input"
                                                   : "error") +
                    ")");
  }
  RowPartition p;
  p.owner.resize(static_cast<size_t>(n));
  p.rows.resize(static_cast<size_t>(tasks));
  for (int r = 0; r < n; ++r) {
    const auto l = static_cast<uint32_t>(part[static_cast<size_t>(r)]);
    if (l >= static_cast<uint32_t>(tasks))
      return Internal("cg: METIS returned part " + std::to_string(l));
    p.owner[static_cast<size_t>(r)] = l;
    p.rows[l].push_back(r);
  }
  for (int l = 0; l < tasks; ++l) {
    if (p.rows[static_cast<size_t>(l)].empty()) {
      return InvalidArgument("cg: METIS left task " + std::to_string(l) + " without rows");
    }
  }
  return p;
}

double CutFraction(const SpRef& a, const RowPartition& p) {
  int64_t cut = 0;
  for (int r = 0; r < a.rows(); ++r) {
    const uint32_t mine = p.owner[static_cast<size_t>(r)];
    for (SpRef::InnerIterator it(a, r); it; ++it)
      cut += p.owner[static_cast<size_t>(it.col())] != mine;
  }
  return a.nonZeros() > 0 ? static_cast<double>(cut) / static_cast<double>(a.nonZeros()) : 0.0;
}

int AutoLayers(const SpRef& a, const std::vector<std::vector<int>>& own, double max_growth,
               int max_layers) {
  int layers = max_layers;
  std::vector<uint32_t> seen(static_cast<size_t>(a.rows()),
                             0);  // the block that reached a row last, + 1
  std::vector<int> frontier, next;
  for (size_t l = 0; l < own.size() && layers > 1; ++l) {
    const auto stamp = static_cast<uint32_t>(l + 1);
    const auto limit = static_cast<size_t>((1 + max_growth) * static_cast<double>(own[l].size()));
    for (int r : own[l]) seen[static_cast<size_t>(r)] = stamp;
    frontier = own[l];
    size_t size = own[l].size();
    for (int layer = 1; layer <= layers && !frontier.empty(); ++layer) {
      next.clear();
      for (int r : frontier) {
        for (SpRef::InnerIterator it(a, r); it; ++it) {
          const auto c = static_cast<size_t>(it.col());
          if (seen[c] != stamp) {
            seen[c] = stamp;
            next.push_back(static_cast<int>(c));
          }
        }
      }
      size += next.size();
      if (size > limit) {
        layers = std::max(1, layer - 1);
        break;
      }
      frontier.swap(next);
    }
  }
  return layers;
}

SpMat DiagonalBlock(const SpRef& a, const std::vector<int>& rows) {
  const RowIndex index(rows);
  std::vector<int> outer(rows.size() + 1, 0), inner;
  std::vector<double> values;
  for (size_t k = 0; k < rows.size(); ++k) {
    for (SpRef::InnerIterator it(a, rows[k]); it; ++it) {
      if (const int at = index(static_cast<int>(it.col())); at >= 0) {
        inner.push_back(at);
        values.push_back(it.value());
      }
    }
    outer[k + 1] = static_cast<int>(inner.size());
  }
  const auto size = static_cast<int>(rows.size());
  return CompressedMatrix(size, size, outer, inner, values);
}

std::vector<int> Extend(const SpRef& a, const std::vector<int>& own, int layers) {
  if (layers <= 0) return own;
  std::vector<char> in(static_cast<size_t>(a.rows()), 0);
  for (int r : own) in[static_cast<size_t>(r)] = 1;
  std::vector<int> all = own, frontier = own, next;
  for (int layer = 0; layer < layers && !frontier.empty(); ++layer) {
    next.clear();
    for (int r : frontier) {
      for (SpRef::InnerIterator it(a, r); it; ++it) {
        const auto c = static_cast<size_t>(it.col());
        if (!in[c]) {
          in[c] = 1;
          next.push_back(static_cast<int>(c));
        }
      }
    }
    all.insert(all.end(), next.begin(), next.end());
    frontier.swap(next);
  }
  // The owned rows come sorted (a slice, or METIS's rows in order): only the layers need sorting,
  // then one merge (sorting all of a 200,000-row block took 5 ms).
  const auto layers_from = all.begin() + static_cast<std::ptrdiff_t>(own.size());
  if (!std::is_sorted(all.begin(), layers_from)) std::sort(all.begin(), layers_from);
  std::sort(layers_from, all.end());
  std::inplace_merge(all.begin(), layers_from, all.end());
  return all;
}

}  // namespace aiac::cg
