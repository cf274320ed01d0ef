// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html), the subset aiac reads
// and writes: real matrices in coordinate format, `general` or `symmetric` (the upper triangle
// is filled in), and real vectors in `array` format (n x 1) or coordinate format.
// Every problem is reported as "FILE:LINE: what".
//
// Sizes in a header are checked before anything is allocated for them: a matrix entry takes at
// least 6 bytes of the file ("1 1 1\n") and an array value 2 ("1\n"), so a header that
// announces more than the file can hold is refused; a CG matrix needs an entry on every row's
// diagonal, so fewer entries than rows is refused; and what the entries will take in memory is
// checked against the memory this process may allocate (core/memory_budget.h).
#pragma once

#include <Eigen/SparseCore>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace aiac::cg {

// Rows and columns are ints in the solver; this also bounds every index.
inline constexpr long long kMaxMatrixRows = 100000000;

struct Triplet {
  int row, col;  // 0-based
  double value;
};

struct CoordinateMatrix {
  int rows = 0, cols = 0;
  std::vector<Triplet> entries;  // symmetric files expanded; duplicates kept (they add up)
};

Result<CoordinateMatrix> ReadMatrixMarket(const std::string& path);
// The same matrix in compressed rows, columns ascending in each row, duplicates summed: what the
// CG app keeps (cg_problem.h's SpMat), built from the parsed entries without a copy through
// triplets.
Result<Eigen::SparseMatrix<double, Eigen::RowMajor, int>> ReadMatrixMarketRows(
    const std::string& path);
// A vector: array n x 1, or coordinate n x 1 (missing entries are 0). When `expected_rows` is
// set, a vector of another length is refused before it is allocated.
Result<std::vector<double>> ReadMatrixMarketVector(const std::string& path,
                                                   int64_t expected_rows = -1);
// Bytes the spawner needs per stored matrix entry and per row to set up a CG job (the matrix,
// its blocks and the task graph, with slack).
inline constexpr double kBytesPerEntry = 48;
inline constexpr double kBytesPerRow = 96;
// Writes x as "array real general", n x 1, full precision.
Status WriteMatrixMarketVector(const std::string& path, const std::vector<double>& x);
// Writes `a` in coordinate format, full precision: "general", every stored entry, or
// "symmetric", the lower triangle of an `a` the caller knows to be symmetric. For tests,
// benchmarks and systems handed to other solvers.
Status WriteMatrixMarketMatrix(const std::string& path,
                               const Eigen::SparseMatrix<double, Eigen::RowMajor, int>& a,
                               bool symmetric = false);

}  // namespace aiac::cg
