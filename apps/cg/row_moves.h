// Rows of a generated system moving between neighbouring tasks while the job runs (issue 10,
// item 3, ordered data). A generated banded system (cg_problem.h) split in slices of consecutive
// rows is the one case where the partition can change cheaply: any daemon rebuilds any row from
// the parameters, so only the iterate's values travel with the rows.
//
// The slices stay a chain: task l holds rows [lo, hi), task l - 1 the rows below, task l + 1
// those above, and rows move only across a boundary between neighbours. While every block keeps
// more rows than the bandwidth (MinBlockRows), a block's rows use only its two neighbours' rows,
// so each task finds its couplings and send lists from its own boundaries (LocalStarts): the
// other tasks' boundaries, which a move does not tell them, never matter, and the task graph
// stays the same.
//
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {

// What a task needs to rebuild its block for other rows.
struct MovableRows {
  GeneratedSpec spec;
  uint32_t tasks = 0;
  uint32_t task = 0;
};

// The fewest rows a block keeps: one more than the bandwidth, so that no row of its neighbours
// reaches past it.
int MinBlockRows(const GeneratedSpec& spec);
// Whether the rows of slices `starts` (tasks + 1 row numbers) can move: every slice has
// MinBlockRows. The spawner's plan and every task decide by it alike.
bool SlicesCanMove(const GeneratedSpec& spec, const std::vector<int>& starts);

// Slice starts as task `l` of `tasks` sees them: [lo, hi) its own, every row below lo task
// l - 1's, every row from hi on task l + 1's (the tasks further away get no rows). Enough for
// OwnerOf on any row a block of rows [lo, hi) uses, given MinBlockRows.
std::vector<int> LocalStarts(int n, uint32_t tasks, uint32_t l, int lo, int hi);

// Task `task`'s block of rows [starts[task], starts[task + 1]) of the generated system, b = A *
// ones, with the send lists of a symmetric matrix (other rows' owners from `starts`: the whole
// partition, or LocalStarts). Requires a non-empty block.
Block GeneratedBlock(const GeneratedSpec& spec, const std::vector<int>& starts, uint32_t task);

// Rows [lo, hi) leaving a task, with their values, and the values of the rows next to them that
// the taking task will use from the giving one (`halo_lo` and on), so that it iterates at once
// with what the giver knew. lo == hi: no row.
struct RowMove {
  int n = 0;
  int lo = 0, hi = 0;
  std::vector<double> x;  // hi - lo values
  int halo_lo = 0;
  std::vector<double> halo;
};

std::string EncodeRowMove(const RowMove& move);
// Checks the magic, the sizes, and that every row lies in 0..n-1 of a system of `n` rows.
Result<RowMove> DecodeRowMove(std::string_view bytes, int n);

}  // namespace aiac::cg
