// The linear system of the multisplitting CG app (docs/architecture.md, design choices): A x = b
// with A sparse, square, with a non-zero diagonal, split into one block of rows per task
// (partition.h).
//
// A generated system (n, bandwidth, seed) is symmetric, banded and strictly diagonally
// dominant, so asynchronous iterations converge; any of its rows can be computed alone, so each
// daemon rebuilds its own block. A system read from files is split by the spawner, which ships
// each task its block. Pure: no I/O here beyond what the caller passes in.
#pragma once

#include <Eigen/Sparse>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace aiac::cg {

using SpMat = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
// A compressed matrix owned elsewhere: an SpMat or a mapped one (matrix_cache.h), not copied.
using SpRef = Eigen::Ref<const SpMat>;

struct GeneratedSpec {
  int n = 0;
  int bandwidth = 0;
  uint64_t seed = 0;
};

// Row i of the generated matrix, columns ascending: off-diagonal entries -(0.1 + 0.9 u) with u
// a hash of (seed, min(i,j), max(i,j)) in [0, 1) for 0 < |i - j| <= bandwidth, and a diagonal of
// 1 + the sum of their magnitudes.
void GeneratedRow(const GeneratedSpec& spec, int i, std::vector<int>& cols,
                  std::vector<double>& vals);

struct Problem {
  SpMat a;
  Eigen::VectorXd b;
};

// b = A * ones: the exact solution is all ones.
Problem Generate(const GeneratedSpec& spec);
// The 5-point Laplacian of a kx x ky grid (rows along the grid, `diag` on the diagonal, -1 to
// each neighbour): the 2-D Poisson problem, SPD for diag >= 4, for tests and benchmarks.
SpMat GridLaplacian(int kx, int ky, double diag = 4);
// The 7-point Laplacian of a k x k x k grid (6 on the diagonal): the 3-D Poisson problem.
SpMat GridLaplacian3d(int k);
// Checks a matrix read from a file: square, every stored value finite. (Zeros on the diagonal
// are the CG app's to deal with: it permutes rows, matching.h.)
Status CheckMatrix(const SpRef& a, const std::string& name);
// The first row whose diagonal entry is zero (or not stored), -1 when none is.
int FirstZeroOnDiagonal(const SpRef& a);
// Checks a system read from files: CheckMatrix, and b of the right size and finite.
Status CheckSystem(const SpRef& a, const Eigen::VectorXd& b, const std::string& name);

// Rows [starts[l], starts[l+1]) belong to task l; sizes differ by at most one.
std::vector<int> Partition(int n, int tasks);
int OwnerOf(const std::vector<int>& starts, int row);

// Everything task l needs, in its own (local) numbering: its rows (the rows it owns and, with
// overlap, rows owned by others that it solves too; partition.h), ascending.
struct Block {
  int n = 0;              // size of the whole system
  std::vector<int> rows;  // this block's rows (global), ascending
  std::vector<int> own;   // positions in `rows` of the rows this task owns, ascending
  SpMat local;            // A restricted to rows x rows
  struct Coupling {
    uint32_t task;          // m
    std::vector<int> cols;  // the rows of m whose x this block uses (global), ascending
    SpMat a;                // A restricted to rows x cols
  };
  std::vector<Coupling> in;  // the tasks this block depends on, by task
  struct Send {
    uint32_t task;          // m
    std::vector<int> rows;  // positions in `rows` of owned rows whose x m uses, ascending
  };
  std::vector<Send> out;  // who needs values of this block, by task
  Eigen::VectorXd b;      // b restricted to rows
  int64_t nonzeros = 0;   // stored entries of its rows: e_l of the TIG

  int size() const { return static_cast<int>(rows.size()); }
  // "rows 3..7" (1-based, first and last), for messages; "(with overlap)" when it has rows it
  // does not own.
  std::string Describe() const;
};

// Position of global row `r` in ascending `rows`, or -1. Contiguous blocks (the common case)
// answer without a search. Keeps a reference: `rows` must outlive it.
class RowIndex {
 public:
  explicit RowIndex(const std::vector<int>& rows)
      : rows_(rows),
        contiguous_(!rows.empty() &&
                    rows.back() - rows.front() + 1 == static_cast<int>(rows.size())) {}
  int operator()(int r) const {
    if (rows_.empty()) return -1;
    if (contiguous_) return r >= rows_.front() && r <= rows_.back() ? r - rows_.front() : -1;
    auto it = std::lower_bound(rows_.begin(), rows_.end(), r);
    return it != rows_.end() && *it == r ? static_cast<int>(it - rows_.begin()) : -1;
  }

