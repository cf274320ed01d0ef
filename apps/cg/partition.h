// How the CG app splits a system into task blocks (docs/user-guide.md). Pure.
//
// A partition gives each row one owner task. METIS k-way partitioning of the matrix graph (the
// pattern of A + A^T, rows weighted by their stored entries, so each task gets about the same
// work) cuts fewer couplings than contiguous slices when the rows are not numbered along the
// graph, which is what lets block methods converge on systems from files; contiguous slices
// stay for generated banded systems, whose daemons build their own blocks.
//
// Overlap: a task's block may extend its own rows by `layers` layers of the matrix graph (the
// rows its rows use, and so on). It solves that larger block and keeps only the values of its
// own rows: the multisplitting with overlap of Jones and Szyld ("Two-stage multisplitting
// methods with overlapping blocks", Numer. Linear Algebra Appl. 3 (1996) 113-124), with the
// weighting E_l = 1 on the rows task l owns and 0 elsewhere (so the E_l sum to I). Overlap
// makes each block's solve see more of the coupling and reduces the outer iterations of
// slowly converging M-matrix problems.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {

struct RowPartition {
  std::vector<uint32_t> owner;         // per row: its task
  std::vector<std::vector<int>> rows;  // per task: the rows it owns, ascending
};

// Shares of the work, one per task (the relative powers of the daemons that will run them): a
// task with twice the share gets about twice the work, so heterogeneous daemons finish their
// iterations in about the same time. Empty: equal shares.
using Shares = std::vector<double>;

// Slices of consecutive rows: starts[l] .. starts[l+1] - 1 to task l, task l's row count
// proportional to shares[l] (equal shares: Partition(n, tasks) exactly). Every task gets at
// least one row. Needs 1 <= tasks <= n and, when given, tasks positive finite shares.
std::vector<int> SliceStarts(int n, int tasks, const Shares& shares = {});
// The data slice of a task whose daemon builds its own block (a generated system) when the
// slices are uneven: the starts, "acgs" then tasks + 1 int32. Decode checks that they split
// 0..n into `tasks` non-empty slices.
std::string EncodeSliceStarts(const std::vector<int>& starts);
Result<std::vector<int>> DecodeSliceStarts(std::string_view bytes, int n, int tasks);
// The rows of SliceStarts(n, tasks, shares) as a partition.
RowPartition ContiguousPartition(int n, int tasks, const Shares& shares = {});

// METIS_PartGraphKway of the graph of A + A^T (no self-loops), vertex weights = stored entries
// of each row, `tasks` parts whose total weights follow `shares` (METIS's target partition
// weights, tpwgts). Fails (with METIS's reason) only when METIS does; a part left empty is
// refused, since every task needs rows.
Result<RowPartition> MetisPartition(const SpRef& a, int tasks, const Shares& shares = {});

// The share of A's stored entries that couple two tasks of partition `p` (0: none, 1: all).
double CutFraction(const SpRef& a, const RowPartition& p);

// The overlap `auto` picks: the most layers, up to `max_layers`, with which no block grows past
// (1 + max_growth) times its own rows; at least 1. Overlap is what makes block methods on
// elliptic problems converge (the outer iterations of Schwarz-type splittings fall about in
// proportion to the overlap width): on a 300 x 300 grid in 4 strips, 1 layer took 820..955
// outer iterations, 8 layers 166..223, 16 layers 99..105, 40 layers 44..48; each layer only
// adds a block's boundary. The growth bound keeps irregular graphs, whose layers grow fast, from
// turning each block into most of the matrix.
int AutoLayers(const SpRef& a, const std::vector<std::vector<int>>& own, double max_growth,
               int max_layers);

// A restricted to rows x rows (`rows` ascending), in the block's own numbering: what a task
// factors or iterates on.
SpMat DiagonalBlock(const SpRef& a, const std::vector<int>& rows);

// Task blocks grow `layers` layers past their own rows: each row used by a row of the block
// joins it. Ascending.
std::vector<int> Extend(const SpRef& a, const std::vector<int>& own, int layers);

}  // namespace aiac::cg
