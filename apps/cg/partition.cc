#include "apps/cg/partition.h"

#include <metis.h>

#include <algorithm>

namespace aiac::cg {

RowPartition ContiguousPartition(int n, int tasks) {
  RowPartition p;
  p.owner.resize(static_cast<size_t>(n));
  p.rows.resize(static_cast<size_t>(tasks));
  const auto starts = Partition(n, tasks);
  for (int l = 0; l < tasks; ++l) {
    for (int r = starts[l]; r < starts[l + 1]; ++r) {
      p.owner[static_cast<size_t>(r)] = static_cast<uint32_t>(l);
      p.rows[static_cast<size_t>(l)].push_back(r);
    }
  }
  return p;
}

Result<RowPartition> MetisPartition(const SpMat& a, int tasks) {
  const int n = static_cast<int>(a.rows());
  if (tasks < 1 || tasks > n) return InvalidArgument("cg: cannot split " + std::to_string(n) + " rows in " + std::to_string(tasks));
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
    vwgt[static_cast<size_t>(r)] = static_cast<idx_t>(std::max<Eigen::Index>(1, a.outerIndexPtr()[r + 1] - a.outerIndexPtr()[r]));
  }
  idx_t nvtxs = n, ncon = 1, nparts = tasks, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same input gives the same partition
  std::vector<idx_t> part(static_cast<size_t>(n));
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(),
                                         vwgt.data(), nullptr, nullptr, &nparts, nullptr, nullptr, options, &objval,
                                         part.data());
  if (status != METIS_OK) {
    return Internal(std::string("cg: METIS could not partition the matrix (") +
                    (status == METIS_ERROR_MEMORY ? "out of memory" : status == METIS_ERROR_INPUT ? "bad input" : "error") +
                    ")");
  }
  RowPartition p;
  p.owner.resize(static_cast<size_t>(n));
  p.rows.resize(static_cast<size_t>(tasks));
  for (int r = 0; r < n; ++r) {
    const auto l = static_cast<uint32_t>(part[static_cast<size_t>(r)]);
    if (l >= static_cast<uint32_t>(tasks)) return Internal("cg: METIS returned part " + std::to_string(l));
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

double CutFraction(const SpMat& a, const RowPartition& p) {
  int64_t cut = 0;
  for (int r = 0; r < a.rows(); ++r) {
    const uint32_t mine = p.owner[static_cast<size_t>(r)];
    for (SpMat::InnerIterator it(a, r); it; ++it) cut += p.owner[static_cast<size_t>(it.col())] != mine;
  }
  return a.nonZeros() > 0 ? static_cast<double>(cut) / static_cast<double>(a.nonZeros()) : 0.0;
}

std::vector<int> Extend(const SpMat& a, const std::vector<int>& own, int layers) {
  if (layers <= 0) return own;
  std::vector<char> in(static_cast<size_t>(a.rows()), 0);
  for (int r : own) in[static_cast<size_t>(r)] = 1;
  std::vector<int> all = own, frontier = own, next;
  for (int layer = 0; layer < layers && !frontier.empty(); ++layer) {
    next.clear();
    for (int r : frontier) {
      for (SpMat::InnerIterator it(a, r); it; ++it) {
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
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace aiac::cg
