// One task of the multisplitting CG app, on its daemon: its block A_ll (factored once, or solved
// by an inner CG), the newest values of the columns it uses from its neighbours, and its
// iterate x_l. Task l solves A_ll x_l = b_l - sum_{m != l} A_lm x_m at each iteration and is
// locally converged when the max-norm change of x_l, over its max norm, stayed below
// `tolerance` for `stable_iterations` iterations in a row. When its rows may move (slices of a
// symmetric pattern, row_moves.h) it gives rows to its neighbours and takes theirs between two
// iterations, rebuilding its block (its slab), solvers and send lists. With a coarse space
// (coarse_rounds.h) it also exchanges its coarse section with every task, and when a round
// completes adds the coarse correction to the neighbours' values its next block solve uses.
//
// An inner CG may stop once it has cut its block's residual by `inner_reduction` (what `auto`
// does when the block's factor would fill too much): the two-stage multisplitting method, whose
// asynchronous iterations converge with any number of inner steps for an H-matrix (Frommer and
// Szyld, "Asynchronous two-stage iterative methods", Numer. Math. 69, 1994); such a solve that
// left more than the local test's residual makes the next iteration solve again, new input or
// not, where an exact one would wait for input.
//
// Called from the task's thread only (app::Task).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/app.h"
#include "apps/cg/block_cg.h"
#include "apps/cg/block_direct.h"
#include "apps/cg/cg_params.h"
#include "apps/cg/cg_problem.h"
#include "apps/cg/coarse_rounds.h"
#include "apps/cg/held_rows.h"
#include "apps/cg/row_moves.h"

namespace aiac::cg {

// A task of a two-level job: which task it is, of how many, and the pieces per coupling of its
// coarse functions (coarse_space.h).
struct CoarseSetup {
  uint32_t task = 0;
  uint32_t tasks = 0;
  int pieces = 0;
};

class CgTask final : public app::Task {
 public:
  // inner = "auto" iterates, with the smoothed-aggregation preconditioner, a block whose Cholesky
  // factor would have more than this many times the nonzeros of its lower triangle. A factor's
  // solve reads its fill times the lower triangle, a V-cycle with its product about 8 times the
  // block; the factor's set-up grows faster than that. Measured on 5 tasks sharing 2 cores
  // (docs/results.md, "Multigrid block solves"): 2-D grids of 700^2 and 1000^2 (blocks filling
  // 11x) took 0.55x and 0.6x the time with multigrid, 300^2 (7.8x) the same, and a banded
  // system (1x) 1.6x; a 3-D grid (50-120x) 0.5x of IC(0)'s time.
  static constexpr double kAutoMostFill = 8;
  // The same for a block with a diagonal entry that is not positive, hence not positive
  // definite: neither CG nor the cycle applies to it, iterating it means MINRES with Jacobi, and
  // a factor (LU, once Cholesky fails) pays up to the limit auto had before the cycle.
  static constexpr double kAutoMostFillNotDefinite = 30;

  // Builds the block's solver; the factor, when there is one, is computed here, once (and again
  // after rows move).
  static Result<std::unique_ptr<CgTask>> Make(Block block, const CgParams& params,
                                              std::optional<MovableRows> movable,
                                              std::optional<CoarseSetup> coarse = std::nullopt);

  CgTask(Block block, const CgParams& params, std::optional<MovableRows> movable);

  // Its block's neighbours; with a coarse space, every other task.
  std::vector<uint32_t> Dependencies() const override;

  // With a coarse space, a message is its coarse section (a 4-byte length first), then the
  // values, if any.
  Status Absorb(uint32_t from, std::string_view bytes) override;

  Result<bool> Iterate() override;

  // Each neighbour's values after the global row of the first of them, so that a receiver whose
  // rows moved since tells them from the values it now needs; with a coarse space, every task's
  // coarse section before them.
  std::vector<app::Outgoing> TakeOutgoing() override;

  double LocalChange() const override { return change_; }

