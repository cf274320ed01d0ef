#include "apps/cg/cg_task.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "apps/cg/byte_codec.h"
#include "apps/cg/cg_messages.h"

namespace aiac::cg {
namespace {

std::string PackDoubles(const double* v, size_t n) {
  return std::string(reinterpret_cast<const char*>(v), n * sizeof(double));
}

}  // namespace

Result<std::unique_ptr<CgTask>> CgTask::Make(Block block, const CgParams& params,
                                             std::optional<MovableRows> movable,
                                             std::optional<CoarseSetup> coarse) {
  std::unique_ptr<CgTask> t(new CgTask(std::move(block), params, std::move(movable)));
  AIAC_RETURN_IF_ERROR(t->MakeSolvers());
  if (coarse && coarse->tasks > 1) {
    if (t->movable_) return InvalidArgument("cg: the rows of a two-level job cannot move");
    CgTask* task = t.get();
    AIAC_ASSIGN_OR_RETURN(auto basis,
                          HarmonicBasis(t->b_, coarse->pieces,
                                        [task](const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x) {
                                          return task->SolveBlocks(rhs, x);
                                        }));
    std::vector<int> own_rows, own_position(static_cast<size_t>(t->b_.size()), -1);
    for (size_t k = 0; k < t->b_.own.size(); ++k) {
      own_rows.push_back(t->b_.rows[static_cast<size_t>(t->b_.own[k])]);
      own_position[static_cast<size_t>(t->b_.own[k])] = static_cast<int>(k);
    }
    CoarseRounds::Sends sends;
    for (const Block::Send& s : t->b_.out) {
      std::vector<int> positions;
      for (int r : s.rows) positions.push_back(own_position[static_cast<size_t>(r)]);
      sends.emplace_back(s.task, std::move(positions));
    }
    t->coarse_ = std::make_unique<CoarseRounds>(coarse->task, coarse->tasks, std::move(basis),
                                                std::move(own_rows), std::move(sends));
    t->coarse_->set_optional(params.coarse == "auto");
  }
  return t;
}

CgTask::CgTask(Block block, const CgParams& params, std::optional<MovableRows> movable)
    : b_(std::move(block)),
      p_(params),
      movable_(std::move(movable)),
      tolerance_(params.tolerance),
      inner_tolerance_(params.inner_tolerance),
      x_(Eigen::VectorXd::Zero(b_.size())),
      rhs_(b_.size()) {
  IndexInputs();
  KeepRowsBeyondSlice();
}

std::vector<uint32_t> CgTask::Dependencies() const {
  std::vector<uint32_t> out;
  if (coarse_) {
    for (uint32_t m = 0; m < coarse_->tasks(); ++m) {
      if (m != coarse_->task()) out.push_back(m);
    }
    return out;
  }
  for (const auto& c : b_.in) out.push_back(c.task);
  return out;
}

Status CgTask::Absorb(uint32_t from, std::string_view bytes) {
  if (coarse_) {
    uint32_t length = 0;
    if (bytes.size() < sizeof length) return Corruption("cg: a message without its coarse section");
    std::memcpy(&length, bytes.data(), sizeof length);
    bytes.remove_prefix(sizeof length);
    if (length > bytes.size()) return Corruption("cg: a message shorter than its coarse section");
    AIAC_RETURN_IF_ERROR(coarse_->Absorb(from, bytes.substr(0, length)));
    bytes.remove_prefix(length);
    if (bytes.empty()) return Status::Ok();  // a task whose values we do not use
  }
  // Values that do not fit the rows we use from their sender (it or we moved rows since, or
  // we do not depend on it) are not placed; after a move they may fit, so the newest is kept.
  if (Place(from, bytes)) {
    pending_.erase(from);
  } else if (movable_) {
    pending_[from] = std::string(bytes);
  }
  return Status::Ok();
}

Status CgTask::Breakdown(const std::string& breakdown) const {
  if (breakdown.empty()) return Status::Ok();
  return InvalidArgument("inner solver breakdown in the block of " + b_.Describe() + ": " +
                         breakdown);
}

Status CgTask::SolveBlock(const Eigen::VectorXd& rhs, Eigen::VectorXd& x) {
  std::string breakdown;
  if (direct_) {
    breakdown = direct_->Solve(rhs, x, false).breakdown;
    last_solve_cost_ = 1;
    unfinished_ = false;
  } else {
    auto outcome =
        solver_->Solve(rhs, x, inner_tolerance_, InnerIterationLimit(), inner_reduction_);
    breakdown = std::move(outcome.breakdown);
    last_solve_cost_ = outcome.iterations + kSolveOverhead;
    unfinished_ = outcome.relative_residual > tolerance_;
  }
  return Breakdown(breakdown);
}

Status CgTask::SolveBlocks(const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x) {
  if (direct_) return Breakdown(direct_->SolveMany(rhs, x).breakdown);
  x.setZero(rhs.rows(), rhs.cols());
  Eigen::VectorXd column;
  const double tolerance = std::max(
      inner_tolerance_, solver_->algebraic_multigrid() ? kAmgBasisTolerance : kBasisTolerance);
  for (Eigen::Index j = 0; j < rhs.cols(); ++j) {
    column.setZero(rhs.rows());
    auto outcome = solver_->Solve(rhs.col(j), column, tolerance, InnerIterationLimit());
    AIAC_RETURN_IF_ERROR(Breakdown(outcome.breakdown));
    x.col(j) = column;
  }
  return Status::Ok();
}

Result<bool> CgTask::Iterate() {
  if (coarse_) {
    // A completed round whose correction the local test would see is new input: it must reach
    // the neighbours, and the next round needs this task's contribution. So is the coarse
    // problem's setup going on (the others wait for what it sends). A smaller correction waits
    // for the next input, so that converged tasks fall quiet instead of trading rounds. A peer
    // that lacks what this task sends for the setup (a replacement) must get it even then.
    // (Iterate is polled while the task waits: the O(rows) measures run only after progress.)
    AIAC_ASSIGN_OR_RETURN(const bool progressed, coarse_->Advance());
    if (!fresh_ && progressed && !coarse_->gave_up()) {
      const double scale = b_.size() > 0 ? x_.cwiseAbs().maxCoeff() : 0.0;
      fresh_ = !coarse_->ready() || coarse_->corrections() <= 1 ||
               coarse_->DueChange() > tolerance_ * scale;
    }
    if (!fresh_ && coarse_->PeerNeedsSetup()) fresh_ = true;
    // A task that solved since it applied the last round and solves again before that round
    // completes does so without the round's correction: with more tasks than cores, half of the
    // solves of a 2-D Poisson run were such, and asynchronous runs took 1.4-1.6x the synchronous
    // ones (docs/results.md). The same while the coarse problem is set up: one-level solves that
    // each send sections of A Z. So it leaves its core to the tasks whose part is missing, for
    // a while: their part arrives as a value, which has the runtime call Iterate again at once.
    if (WaitsForCoarseRound(fresh_ && !progressed)) return false;
  }
  if (!fresh_ && iterations_ > 0) {
    // No new input: x_l already solves the block for these inputs, so the iteration would
    // change nothing. Count it as such (change 0) until stable_iterations is reached, then
    // wait for new values. Waiting at once would stall a block whose own change did not
    // reach the rows its neighbours use: nothing new would ever come back (the runtime does
    // not hand over a neighbour's values again unchanged, runtime::Mailbox), and it would
    // never count the iterations that make it converged.
    if (stable_ >= p_.stable_iterations) return false;
    ++stable_;
    change_ = 0;
    // The round begun since the last solve gets this task's contribution all the same (x_l is
    // what a solve would have left): the others may be waiting for it (WaitsForCoarseRound).
    if (coarse_ && !coarse_->contributed()) coarse_->Contribute(x_, b_.own);
    ++iterations_;
    return true;
  }
  fresh_ = false;
  if (coarse_) {
    std::vector<uint32_t> from;
    for (const auto& c : b_.in) from.push_back(c.task);
    coarse_->CorrectInputs(xin_, from);
  }
  xin_solved_ = xin_;
  // Multisplitting step: A_ll x_l = b_l - sum_{m != l} A_lm x_m.
  rhs_ = b_.b;
  for (size_t k = 0; k < b_.in.size(); ++k) rhs_.noalias() -= b_.in[k].a * xin_[k];
  Eigen::VectorXd old = x_;
  const auto solve_start = std::chrono::steady_clock::now();
  Status solved = SolveBlock(rhs_, x_);
  last_solve_time_ = std::chrono::steady_clock::now() - solve_start;
  if (!solved.ok()) {
    x_ = old;  // keep the last good iterate: it is what a checkpoint or a snapshot should hold
    return solved;
  }
  if (coarse_) coarse_->Contribute(x_, b_.own);
  // An inexact solve (inner_reduction) that left more residual than the local test looks for:
  // solving again improves x_l even without new input.
  if (unfinished_) fresh_ = true;
  const double moved = b_.size() > 0 ? (x_ - old).cwiseAbs().maxCoeff() : 0.0;
  ++iterations_;
  work_done_ += static_cast<double>(b_.own.size()) * last_solve_cost_;
  solve_costs_.push_back(last_solve_cost_);
  if (solve_costs_.size() > kHistory) solve_costs_.pop_front();
  if (!std::isfinite(moved) || moved > 1e100) {
    return Diverged("diverged: block of " + b_.Describe() + " grew without bound");
  }
  // The local test is relative to the block's own scale, so a system whose solution is tiny
  // (or huge) is judged like any other.
  const double scale = b_.size() > 0 ? x_.cwiseAbs().maxCoeff() : 0.0;
  solved_scale_ = scale;
  change_ = scale > 0 ? moved / scale : moved;
  history_.push_back(change_);
  if (history_.size() > kHistory) history_.pop_front();
  if (const auto fall = Fall()) fall_ = *fall;
  // A block that depends on no other is solved exactly by its first iteration.
  stable_ = (change_ < tolerance_ || b_.in.empty()) ? stable_ + 1 : 0;
  if (b_.in.empty()) stable_ = std::max(stable_, p_.stable_iterations);
  return true;
}

bool CgTask::WaitsForCoarseRound(bool due) {
  // A locally converged task does not wait: it answers convergence rounds, and its answer must
  // follow its input. Nor for a round whose contributions may not come soon
  // (CoarseRounds::AwaitsWorkingPeers): a converged peer's, or a lost one's after coarse_wait.
  // (Iterate is polled at every value that comes: the peers are looked at only when it is due.)
  if (!due || p_.coarse_wait <= 0 || LocallyConverged() ||
      !(coarse_->AwaitsWorkingPeers() || (sent_sections_ && coarse_->AwaitsSetup()))) {
    waiting_since_.reset();
    return false;
  }
  const auto now = std::chrono::steady_clock::now();
  if (!waiting_since_) waiting_since_ = now;
  if (now - *waiting_since_ < p_.coarse_wait * last_solve_time_) return true;
  waiting_since_.reset();
  return false;
}

std::vector<app::Outgoing> CgTask::TakeOutgoing() {
  std::vector<app::Outgoing> out;
  std::vector<double> values;
  for (const auto& s : b_.out) {
    values.resize(s.rows.size());
    for (size_t k = 0; k < s.rows.size(); ++k) values[k] = x_[s.rows[k]];
    const auto first = static_cast<int32_t>(s.rows.empty() ? -1 : b_.rows[s.rows.front()]);
    std::string bytes(reinterpret_cast<const char*>(&first), sizeof first);
    bytes += PackDoubles(values.data(), values.size());
    out.push_back({s.task, std::move(bytes)});
  }
  if (!coarse_) return out;
  // Every task gets the coarse section, before the values of those that use ours.
  sent_sections_ = true;
  std::vector<app::Outgoing> all;
  for (uint32_t m = 0; m < coarse_->tasks(); ++m) {
    if (m == coarse_->task()) continue;
    const std::string section = coarse_->SectionFor(m, LocallyConverged());
    const auto length = static_cast<uint32_t>(section.size());
    std::string bytes(reinterpret_cast<const char*>(&length), sizeof length);
    bytes += section;
    auto values_for =
        std::find_if(out.begin(), out.end(), [m](const auto& o) { return o.to == m; });
    if (values_for != out.end()) bytes += values_for->bytes;
    all.push_back({m, std::move(bytes)});
  }
  return all;
}

Status CgTask::Tighten(double factor) {
  if (!(factor > 1) || !std::isfinite(factor))
    return InvalidArgument("cg: a tightening factor must be above 1");
  if (tolerance_ <= kFinestTolerance) {
    return InvalidArgument("cg: the residual stagnates: the local test is at its finest already (" +
                           FormatDouble(kFinestTolerance) + " relative change)");
  }
  tolerance_ = std::max(kFinestTolerance, tolerance_ / factor);
  // The block solves must be at least as accurate as the change the test now looks for.
  inner_tolerance_ = std::max(kFinestTolerance, std::min(inner_tolerance_, tolerance_));
  stable_ = 0;
  // history_ stays: the changes so far still say how fast they fall (Horizon now counts to the
  // finer test), where "as many iterations again" made the expected end jump.
  fresh_ = true;  // solve again with the tighter inner tolerance, even without new input
  return Status::Ok();
}

std::string CgTask::SaveState() const {
  std::string s;
  auto put = [&](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
  const int32_t range[2] = {Lo(), Hi()};
  put(range, sizeof range);
  s += rows_beyond_slice_;  // (a file's movable task only: KeepRowsBeyondSlice)
  put(&iterations_, sizeof iterations_);
  put(&stable_, sizeof stable_);
  put(&work_done_, sizeof work_done_);
  put(x_.data(), x_.size() * sizeof(double));
  for (const auto& v : xin_) put(v.data(), v.size() * sizeof(double));
  return s;
}

Status CgTask::RestoreState(std::string_view state) {
  int32_t range[2];
  if (state.size() < sizeof range) return Corruption("cg: checkpoint too short for a block");
  std::memcpy(range, state.data(), sizeof range);
  state.remove_prefix(sizeof range);
  // A file's rows outside the task's first block, below and above it (SaveState).
  std::vector<HeldRows> extra(2);
  if (movable_ && !movable_->generated) {
    SliceReader r(state);
    if (!GetHeldRows(r, extra[0], movable_->n) || !GetHeldRows(r, extra[1], movable_->n)) {
      return Corruption("cg: checkpoint with damaged rows of the matrix");
    }
    state.remove_prefix(r.position());
  }
  if (range[0] != Lo() || range[1] != Hi()) {
    if (!movable_ || range[0] < 0 || range[0] >= range[1] || range[1] > movable_->n) {
      return Corruption("cg: checkpoint of " + RowsText(range[0], range[1]) +
                        ", not of this block's " + RowsText(Lo(), Hi()));
    }
    AIAC_RETURN_IF_ERROR(Rebuild(range[0], range[1], {}, std::move(extra)));
  }
  size_t need =
      sizeof iterations_ + sizeof stable_ + sizeof work_done_ + x_.size() * sizeof(double);
  for (const auto& v : xin_) need += v.size() * sizeof(double);
  if (state.size() != need) return Corruption("cg: checkpoint of the wrong size for this block");
  const char* p = state.data();
  auto get = [&](void* dst, size_t n) {
    std::memcpy(dst, p, n);
    p += n;
  };
  get(&iterations_, sizeof iterations_);
  get(&stable_, sizeof stable_);
  get(&work_done_, sizeof work_done_);
  get(x_.data(), x_.size() * sizeof(double));
  for (auto& v : xin_) get(v.data(), v.size() * sizeof(double));
  fresh_ = true;
  history_.clear();
  return Status::Ok();
}

std::string CgTask::ResultSlice() const {
  const int32_t head[2] = {static_cast<int32_t>(b_.own.size()), OwnRowsFrom()};
  std::string s(reinterpret_cast<const char*>(head), sizeof head);
  std::vector<double> values(b_.own.size());
  for (size_t k = 0; k < b_.own.size(); ++k) values[k] = x_[b_.own[k]];
  s += PackDoubles(values.data(), values.size());
  return s;
}

double CgTask::RemainingWork() const {
  if (!movable_) return -1;
  const double per_row = WorkPerRow();
  std::rotate(reported_per_row_.rbegin(), reported_per_row_.rbegin() + 1, reported_per_row_.rend());
  reported_per_row_[0] = per_row;
  return static_cast<double>(b_.own.size()) * per_row;
}

double CgTask::WorkPerRow() const { return Horizon() * CostPerIteration(); }

double CgTask::CostPerIteration() const {
  if (solve_costs_.empty()) return 1;
  const double mean = std::accumulate(solve_costs_.begin(), solve_costs_.end(), 0.0) /
                      static_cast<double>(solve_costs_.size());
  // The last solves' costs against the log of their changes (both deques end at the last solve;
  // a restored task's history_ starts again, its costs do not).
  const size_t n = std::min(history_.size(), solve_costs_.size());
  if (n < 4 || !(tolerance_ > 0)) return mean;
  double sx = 0, sy = 0, sxx = 0, sxy = 0, most = 0;
  size_t points = 0;
  for (size_t k = 0; k < n; ++k) {
    const double change = history_[history_.size() - n + k];
    const auto cost = static_cast<double>(solve_costs_[solve_costs_.size() - n + k]);
    most = std::max(most, cost);
    if (!(change > 0)) continue;
    const double x = std::log(change);
    sx += x;
    sy += cost;
    sxx += x * x;
    sxy += x * cost;
    ++points;
  }
  const auto m = static_cast<double>(points);
  const double spread = m * sxx - sx * sx;
  if (points < 4 || !(spread > 0)) return mean;
  const double slope = (m * sxy - sx * sy) / spread, at = (sy - slope * sx) / m;
  if (!std::isfinite(slope) || !std::isfinite(at)) return mean;
  // The change now: the least of the last four, as Horizon takes it.
  const double last = *std::min_element(history_.end() - 4, history_.end());
  if (!(last > 0)) return mean;
  const double least = std::min(most, direct_ ? 1.0 : static_cast<double>(kSolveOverhead + 1));
  const double now = std::clamp(at + slope * std::log(last), least, most);
  const double end = std::clamp(at + slope * std::log(std::min(last, tolerance_)), least, now);
  return (now + end) / 2;
}

Result<std::string> CgTask::ExportItems(double work, uint32_t to) {
  if (!movable_) return NotMovable();
  const uint32_t l = movable_->task;
  if (to >= movable_->tasks || !(to + 1 == l || to == l + 1)) {
    return InvalidArgument("cg: task " + std::to_string(l) +
                           " can give rows only to its neighbours, not to task " +
                           std::to_string(to));
  }
  const int lo = Lo(), hi = Hi(), bw = movable_->bandwidth, d = movable_->overlap;
  const double reported = *std::max_element(reported_per_row_.begin(), reported_per_row_.end());
  const double per_row = reported > 0 ? reported : WorkPerRow();
  const double wanted = work > 0 && std::isfinite(work) ? std::round(work / per_row) : 0;
  const int k = static_cast<int>(
      std::clamp(wanted, 0.0, static_cast<double>(std::max(0, hi - lo - MinBlockRows(bw, d)))));
  RowMove m;
  m.n = movable_->n;
  if (k == 0) {  // nothing worth `work` to give: a move of no row
    m.lo = m.hi = m.halo_lo = lo;
    return EncodeRowMove(m);
  }
  // Our rows next to them that the taker's block will hold (overlap) or use (bandwidth): all in
  // our block while we keep MinBlockRows, as are the rows whose entries it will need.
  int keep_lo = lo, keep_hi = hi, entries_lo = 0, entries_hi = 0;
  if (to == l + 1) {
    m.lo = hi - k, m.hi = hi, keep_hi = m.lo;
    m.halo_lo = std::max(0, m.lo - d - bw);
    entries_lo = std::max(0, m.lo - d), entries_hi = m.hi;
  } else {
    m.lo = lo, m.hi = lo + k, keep_lo = m.hi;
    m.halo_lo = m.hi;
    entries_lo = m.lo, entries_hi = std::min(m.n, m.hi + d);
  }
  const int halo_hi = to == l + 1 ? m.lo : std::min(m.n, m.hi + d + bw);
  const int first = BlockLo();
  for (int r = m.lo; r < m.hi; ++r) m.x.push_back(x_[r - first]);
  for (int r = m.halo_lo; r < halo_hi; ++r) m.halo.push_back(x_[r - first]);
  if (!movable_->generated) m.entries = HeldRowsOf(b_, entries_lo, entries_hi);
  AIAC_RETURN_IF_ERROR(Rebuild(keep_lo, keep_hi, {}));
  return EncodeRowMove(m);
}

Status CgTask::ImportItems(std::string_view bytes) {
  if (!movable_) return NotMovable();
  AIAC_ASSIGN_OR_RETURN(auto m, DecodeRowMove(bytes, movable_->n));
  if (m.lo == m.hi) return Status::Ok();
  if (!movable_->generated && m.entries.empty()) {
    return InvalidArgument("cg: " + RowsText(m.lo, m.hi) +
                           " of a matrix from a file came without their entries");
  }
  const int lo = Lo(), hi = Hi();
  if (m.lo < hi && lo < m.hi) {
    return InvalidArgument("cg: " + RowsText(m.lo, m.hi) + " are held here already (" +
                           RowsText(lo, hi) + ")");
  }
  const bool below = m.hi == lo && movable_->task > 0;
  const bool above = m.lo == hi && movable_->task + 1 < movable_->tasks;
  if (!below && !above) {
    return InvalidArgument("cg: " + RowsText(m.lo, m.hi) + " are not next to this block's " +
                           RowsText(lo, hi));
  }
  std::map<int, double> known;
  for (size_t k = 0; k < m.x.size(); ++k) known[m.lo + static_cast<int>(k)] = m.x[k];
  for (size_t k = 0; k < m.halo.size(); ++k) known[m.halo_lo + static_cast<int>(k)] = m.halo[k];
  std::vector<HeldRows> entries;
  if (!movable_->generated) entries.push_back(std::move(m.entries));
  return below ? Rebuild(m.lo, hi, known, std::move(entries))
               : Rebuild(lo, m.hi, known, std::move(entries));
}

Status CgTask::DropItems(std::string_view bytes) {
  if (!movable_) return NotMovable();
  AIAC_ASSIGN_OR_RETURN(auto m, DecodeRowMove(bytes, movable_->n));
  if (m.lo == m.hi) return Status::Ok();
  const int lo = Lo(), hi = Hi();
  if (m.lo == lo && m.hi < hi) return Rebuild(m.hi, hi, {});
  if (m.hi == hi && m.lo > lo) return Rebuild(lo, m.lo, {});
  return InvalidArgument("cg: " + RowsText(m.lo, m.hi) + " are not at an end of this block's " +
                         RowsText(lo, hi));
}

Status CgTask::NotMovable() {
  return InvalidArgument(
      "cg: only the rows of a system split in slices of consecutive rows, wider than its bandwidth "
      "and overlap, can "
      "move");
}

int32_t CgTask::OwnRowsFrom() const {
  if (b_.own.empty()) return -1;
  const int first = b_.rows[b_.own.front()], last = b_.rows[b_.own.back()];
  return last - first + 1 == static_cast<int>(b_.own.size()) ? first : -1;
}

std::optional<double> CgTask::Fall() const {
  const size_t n = history_.size();
  if (n < 4) return std::nullopt;
  const auto w = static_cast<std::ptrdiff_t>(std::min<size_t>(4, n / 2));
  const double first = *std::min_element(history_.begin(), history_.begin() + w);
  const double last = *std::min_element(history_.end() - w, history_.end());
  if (!(first > 0 && last > 0 && last < first)) return std::nullopt;
  return std::log(last / first) / static_cast<double>(n - static_cast<size_t>(w));
}

double CgTask::Horizon() const {
  const double least = p_.stable_iterations;
  if (LocallyConverged()) return least;
  const std::optional<double> now = Fall();
  const double per_iteration = now ? *now : fall_;
  if (per_iteration < 0 && !history_.empty()) {
    // The change now: the least of the last four (asynchronous inputs make it spiky).
    const double last = *std::min_element(
        history_.end() - static_cast<std::ptrdiff_t>(std::min<size_t>(4, history_.size())),
        history_.end());
    const double to_go =
        last > tolerance_ && last > 0 ? std::log(tolerance_ / last) / per_iteration : 0;
    return std::clamp(to_go + least, least, kMostIterations);
  }
  return std::clamp(static_cast<double>(iterations_) + least, least, kMostIterations);
}

bool CgTask::Place(uint32_t from, std::string_view bytes) {
  auto it = index_.find(from);
  int32_t first = 0;
  if (it == index_.end() || bytes.size() < sizeof first ||
      (bytes.size() - sizeof first) % sizeof(double) != 0) {
    return false;
  }
  const Block::Coupling& c = b_.in[it->second];
  std::memcpy(&first, bytes.data(), sizeof first);
  const size_t count = (bytes.size() - sizeof first) / sizeof(double);
  if (count != c.cols.size() || count == 0 || first != c.cols.front()) return false;
  std::memcpy(xin_[it->second].data(), bytes.data() + sizeof first, count * sizeof(double));
  if (!fresh_) fresh_ = InputMoved(it->second);
  return true;
}

bool CgTask::InputMoved(size_t k) const {
  if (k >= xin_solved_.size() || xin_solved_[k].size() != xin_[k].size()) return true;
  return (xin_[k] - xin_solved_[k]).cwiseAbs().maxCoeff() > tolerance_ * solved_scale_;
}

void CgTask::IndexInputs() {
  index_.clear();
  xin_.clear();
  xin_solved_.clear();
  for (size_t k = 0; k < b_.in.size(); ++k) {
    index_[b_.in[k].task] = k;
    xin_.push_back(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(b_.in[k].cols.size())));
  }
}

std::string CgTask::Notes() const {
  if (!solver_->symmetric()) {
    if (direct_ && direct_->method() == std::string_view("least-squares QR"))
      return "block of " + b_.Describe() + ": singular, solved in the least-squares sense (QR)";
    return "";
  }
  if (!why_iterated_.empty()) {
    const std::string method = solver_->method();
    return "block of " + b_.Describe() + ": " + why_iterated_ + "; solved by an inner " + method +
           (method != "CG" ? "" : solver_->preconditioner()) +
           (inner_reduction_ > 0 ? ", each solve cutting its residual by " +
                                       FormatDouble(inner_reduction_) + " at least (two-stage)"
                                 : "");
  }
  if (direct_) {
    const std::string_view method = direct_->method();
    if (method == "LU")
      return "block of " + b_.Describe() + ": not positive definite, factored by LU";
    if (method == "least-squares QR") {
      return "block of " + b_.Describe() + ": singular, solved in the least-squares sense (QR)";
    }
    return "";
  }
  if (std::string_view(solver_->method()) == "MINRES")
    return "block of " + b_.Describe() + ": not positive definite, solved by MINRES";
  return "";
}

Status CgTask::MakeSolvers() {
  solver_ = std::make_unique<BlockCg>(b_.local);
  direct_.reset();
  why_iterated_.clear();
  if (p_.inner != "cg") {
    // (BlockCg took a symmetric block with a diagonal entry that is not positive for MINRES's;
    // an unsymmetric one is factored by LU, which has no fill limit.)
    const double most_fill = p_.inner != "auto" ? 0
                             : std::string_view(solver_->method()) == "MINRES"
                                 ? kAutoMostFillNotDefinite
                                 : kAutoMostFill;
    auto direct = BlockDirect::Factor(b_.local, solver_->symmetric(), most_fill);
    if (direct.ok()) {
      direct_ = std::move(*direct);
    } else if (p_.inner == "direct") {
      return InvalidArgument(
          "cg: block of " + b_.Describe() +
          " cannot be factored (inner = \"direct\"): " + direct.status().message());
    } else {
      why_iterated_ = direct.status().message();
    }
  }
  if (!direct_ && (p_.inner_preconditioner == "amg" ||
                   (p_.inner_preconditioner == "auto" && p_.inner == "auto"))) {
    solver_->UseAlgebraicMultigrid();
  } else if (!direct_ && p_.inner_preconditioner == "ic") {
    solver_->UseIncompleteCholesky();
  }
  inner_reduction_ = p_.inner_reduction >= 0       ? p_.inner_reduction
                     : direct_ || p_.inner == "cg" ? 0
                                                   : kAutoInnerReduction;
  return Status::Ok();
}

Result<HeldRows> CgTask::RowsFor(int lo, int hi, std::vector<HeldRows> incoming) const {
  std::vector<HeldRows> parts;
  if (const int from = std::max(lo, BlockLo()), to = std::min(hi, BlockHi()); from < to) {
    parts.push_back(HeldRowsOf(b_, from, to));
  }
  for (HeldRows& rows : incoming) {
    if (HeldRows part = rows.Part(lo, hi); !part.empty()) parts.push_back(std::move(part));
  }
  std::sort(parts.begin(), parts.end(),
            [](const HeldRows& x, const HeldRows& y) { return x.lo < y.lo; });
  HeldRows all;
  all.lo = lo;
  for (HeldRows& part : parts) {
    // Parts may share rows (with overlap, moved rows come with some the block holds already):
    // the same matrix rows, taken once.
    if (part.hi() <= all.hi()) continue;
    if (part.lo < all.hi()) part = part.Part(all.hi(), part.hi());
    auto joined = JoinRows(std::move(all), std::move(part));
    if (!joined.ok())
      return InvalidArgument("cg: " + RowsText(lo, hi) +
                             " are not all held here: " + joined.status().message());
    all = std::move(*joined);
  }
  if (all.lo != lo || all.hi() != hi) {
    return InvalidArgument("cg: " + RowsText(lo, hi) + " are not all held here (" +
                           RowsText(all.lo, all.hi()) + " are)");
  }
  return all;
}

Status CgTask::Rebuild(int lo, int hi, const std::map<int, double>& known,
                       std::vector<HeldRows> incoming) {
  const MovableRows& m = *movable_;
  std::optional<HeldRows> rows;
  if (!m.generated) {
    const auto [first, last] = SlabRows(m.n, lo, hi, m.overlap);
    AIAC_ASSIGN_OR_RETURN(auto held, RowsFor(first, last, std::move(incoming)));
    rows = std::move(held);
  }
  Block old = std::move(b_);
  Eigen::VectorXd old_x = std::move(x_);
  std::vector<Eigen::VectorXd> old_xin = std::move(xin_);
  const RowIndex old_rows(old.rows);
  auto value = [&](int r) {
    if (auto it = known.find(r); it != known.end()) return it->second;
    if (int k = old_rows(r); k >= 0) return old_x[k];
    for (size_t c = 0; c < old.in.size(); ++c) {
      const auto& cols = old.in[c].cols;
      auto it = std::lower_bound(cols.begin(), cols.end(), r);
      if (it != cols.end() && *it == r) return old_xin[c][it - cols.begin()];
    }
    return 0.0;  // not known here: the next values from its owner bring it
  };
  const std::vector<int> starts = LocalStarts(m.n, m.tasks, m.task, lo, hi);
  b_ = m.generated ? GeneratedBlock(*m.generated, starts, m.task, m.overlap)
                   : HeldBlock(*rows, m.n, starts, m.task, m.overlap);
  x_.resize(b_.size());
  for (int k = 0; k < b_.size(); ++k) x_[k] = value(b_.rows[k]);
  IndexInputs();
  for (size_t c = 0; c < b_.in.size(); ++c) {
    for (size_t k = 0; k < b_.in[c].cols.size(); ++k)
      xin_[c][static_cast<Eigen::Index>(k)] = value(b_.in[c].cols[k]);
  }
  if (Status made = MakeSolvers(); !made.ok()) {
    b_ = std::move(old);
    x_ = std::move(old_x);
    IndexInputs();
    xin_ = std::move(old_xin);
    if (Status again = MakeSolvers(); !again.ok()) return again;
    return made;
  }
  rhs_.resize(b_.size());
  fresh_ = true;
  stable_ = 0;  // other rows: its convergence starts again
  // history_ stays: the iterate goes on from where it was, and its changes fall as they did;
  // cleared, Horizon said "as many iterations again" after every move (a task at iteration 60
  // expected 60 more), and the balancer saw the run's expected end jump tenfold.
  for (auto it = pending_.begin(); it != pending_.end();)
    it = Place(it->first, it->second) ? pending_.erase(it) : std::next(it);
  KeepRowsBeyondSlice();
  return Status::Ok();
}

void CgTask::KeepRowsBeyondSlice() {
  if (!movable_ || movable_->generated) return;
  const MovableRows& m = *movable_;
  const auto [first_lo, first_hi] = SlabRows(m.n, m.slice_lo, m.slice_hi, m.overlap);
  const int lo = BlockLo(), hi = BlockHi();
  SliceWriter w;
  PutHeldRows(w, lo < first_lo ? HeldRowsOf(b_, lo, std::min(hi, first_lo)) : HeldRows{});
  PutHeldRows(w, hi > first_hi ? HeldRowsOf(b_, std::max(lo, first_hi), hi) : HeldRows{});
  rows_beyond_slice_ = w.Take();
}

Result<std::unique_ptr<app::Task>> NewCgTask(Block block, const CgParams& params,
                                             std::optional<MovableRows> movable,
                                             std::optional<CoarseSetup> coarse) {
  AIAC_ASSIGN_OR_RETURN(
      auto t, CgTask::Make(std::move(block), params, std::move(movable), std::move(coarse)));
  return std::unique_ptr<app::Task>(std::move(t));
}

}  // namespace aiac::cg
