// The multisplitting conjugate-gradient app (docs/architecture.md, design choices). Task l solves
//   A_ll x_l = b_l - sum_{m != l} A_lm x_m
// with an inner CG from the newest x_m received, sends each neighbour the entries of x_l it
// uses, and is locally converged when the max-norm change of x_l stayed below `tolerance` for
// `stable_iterations` iterations in a row.
//
// Job parameters ([params] of the job file):
//   n, bandwidth, seed      generate the system (each daemon rebuilds its own block;
//                           bandwidth defaults to min(8, n-1), seed to 1), or
//   matrix = "A.mtx"        read it (coordinate real, general or symmetric), with
//   rhs = "b.mtx"           the right-hand side (array or coordinate); default b = A * ones
//   tolerance = 1e-8        outer convergence threshold (max-norm change of x_l)
//   stable_iterations = 3   consecutive iterations below it
//   inner_tolerance = 1e-12 relative residual of the inner CG
//   output = "x.mtx"        where the spawner writes the solution (Matrix Market array)
//   shared_input = "auto"   daemons read their blocks from the matrix's cache (see CgParams)
#pragma once

#include <future>
#include <optional>

#include "app/app.h"
#include "apps/cg/cg_params.h"
#include "apps/cg/cg_problem.h"
#include "apps/cg/cg_task.h"
#include "apps/cg/matrix_cache.h"
#include "apps/cg/partition.h"
#include "apps/cg/row_moves.h"

namespace aiac::cg {

// partition = "auto" keeps slices of consecutive rows when they cut at most this share of the
// matrix's entries (a banded matrix: about 1e-5; a 1000 x 1000 grid in 5 strips, 0.2 %; an 80^3
// grid in 5 slabs, 1.46 %): METIS could not do much better, and it costs 2 s on 800,000 rows. On
// the 80^3 grid, METIS's blocks took 16.4-16.8 s to the slabs' 12.1-12.4 s (two-stage, 1 layer
// of overlap), and 46.3 s to 43.1 s with factors: more neighbours each, blocks that fill more.
inline constexpr double kSlicesGoodEnough = 0.02;
// overlap = "auto": blocks may grow by half their rows, with at most 64 layers.
inline constexpr double kAutoOverlapGrowth = 0.5;
inline constexpr int kAutoOverlapLayers = 64;
// overlap = "auto" and coarse_pieces = "auto" when inner = "auto" will iterate the blocks (their
// factors would fill more than CgTask::kAutoMostFill): a two-stage block pays for every coarse
// function in inner iterations, and with IC(0) or Jacobi for every layer too. On an 80^3 grid
// in 5 slabs with IC(0), 1 or 2 layers with 4 pieces took 12.0-12.4 s, with 8 pieces 13.9-15.6 s,
// and AutoLayers' 7 layers with 8 pieces 15.1-15.9 s (docs/results.md). With the multigrid cycle
// AutoLayers' overlap pays (1000^2 grid: its 50 layers 3.9 s, 2 layers 6.8-11.5 s; 80^3 grid:
// its 4 layers 3.2-3.8 s, 2 layers 4.0-4.5 s) and 4 pieces did as well as 8 in 2-D
// (3.9 s against 3.6-4.5 s) and better in 3-D (3.2-3.8 s against 4.6-5.3 s; two runs or more
// each).
inline constexpr int kIteratedOverlapLayers = 2;
inline constexpr int kIteratedCoarsePieces = 4;
// coarse_pieces = "auto" otherwise.
inline constexpr int kCoarsePieces = 8;

// The matrix of a Matrix Market file, compressed: from its binary cache when `use_cache` and the
// cache matches the file, else parsed (and the cache written when `use_cache`). What happened to
// the cache goes to `notes`, a line each. `cached`: the version of the file the cache on disk now
// holds, when the matrix came from it or went into it. A matrix from the cache stays in the
// mapped file (`mapped`); one parsed from the text is `parsed`.
struct MatrixRead {
  SpMat parsed;
  std::optional<MappedMatrixCache> mapped;
  std::optional<MatrixFileVersion> cached;
  // Parsed by ParseMatrix with `use_cache`: the version of the file whose cache is still to be
  // written (WriteMatrixCache).
  std::optional<MatrixFileVersion> to_cache;
  SpRef matrix() const { return mapped ? SpRef(mapped->matrix()) : SpRef(parsed); }
};
Result<MatrixRead> ReadMatrix(const std::string& path, bool use_cache,
                              std::vector<std::string>& notes);
// ReadMatrix in two steps, so that the cache of a parsed matrix can be written while the caller
// goes on with the matrix (CgApp::Prepare partitions it meanwhile): ParseMatrix leaves the
// cache to WriteMatrixCache, which writes `a` (the parsed matrix, wherever it was moved) for
// `version` and returns the note to give.
Result<MatrixRead> ParseMatrix(const std::string& path, bool use_cache,
                               std::vector<std::string>& notes);
Result<std::string> WriteMatrixCache(const std::string& path, const SpMat& a,
                                     const MatrixFileVersion& version);

class CgApp final : public app::App {
 public:
  std::string_view name() const override { return "cg"; }
  Result<app::JobPlan> Prepare(const app::JobParams& params) override;
  // The partition again (METIS with target weights, or slices), each task's rows in proportion
  // to its daemon's power (docs/user-guide.md).
  Result<std::optional<app::JobPlan>> Reweigh(const app::JobParams& params,
                                              const std::vector<double>& task_powers) override;
  Result<std::unique_ptr<app::Task>> MakeTask(const app::JobParams& params, uint32_t task,
                                              std::string_view slice) override;
  Result<app::GatherReport> Gather(const app::JobParams& params,
                                   const std::vector<std::string>& slices) override;