  Status Tighten(double factor) override;
  bool LocallyConverged() const override { return stable_ >= p_.stable_iterations; }

  // The rows the task owns first ([-1, -1) when they are not consecutive), so that a task
  // restored after its rows moved rebuilds the block the state belongs to.
  std::string SaveState() const override;

  Status RestoreState(std::string_view state) override;

  // The values of the rows this task owns (overlap rows are their owners' to give), after
  // their count and the global row of the first (-1 when they are not consecutive).
  std::string ResultSlice() const override;
  // How its block is solved, when that is not the usual (Cholesky or CG of a symmetric positive
  // definite block, LU or BiCGSTAB of an unsymmetric one): "block of rows 1..500: not positive
  // definite, factored by LU", "... singular, solved in the least-squares sense (QR)".
  std::string Notes() const override;

  // ---- Moving rows (row_moves.h). The work unit is an owned row solved once: an iteration of a
  // block owning r rows does r units (with overlap it solves more, the same number more for
  // every block whatever its slice: a move changes the owned rows).
  double WorkDone() const override { return work_done_; }
  double RemainingWork() const override;
  int64_t ItemCount() const override { return movable_ ? static_cast<int64_t>(b_.own.size()) : -1; }

  // The rows at the end of the block next to `to`, about `work` / (a horizon recently reported)
  // of them, keeping MinBlockRows. The spawner turned rows into work with the horizon of one of
  // the last reports it had (a later one may be on its way): the horizon now may differ by
  // orders of magnitude (a block that has just converged expects 3 iterations, not thousands),
  // which made a move of 800 rows one of the whole block. The largest of the last reported
  // horizons errs on the side of giving fewer rows, which the next checking point can add to.
  Result<std::string> ExportItems(double work, uint32_t to) override;

  // Rows next to the block (from a neighbour), with their values.
  Status ImportItems(std::string_view bytes) override;

  // Rows this task gave away before (at one end of its block).
  Status DropItems(std::string_view bytes) override;

 private:
  // The finest local test: a few units in the last place of a double, where block solves
  // stop telling one iterate from the next.
  static constexpr double kFinestTolerance = 1e-14;
  // The two-stage method's inner reduction when `auto` iterates (inner_reduction = "auto"): on
  // the 80^3 grid, 0.1 and 0.2 took the same time, 0.3 needed 2.5x the outer iterations.
  static constexpr double kAutoInnerReduction = 0.2;
  // Coarse functions computed by an inner CG are solved to this relative residual: A_0 is made
  // from the functions as computed, so they need not be exact (1e-5 took 3x the set-up for 10 %
  // fewer outer iterations; 1e-1, a third more iterations).
  static constexpr double kBasisTolerance = 1e-2;
  // The same with the multigrid cycle, which cuts every component of the error alike: one inner
  // iteration. On a 1000^2 grid on 5 tasks it took 0.4 s off the set-up of a 4.1-4.5 s run for
  // as many outer iterations as 1e-2.
  static constexpr double kAmgBasisTolerance = 1e-1;
  static constexpr size_t kHistory = 16;  // changes kept for Horizon()
  // What an outer iteration costs besides its inner CG's iterations, in those iterations: the
  // right-hand side, the initial residual's product, the change and the scale over the block.
  // Measured on a 150,000-row block of the generated banded system (bandwidth 12): a solve took
  // 6.8 ms + 1.65 ms per inner iteration. Without it, a task whose warm-started solves took 4
  // iterations near the end (50 at first) seemed to run at half its host's speed, which the
  // balancer took for a slower host.
  static constexpr int kSolveOverhead = 4;

  static Status NotMovable();

