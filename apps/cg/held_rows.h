// The matrix rows a CG task holds, with their entries, so that the rows of a system read from a
// file can move between tasks (docs/balancing.md; row_moves.h). A generated system's rows are
// rebuilt anywhere from its parameters; a file's rows exist only where the file was read, so
// they travel with their entries: in a move, and in the checkpoint of a task holding rows its
// first block did not have (its replacement gets that first block again).
//
// Rows [lo, hi) in compressed form: global columns, ascending in each row, and b on the rows.
// Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "apps/cg/byte_codec.h"
#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {

struct HeldRows {
  int lo = 0;
  std::vector<int64_t> ptr = {0};  // hi() - lo + 1 starts into cols and vals
  std::vector<int> cols;
  std::vector<double> vals;
  std::vector<double> b;

  int hi() const { return lo + static_cast<int>(b.size()); }
  bool empty() const { return b.empty(); }
  // Row r's entries (lo <= r < hi()), as a RowFn gives them.
  void Row(int r, std::vector<int>& row_cols, std::vector<double>& row_vals) const;
  // Rows [from, to) of these (clamped to them; an empty range gives no row, starting at `from`).
  HeldRows Part(int from, int to) const;
};

// Rows [from, to) of `block`, a block of consecutive rows (a slice, or its slab), with their
// entries from its local matrix and its couplings. Requires block.rows.front() <= from <= to <=
// block.rows.back() + 1.
HeldRows HeldRowsOf(const Block& block, int from, int to);

// `below` then `above`, which must be next to each other (either may be empty).
Result<HeldRows> JoinRows(HeldRows below, HeldRows above);

void PutHeldRows(SliceWriter& w, const HeldRows& rows);
// Checks that the rows lie in 0..n-1, the starts ascend to the entries' count and every row's
// columns ascend within 0..n-1.
bool GetHeldRows(SliceReader& r, HeldRows& rows, int n);

}  // namespace aiac::cg
