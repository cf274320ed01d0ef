// Rows moving between neighbouring tasks while the job runs (issue 10, item 3, ordered data), for
// a system split in slices of consecutive rows without overlap: a generated banded system
// (cg_problem.h), whose daemons rebuild any row from the parameters, so only the iterate's
// values travel with the rows; or a matrix read from a file whose pattern is symmetric, whose
// rows travel with their entries and b (held_rows.h).
//
// The slices stay a chain: task l holds rows [lo, hi), task l - 1 the rows below, task l + 1
// those above, and rows move only across a boundary between neighbours. While every block keeps
// more rows than the matrix's bandwidth (MinBlockRows), a block's rows use only its two
// neighbours' rows, so each task finds its couplings and send lists from its own boundaries
// (LocalStarts): the other tasks' boundaries, which a move does not tell them, never matter, and
// the task graph stays the same.
//
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "apps/cg/held_rows.h"
#include "core/status.h"

namespace aiac::cg {

// What a task needs to rebuild its block for other rows.
struct MovableRows {
  int n = 0;
  int bandwidth = 0;  // the largest |i - j| of a stored entry a_ij
  uint32_t tasks = 0;
  uint32_t task = 0;
  // Set: a generated system, whose rows are rebuilt from it. Unset: a matrix from a file, whose
  // rows come with their entries, and whose task was made with rows [slice_lo, slice_hi) (the
  // block its replacement is made with again).
  std::optional<GeneratedSpec> generated;
  int slice_lo = 0, slice_hi = 0;
};

// The fewest rows a block keeps: one more than the bandwidth, so that no row of its neighbours
// reaches past it.
int MinBlockRows(int bandwidth);
// Whether the rows of slices `starts` (tasks + 1 row numbers) can move: every slice has
// MinBlockRows. The spawner's plan and every task decide by it alike.
bool SlicesCanMove(int bandwidth, const std::vector<int>& starts);
// The bandwidth of `a` when its pattern is symmetric (a_ij stored exactly when a_ji is), the
// condition for a task to find its send lists from its own rows (SymmetricSendLists); nullopt
// otherwise.
std::optional<int> SymmetricBandwidth(const SpRef& a);

// Slice starts as task `l` of `tasks` sees them: [lo, hi) its own, every row below lo task
// l - 1's, every row from hi on task l + 1's (the tasks further away get no rows). Enough for
// OwnerOf on any row a block of rows [lo, hi) uses, given MinBlockRows.
std::vector<int> LocalStarts(int n, uint32_t tasks, uint32_t l, int lo, int hi);

// Task `task`'s block of rows [starts[task], starts[task + 1]) of the generated system, b = A *
// ones, with the send lists of a symmetric matrix (other rows' owners from `starts`: the whole
// partition, or LocalStarts). Requires a non-empty block.
Block GeneratedBlock(const GeneratedSpec& spec, const std::vector<int>& starts, uint32_t task);
// The same for the rows `held` of a system of `n` rows with a symmetric pattern; `held` must be
// rows [starts[task], starts[task + 1]).
Block HeldBlock(const HeldRows& held, int n, const std::vector<int>& starts, uint32_t task);

// The data slice of a task whose rows may move, for a matrix from a file: "acgv", the matrix's
// bandwidth, then the slice it would get otherwise (a block, or its outline).
std::string EncodeMovableSlice(int bandwidth, std::string_view slice);
bool IsMovableSlice(std::string_view slice);
struct MovableSlice {
  int bandwidth = 0;
  std::string_view slice;  // a view into the bytes decoded
};
Result<MovableSlice> DecodeMovableSlice(std::string_view bytes);

// Rows [lo, hi) leaving a task, with their values, and the values of the rows next to them that
// the taking task will use from the giving one (`halo_lo` and on), so that it iterates at once
// with what the giver knew. lo == hi: no row.
struct RowMove {
  int n = 0;
  int lo = 0, hi = 0;
  std::vector<double> x;  // hi - lo values
  int halo_lo = 0;
  std::vector<double> halo;
  HeldRows entries;  // a matrix from a file: rows [lo, hi) themselves; else empty
};

std::string EncodeRowMove(const RowMove& move);
// Checks the magic, the sizes, and that every row lies in 0..n-1 of a system of `n` rows (and
// that the entries, when there are any, are rows [lo, hi)).
Result<RowMove> DecodeRowMove(std::string_view bytes, int n);

}  // namespace aiac::cg