  // x = the block's solution for rhs, by its factor or its inner CG; `x` starts the inner CG.
  Status SolveBlock(const Eigen::VectorXd& rhs, Eigen::VectorXd& x);
  // The same for every column of `rhs`, from zero: in one pass through a factor.
  Status SolveBlocks(const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x);
  // Most iterations of one inner solve.
  int InnerIterationLimit() const { return std::max(100, 10 * b_.size()); }
  // Ok for an empty breakdown, else the error naming the block and what broke down.
  Status Breakdown(const std::string& breakdown) const;
  // Whether this iteration, `due` (new input, no coarse round completed), is left to the coarse
  // round under way (CgParams::coarse_wait): see Iterate.
  bool WaitsForCoarseRound(bool due);

  // The rows the task owns, [Lo(), Hi()), when they are consecutive, else -1, -1.
  int Lo() const { return OwnRowsFrom(); }
  int Hi() const { return Lo() < 0 ? -1 : b_.rows[b_.own.back()] + 1; }
  int32_t OwnRowsFrom() const;
  // The block's rows, [BlockLo(), BlockHi()): a movable task's are consecutive (its slab).
  int BlockLo() const { return b_.rows.front(); }
  int BlockHi() const { return b_.rows.back() + 1; }

  // Outer iterations this task expects to need still, from how fast its change fell over the
  // last ones (Fall): log(tolerance / change) / fall, plus the stable iterations. A change that
  // does not fall now (it rose for a while after rows moved or new inputs came) falls at the
  // rate it fell before (fall_); one that never fell yet: as many again as so far. (That
  // fallback after every move of rows made the balancer expect a task at iteration 60 to need
  // 60 more, and judge moves that had paid as losses.)
  double Horizon() const;
  // log(last / first) per iteration over history_ (the lowest of its first and of its last four
  // changes, as asynchronous inputs make them spiky; of its first and last halves before 8),
  // when it fell; needs 4 changes. (Needing 8 left a young task at "as many again", 0.6-0.8x
  // of the work it then did in CgAppTest.TheWorkLeftIsWhatTheTaskThenDoes, when a balancer
  // first decides.)
  std::optional<double> Fall() const;
  static constexpr double kMostIterations = 1e6;
  // What an outer iteration still to come costs per row, in the work units WorkDone counts: 1
  // with the factor (a solve costs the same every time), the inner CG's iterations otherwise
  // (each a product with the block and a preconditioner step) plus kSolveOverhead. In a
  // rows x inner iterations unit a task's speed is its host's; in rows per second, a task whose
  // warm-started solves took 2 inner iterations looked 30 times as fast as its neighbour that
  // took 60, and balancing moved most rows to it. A warm-started solve takes fewer inner
  // iterations as the change falls, about linearly in log(change) (on a 150,000-row block of the
  // generated banded system: 47 at a change of 1e-2, 35 at 1e-4, 25 at 1e-6, 15 at 1e-8, 7 at
  // 1e-10), so the solves to go cost the mean of the cost now and the cost at the local test,
  // both read off a least-squares line of the cost against log(change) over history_, the one
  // at the test at least kSolveOverhead + 1 and neither above the highest cost seen. The mean of
  // the last kHistory solves (what it was until 2026-12-03) is the fallback before 4 changes:
  // it put the work left of an end task of the chain 2.0 to 4.5 times what the task then did.
  double CostPerIteration() const;
  // The work a row still holds: Horizon() x CostPerIteration().
  double WorkPerRow() const;

  // Places a neighbour's values (its first row, then the values) when they are the ones we use
  // from it now. They are new input when InputMoved.
  bool Place(uint32_t from, std::string_view bytes);
  // Whether the values used from input k moved, since the last block solve used them, by more
  // than the local test looks for in x_l (tolerance x its max norm then). A smaller change
  // waits for the next solve, as a small coarse correction does: the change it would make to
  // x_l is no larger for a diagonally dominant M-matrix (A_ll^-1 A_lm has an infinity norm of at
  // most 1 there), and the spawner's residual check tightens the test where that was not
  // enough. So a converged task falls quiet, and answers a confirmation round or a snapshot at
  // once, instead of solving again for changes in the last bits of its neighbours' values (on a
  // 1000 x 1000 grid on 5 tasks, the end of a run spent 1.2 s there).
  bool InputMoved(size_t k) const;