 private:
  const std::vector<int>& rows_;
  bool contiguous_;
};

// Nonzeros of a symmetric matrix's lower triangle with its diagonal (a full diagonal assumed):
// what a Cholesky factor's fill is measured against.
inline double LowerNonzeros(const SpMat& a) {
  return static_cast<double>(a.nonZeros() + a.rows()) / 2;
}

// A compressed matrix from its row starts (rows + 1), columns and values; the columns of each
// row ascending and in range (the caller checked or built them so).
SpMat CompressedMatrix(int rows, int cols, const std::vector<int>& outer,
                       const std::vector<int>& inner, const std::vector<double>& values);

// Row `row` of A: its columns, ascending, and values.
using RowFn = std::function<void(int row, std::vector<int>& cols, std::vector<double>& vals)>;
using OwnerFn = std::function<uint32_t(int row)>;

// The rows of a compressed row-major matrix (an SpMat or an SpRef) as a RowFn. Keeps a
// reference: `a` must outlive it.
template <typename Matrix>
RowFn MatrixRows(const Matrix& a) {
  return [&a](int i, std::vector<int>& cols, std::vector<double>& vals) {
    cols.clear();
    vals.clear();
    for (typename Matrix::InnerIterator it(a, i); it; ++it) {
      cols.push_back(static_cast<int>(it.col()));
      vals.push_back(it.value());
    }
  };
}

// Builds a block of `rows` (ascending; `own`: positions of the rows it owns) from row(i) for
// each of its rows, their b values, the owner of each row outside it, and its send lists.
// `nonzeros_hint`: the block rows' stored entries when known (0: not), so its arrays are sized
// once.
Block BuildBlock(const RowFn& row, const std::vector<double>& b_rows, int n, std::vector<int> rows,
                 std::vector<int> own, const OwnerFn& owner, std::vector<Block::Send> out,
                 int64_t nonzeros_hint = 0);
// The entries of `a` (square) above its diagonal, each with its mirror: visit(i, k, m) for the
// stored a_ij, j > i, at k in a's index and value arrays, and a_ji at m. One pass without a
// search: rows in order, the mirrors a_ji of rows i = 0, 1, ... come up in the order row j
// stores them, so cursor[j] is the next one row j must have. False as soon as the pattern is not
// symmetric (a_ij stored without a_ji, or the reverse); the pairs visited until then stand.
template <typename Visit>
bool VisitMirrors(const SpRef& a, Visit&& visit) {
  const int n = static_cast<int>(a.rows());
  const int* outer = a.outerIndexPtr();  // (an SpRef is compressed)
  const int* inner = a.innerIndexPtr();
  std::vector<int> cursor(outer, outer + n);
  for (int i = 0; i < n; ++i) {
    for (int k = outer[i]; k < outer[i + 1]; ++k) {
      const int j = inner[k];
      if (j <= i) continue;
      int& c = cursor[static_cast<size_t>(j)];
      if (c >= outer[j + 1] || inner[c] != i) return false;  // a_ij stored, a_ji not
      visit(i, k, c++);
    }
  }
  // Every entry below a diagonal was matched: the cursors passed them all.
  for (int j = 0; j < n; ++j) {
    const int c = cursor[static_cast<size_t>(j)];
    if (c < outer[j + 1] && inner[c] < j) return false;  // a_ji stored, a_ij not
  }
  return true;
}

// Send lists of every block of a whole matrix: block l's rows are block_rows[l] (ascending), its
// owned rows those with owner l. Block m needs x_c for each column c outside its rows used by
// one of them; c's owner sends it.
std::vector<std::vector<Block::Send>> SendLists(const SpRef& a, const std::vector<uint32_t>& owner,
                                                const std::vector<std::vector<int>>& block_rows);
// Send lists of block l of a symmetric matrix split in slices `starts`, each block holding its
// slice and `overlap` rows either side (within 0..n-1), from l's own rows (A_ml = A_lm^T): what
// a daemon computes for itself. Positions are in l's block.
std::vector<Block::Send> SymmetricSendLists(const RowFn& row, int n, const std::vector<int>& starts,
                                            uint32_t l, int overlap = 0);

std::string EncodeBlock(const Block& block);
Result<Block> DecodeBlock(std::string_view bytes);

}  // namespace aiac::cg
