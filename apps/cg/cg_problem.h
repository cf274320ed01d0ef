// The linear system of the multisplitting CG app (DESIGN.md section 4): A x = b with A sparse,
// square, with a non-zero diagonal, split into one contiguous block of rows per task.
//
// A generated system (n, bandwidth, seed) is symmetric, banded and strictly diagonally
// dominant, so asynchronous iterations converge; any of its rows can be computed alone, so each
// daemon rebuilds its own block. A system read from files is split by the spawner, which ships
// each task its block. Pure: no I/O here beyond what the caller passes in.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Sparse>

#include "core/status.h"

namespace aiac::cg {

using SpMat = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

struct GeneratedSpec {
  int n = 0;
  int bandwidth = 0;
  uint64_t seed = 0;
};

// Row i of the generated matrix, columns ascending: off-diagonal entries -(0.1 + 0.9 u) with u
// a hash of (seed, min(i,j), max(i,j)) in [0, 1) for 0 < |i - j| <= bandwidth, and a diagonal of
// 1 + the sum of their magnitudes.
void GeneratedRow(const GeneratedSpec& spec, int i, std::vector<int>& cols, std::vector<double>& vals);

struct Problem {
  SpMat a;
  Eigen::VectorXd b;
};

// b = A * ones: the exact solution is all ones.
Problem Generate(const GeneratedSpec& spec);
// Checks a system read from files: square, no zero on the diagonal, b of the right size.
Status CheckSystem(const SpMat& a, const Eigen::VectorXd& b, const std::string& name);

// Rows [starts[l], starts[l+1]) belong to task l; sizes differ by at most one.
std::vector<int> Partition(int n, int tasks);
int OwnerOf(const std::vector<int>& starts, int row);

// Everything task l needs, in its own (local) numbering.
struct Block {
  int n = 0;                  // size of the whole system
  int first = 0, rows = 0;    // this block's rows
  SpMat local;                // A_ll, rows x rows
  struct Coupling {
    uint32_t task;                // m
    std::vector<int> cols;        // indices of x_m used, local to m's block, ascending
    SpMat a;                      // A_lm restricted to those columns: rows x cols.size()
  };
  std::vector<Coupling> in;       // the tasks this block depends on, by task
  struct Send {
    uint32_t task;                // m
    std::vector<int> rows;        // indices of x_l that m uses, local to this block, ascending
  };
  std::vector<Send> out;          // who needs values of this block, by task
  Eigen::VectorXd b;              // b_l
  int64_t nonzeros = 0;           // e_l of the TIG
};

using RowFn = std::function<void(int row, std::vector<int>& cols, std::vector<double>& vals)>;

// Builds block l from its rows (row(i) for i in l's range) and the given send lists.
Block BuildBlock(const RowFn& row, const std::vector<double>& b_local, int n,
                 const std::vector<int>& starts, uint32_t l, std::vector<Block::Send> out);
// Send lists of every block of a whole matrix: who uses which entries of whose block.
std::vector<std::vector<Block::Send>> SendLists(const SpMat& a, const std::vector<int>& starts);
// Send lists of block l of a symmetric matrix, from l's own rows (A_ml = A_lm^T).
std::vector<Block::Send> SymmetricSendLists(const RowFn& row, int n, const std::vector<int>& starts, uint32_t l);

std::string EncodeBlock(const Block& block);
Result<Block> DecodeBlock(std::string_view bytes);

}  // namespace aiac::cg