  void IndexInputs();

  Status MakeSolvers();

  // Rows [lo, hi) of a matrix from a file: those of the block, and the others from `incoming`
  // (rows moved here, or a checkpoint's); an error naming the rows when some are in neither.
  Result<HeldRows> RowsFor(int lo, int hi, std::vector<HeldRows> incoming) const;

  // The task owns rows [lo, hi) now: its block (their slab), solvers and send lists are built
  // for them (a file's rows from the block and `incoming`, RowsFor). The iterate and the inputs
  // keep every value known, from `known` (moved rows and their neighbours' values) first, else
  // from the block before; nothing changes if it fails.
  Status Rebuild(int lo, int hi, const std::map<int, double>& known,
                 std::vector<HeldRows> incoming = {});

  // A file's rows the task's first block (the slab of slice_lo..slice_hi) did not have, below and
  // above it, encoded for its checkpoints: a replacement, made with that block again, gets them
  // from there (RestoreState). Kept from one move to the next, since every checkpoint carries
  // them.
  void KeepRowsBeyondSlice();

  Block b_;
  CgParams p_;
  std::optional<MovableRows> movable_;  // set when rows can move (row_moves.h)
  double tolerance_, inner_tolerance_;  // p_'s, tightened by Tighten()
  std::unique_ptr<BlockCg> solver_;
  std::unique_ptr<BlockDirect> direct_;   // the block's factor; null: solver_ iterates
  std::unique_ptr<CoarseRounds> coarse_;  // set in a two-level job
  Eigen::VectorXd x_, rhs_;
  std::vector<Eigen::VectorXd> xin_;
  std::vector<Eigen::VectorXd> xin_solved_;  // xin_ as the last block solve used it
  double solved_scale_ = 0;                  // x_l's max norm after that solve
  std::map<uint32_t, size_t> index_;
  std::map<uint32_t, std::string> pending_;  // per sender, its newest values that did not fit
  bool fresh_ = true;
  // Since when an iteration waits for the coarse round (WaitsForCoarseRound), and how long the
  // last block solve took.
  std::optional<std::chrono::steady_clock::time_point> waiting_since_;
  std::chrono::duration<double> last_solve_time_{0};
  bool sent_sections_ = false;  // this incarnation sent its coarse sections (TakeOutgoing)
  uint64_t iterations_ = 0;
  int stable_ = 0;
  double change_ = 0;
  double work_done_ = 0;
  int last_solve_cost_ = 1;        // SolveBlock's, in CostPerIteration's unit
  bool unfinished_ = false;        // SolveBlock's residual was above the local test
  double inner_reduction_ = 0;     // p_.inner_reduction, "auto" resolved (MakeSolvers)
  std::string why_iterated_;       // why inner = "auto" did not factor the block (direct_ is null)
  std::deque<int> solve_costs_;    // the last kHistory of them
  std::deque<double> history_;     // the last kHistory changes
  double fall_ = 0;                // the last Fall() there was (< 0), else 0
  std::string rows_beyond_slice_;  // KeepRowsBeyondSlice
  // WorkPerRow() as RemainingWork() reported it the last times, newest first (0: not yet):
  // ExportItems turns work into rows with the largest.
  mutable std::array<double, 4> reported_per_row_{};
};

// One task, for the app and for tests (solve a whole system in-process). Fails when
// params.inner is "direct" and the block cannot be factored. `movable`: the block is rows
// [lo, hi) that may move (row_moves.h).
// `coarse`: the task is one of a two-level job (its rows do not move then).
Result<std::unique_ptr<app::Task>> NewCgTask(Block block, const CgParams& params,
                                             std::optional<MovableRows> movable = std::nullopt,
                                             std::optional<CoarseSetup> coarse = std::nullopt);

}  // namespace aiac::cg
