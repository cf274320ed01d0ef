// A task block described without its matrix entries (docs/user-guide.md): what the spawner sends a
// daemon that can read the matrix itself (the job's `shared_input`: the daemons see the
// spawner's files at the same paths, as on one host or a shared filesystem). The daemon maps
// the matrix's binary cache (matrix_cache.h), which the spawner has just read or written, and
// builds its own block from its rows: the blocks are built in parallel by their daemons, and
// what travels is a few bytes per row instead of every entry.
//
// The outline names the version of the matrix file the spawner partitioned; a daemon whose cache
// is of another version refuses the task rather than build a block of another matrix. The block
// it builds is checked against the outline: the same stored entries, and the same columns
// outside the block, owned by the same tasks. Pure apart from BuildBlockFromCache, which reads
// the mapped cache.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "apps/cg/matrix_cache.h"
#include "core/status.h"

namespace aiac::cg {

struct BlockOutline {
  int n = 0;                   // rows of the whole system
  int64_t nonzeros = 0;        // stored entries of the block's rows
  std::string matrix;          // the matrix file's path, absolute, as the spawner saw it
  MatrixFileVersion source{};  // the version of it the spawner read
  std::vector<int> rows;       // the block's rows (global), ascending
  std::vector<int> own;        // positions in `rows` of the rows the task owns, ascending
  std::vector<double> b;       // b restricted to rows
  struct Input {
    uint32_t task;          // m
    std::vector<int> cols;  // the rows of m whose x this block uses (global), ascending
  };
  std::vector<Input> in;         // by task
  std::vector<Block::Send> out;  // as in Block
};

// The outline of the block of `rows` (ascending; `own`: positions of the rows it owns; `b_rows`:
// b on those rows) of the matrix `a` under the row owners `owner`, with its send lists `out`.
BlockOutline OutlineBlock(const SpRef& a, std::vector<double> b_rows, std::vector<int> rows,
                          std::vector<int> own, const std::vector<uint32_t>& owner,
                          std::vector<Block::Send> out, std::string matrix,
                          const MatrixFileVersion& source);

// "acgr", then the fields. Decode checks every list (ascending, in range, sizes agree).
std::string EncodeBlockOutline(const BlockOutline& outline);
bool IsBlockOutline(std::string_view slice);
Result<BlockOutline> DecodeBlockOutline(std::string_view bytes);

// The block of `outline`, its entries read from `cache`. Corruption when the cache's rows
// disagree with the outline (another matrix of the same shape, or a damaged cache).
Result<Block> BuildBlockFromCache(BlockOutline outline, const MappedMatrixCache& cache);
// The same, from the cache of outline.matrix, mapped here: NotFound or Unavailable (with the
// path) when this host has no cache of the version the spawner read.
Result<Block> BuildBlockFromCache(BlockOutline outline);

}  // namespace aiac::cg
