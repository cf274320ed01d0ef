// Rows moving between neighbouring tasks while the job runs (docs/balancing.md, ordered data), for
// a system split in slices of consecutive rows: a generated banded system
// (cg_problem.h), whose daemons rebuild any row from the parameters, so only the iterate's
// values travel with the rows; or a matrix read from a file whose pattern is symmetric, whose
// rows travel with their entries and b (held_rows.h).
//
// The slices stay a chain: task l owns rows [lo, hi), task l - 1 the rows below, task l + 1
// those above, and rows move only across a boundary between neighbours. With overlap, task l's
// block is a slab: its slice and `overlap` rows either side, [lo - overlap, hi + overlap) within
// 0..n-1, which holds the slice's layers of the matrix graph (the spawner picks the fewest rows
// that do, SlabOverlap); it solves them all and keeps the values of the rows it owns, as with any
// overlap (partition.h). While every slice keeps more rows than overlap + bandwidth
// (MinBlockRows), a block's rows use only its two neighbours' rows, so each task finds its
// couplings and send lists from its own boundaries (LocalStarts): the other tasks' boundaries,
// which a move does not tell them, never matter, and the task graph stays the same.
//
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  int overlap = 0;  // rows the block holds past its slice on either side
};

// The fewest rows a slice keeps: one more than overlap + bandwidth, so that no row of its
// neighbours' blocks reaches past it.
int MinBlockRows(int bandwidth, int overlap = 0);
// Whether the rows of slices `starts` (tasks + 1 row numbers) can move: every slice has
// MinBlockRows. The spawner's plan and every task decide by it alike.
bool SlicesCanMove(int bandwidth, const std::vector<int>& starts, int overlap = 0);
// The slab block of slice [lo, hi): [lo - overlap, hi + overlap) within 0..n-1.
std::pair<int, int> SlabRows(int n, int lo, int hi, int overlap);
// The fewest rows `overlap` for which each slice's slab holds its block `block_rows[l]`
// (ascending, its slice [starts[l], starts[l + 1]) and more: partition.h's Extend).
int SlabOverlap(const std::vector<int>& starts, const std::vector<std::vector<int>>& block_rows);
// The bandwidth of `a` when its pattern is symmetric (a_ij stored exactly when a_ji is), the
// condition for a task to find its send lists from its own rows (SymmetricSendLists); nullopt
// otherwise.
std::optional<int> SymmetricBandwidth(const SpRef& a);

// Slice starts as task `l` of `tasks` sees them: [lo, hi) its own, every row below lo task
// l - 1's, every row from hi on task l + 1's (the tasks further away get no rows). Enough for
// OwnerOf on any row a block of rows [lo, hi) uses, given MinBlockRows.
std::vector<int> LocalStarts(int n, uint32_t tasks, uint32_t l, int lo, int hi);

// Task `task`'s block of the generated system: the slab of its slice [starts[task], starts[task
// + 1]) (SlabRows), b = A * ones, with the send lists of a symmetric matrix (other rows' owners
// from `starts`: the whole partition, or LocalStarts). Requires a non-empty slice.
Block GeneratedBlock(const GeneratedSpec& spec, const std::vector<int>& starts, uint32_t task,
                     int overlap = 0);
// The same for the rows `held` of a system of `n` rows with a symmetric pattern; `held` must be
// the slab's rows.
Block HeldBlock(const HeldRows& held, int n, const std::vector<int>& starts, uint32_t task,
                int overlap = 0);

// The data slice of a task whose rows may move, for a matrix from a file: "acgv", the matrix's
// bandwidth, the blocks' overlap in rows, then the slice it would get otherwise (a block, or its
// outline).
std::string EncodeMovableSlice(int bandwidth, int overlap, std::string_view slice);
bool IsMovableSlice(std::string_view slice);
struct MovableSlice {
  int bandwidth = 0;
  int overlap = 0;
  std::string_view slice;  // a view into the bytes decoded
};
Result<MovableSlice> DecodeMovableSlice(std::string_view bytes);

// Rows [lo, hi) leaving a task, with their values, and the values of the rows next to them that
// the taking task will hold or use from the giving one (`halo_lo` and on), so that it iterates
// at once with what the giver knew. lo == hi: no row.
struct RowMove {
  int n = 0;
  int lo = 0, hi = 0;
  std::vector<double> x;  // hi - lo values
  int halo_lo = 0;
  std::vector<double> halo;
  // A matrix from a file: rows [lo, hi) themselves and, with overlap, the giver's rows next to
  // them that the taker's block will hold; else empty.
  HeldRows entries;
};

std::string EncodeRowMove(const RowMove& move);
// Checks the magic, the sizes, and that every row lies in 0..n-1 of a system of `n` rows (and
// that the entries, when there are any, hold rows [lo, hi)).
Result<RowMove> DecodeRowMove(std::string_view bytes, int n);

}  // namespace aiac::cg