 private:
  // MakeTask's work (MakeTask logs what it built).
  Result<std::unique_ptr<app::Task>> BuildTask(const app::JobParams& params, uint32_t task,
                                               std::string_view slice);
  // What reading a system from files gave besides the matrix: notes, the seconds spent reading,
  // and the writer of a parsed matrix's cache, still at work (waited for when it goes).
  struct Reading {
    std::vector<std::string> notes;
    double seconds = 0;
    std::future<Result<std::string>> cache_writer;
  };
  // The matrix (from its cache, or parsed) and the right-hand side of a system from files.
  Status ReadSystem(const CgParams& p, bool shared_files, Reading& reading);
  // METIS or slices (of the file's rows, or of its rows renumbered in reverse Cuthill-McKee
  // order when those cut little), decided once on equal shares.
  void ChoosePartition(const CgParams& p, uint32_t tasks, std::vector<std::string>& notes);
  // Whether the job is two-level (coarse_): params.coarse, for this matrix and task count; the
  // rows then stay in their blocks. Refuses coarse = "harmonic" for an unsymmetric matrix.
  Status ChooseCoarse(const CgParams& p, uint32_t tasks, std::vector<std::string>& notes);
  // The rows of each task's block and who owns every row, for these shares of the work.
  struct Blocks {
    RowPartition part;
    std::vector<std::vector<int>> rows;  // per task: its block's rows (its own and its layers)
    bool metis = false;                  // METIS parts (else slices)
    int layers = 0;                      // overlap
    bool auto_layers = false;            // overlap = "auto"
    int slab = 0;                        // rows either side of a movable slice in its block
    int coarse_pieces = kCoarsePieces;   // with coarse_: pieces of each coupling
  };
  // Whether inner = "auto" will iterate the blocks of `part`: the largest one's predicted fill
  // (BlockDirect::PredictedFill) with `layers` of overlap (what it would get iterated), over
  // CgTask::kAutoMostFill. Predicted once, on Prepare's partition, and only when an "auto"
  // choice depends on it.
  bool WillIterate(const CgParams& p, const RowPartition& part, int layers);
  // METIS parts (or slices when METIS leaves a part empty) with their layers; movable slices'
  // blocks are slabs (chain_ set when the rows may move).
  Result<Blocks> PartitionBlocks(const CgParams& p, uint32_t tasks, const Shares& shares,
                                 std::vector<std::string>& notes);
  // Each task's node of the task graph and its slice (a block, an outline, or the slice starts).
  app::JobPlan BuildPlan(const CgParams& p, const Blocks& blocks, const Shares& shares);
  // What the user is told of the partition.
  void NoteBlocks(const Blocks& blocks, const Shares& shares,
                  std::vector<std::string>& notes) const;
  // The partition, the blocks with their overlap, and the plan, for these shares of the work.
  // `notes` go first in the plan's notes.
  Result<app::JobPlan> Split(const CgParams& p, uint32_t tasks, const Shares& shares,
                             std::vector<std::string> notes);

  // A matrix with zeros on its diagonal: its rows permuted to put large entries there
  // (matching.h), and b with them.
  Status PutLargeEntriesOnTheDiagonal(const CgParams& p, Reading& reading);

  // The system's matrix: renumbered, else with its rows permuted, else the mapped cache it came
  // from, else problem_.a.
  SpRef A() const {
    return !order_.empty()       ? SpRef(renumbered_)
           : !row_order_.empty() ? SpRef(permuted_)
           : mapped_             ? SpRef(mapped_->matrix())
                                 : SpRef(problem_.a);
  }

  std::optional<CgParams> params_;  // parsed once, by Prepare
  Problem problem_;  // spawner side, kept from Prepare for the residual (a: see A(); b renumbered)
  std::optional<MappedMatrixCache> mapped_;  // a matrix from its cache: problem_.a is then empty
  // A file's rows renumbered (partition "auto", renumber.h): order_[i] is the file's row at
  // position i of renumbered_, the matrix every task and the residual see; empty: the file's
  // order. Results are put back in the file's order.
  std::vector<int> order_;
  SpMat renumbered_;
  // A matrix whose diagonal has zeros: row j of permuted_ is the file's row row_order_[j] (only
  // rows move: the unknowns keep their numbering). Empty: no zero on the diagonal.
  std::vector<int> row_order_;
  SpMat permuted_;
  bool metis_ = false;   // METIS rather than slices, decided by Prepare
  bool coarse_ = false;  // a two-level job (ChooseCoarse); its slices say so (EncodeCoarseSlice)
  // WillIterate's prediction, once made: the largest block's rows and fill (0: not predicted).
  struct FillPrediction {
    size_t rows = 0;
    int layers = 0;
    double fill = 0;
    // What inner = "auto" does with such a block (CgTask's own test).
    bool iterated() const { return fill > CgTask::kAutoMostFill; }
  };
  std::optional<FillPrediction> predicted_;
  // The matrix's bandwidth when its rows may move between slices (a generated system, or a file's
  // matrix with a symmetric pattern in slices), from Prepare; chain_: they may in the last plan.
  std::optional<int> bandwidth_;
  bool chain_ = false;
  // Set when the daemons build their blocks from the matrix's cache (shared_input): the path
  // and version of the file the cache was made from.
  std::string shared_matrix_;
  std::optional<MatrixFileVersion> shared_source_;
  std::vector<std::vector<int>> owned_;  // per task, the rows it owns: where its result goes
};

}  // namespace aiac::cg
