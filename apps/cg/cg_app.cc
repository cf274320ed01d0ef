#include "apps/cg/cg_app.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include "apps/cg/block_cg.h"
#include "apps/cg/block_outline.h"
#include "apps/cg/block_direct.h"
#include "apps/cg/byte_codec.h"
#include "apps/cg/held_rows.h"
#include "apps/cg/matrix_cache.h"
#include "apps/cg/matrix_market.h"
#include "apps/cg/partition.h"
#include "apps/cg/renumber.h"
#include "apps/cg/row_moves.h"
#include "core/memory_budget.h"

namespace aiac::cg {
namespace {

std::string Resolve(const std::string& base, const std::string& path) {
  if (path.empty() || path[0] == '/' || base.empty()) return path;
  return base + "/" + path;
}

Result<double> ParseDouble(const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return InvalidArgument("cg: params." + key + " must be a number, not '" + text + "'");
  }
  return v;
}

Result<int64_t> ParseInt(const std::string& key, const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument("cg: params." + key + " must be an integer, not '" + text + "'");
  }
  return v;
}

// "1.2e-05": short enough for one-line messages.
std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string PackDoubles(const double* v, size_t n) { return std::string(reinterpret_cast<const char*>(v), n * sizeof(double)); }

// TIG of the plan: e_l = nonzeros of block l; neighbours = blocks it uses or that use it;
// c_lm = entries exchanged both ways. `in`: a Block's couplings or an outline's inputs.
template <typename Inputs>
app::TaskNode NodeOf(int64_t nonzeros, const Inputs& in, const std::vector<Block::Send>& out) {
  std::map<uint32_t, double> volume;
  for (const auto& c : in) volume[c.task] += static_cast<double>(c.cols.size());
  for (const auto& s : out) volume[s.task] += static_cast<double>(s.rows.size());
  app::TaskNode node;
  node.cost = static_cast<double>(std::max<int64_t>(1, nonzeros));
  for (const auto& [m, v] : volume) node.edges.push_back({m, v});
  return node;
}

// "rows 3..7" (1-based), for messages.
std::string RowsText(int lo, int hi) { return "rows " + std::to_string(lo + 1) + ".." + std::to_string(hi); }

class CgTask final : public app::Task {
 public:
  // Builds the block's solver; the factor, when there is one, is computed here, once (and again
  // after rows move).
  static Result<std::unique_ptr<CgTask>> Make(Block block, const CgParams& params, std::optional<MovableRows> movable) {
    std::unique_ptr<CgTask> t(new CgTask(std::move(block), params, std::move(movable)));
    AIAC_RETURN_IF_ERROR(t->MakeSolvers());
    return t;
  }

  CgTask(Block block, const CgParams& params, std::optional<MovableRows> movable)
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

  std::vector<uint32_t> Dependencies() const override {
    std::vector<uint32_t> out;
    for (const auto& c : b_.in) out.push_back(c.task);
    return out;
  }

  Status Absorb(uint32_t from, std::string_view bytes) override {
    // Values that do not fit the rows we use from their sender (it or we moved rows since, or
    // we do not depend on it) are not placed; after a move they may fit, so the newest is kept.
    if (Place(from, bytes)) {
      pending_.erase(from);
    } else if (movable_) {
      pending_[from] = std::string(bytes);
    }
    return Status::Ok();
  }

  Result<bool> Iterate() override {
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
      ++iterations_;
      return true;
    }
    fresh_ = false;
    // Multisplitting step: A_ll x_l = b_l - sum_{m != l} A_lm x_m.
    rhs_ = b_.b;
    for (size_t k = 0; k < b_.in.size(); ++k) rhs_.noalias() -= b_.in[k].a * xin_[k];
    Eigen::VectorXd old = x_;
    const std::string breakdown = direct_ ? direct_->Solve(rhs_, x_, false).breakdown
                                          : solver_->Solve(rhs_, x_, inner_tolerance_, std::max(100, 10 * b_.size())).breakdown;
    if (!breakdown.empty()) {
      x_ = old;  // keep the last good iterate: it is what a checkpoint or a snapshot should hold
      return InvalidArgument("inner solver breakdown in the block of " + b_.Describe() + ": " + breakdown);
    }
    const double moved = b_.size() > 0 ? (x_ - old).cwiseAbs().maxCoeff() : 0.0;
    ++iterations_;
    work_done_ += static_cast<double>(b_.own.size());
    if (!std::isfinite(moved) || moved > 1e100) {
      return InvalidArgument("diverged: block of " + b_.Describe() + " grew without bound");
    }
    // The local test is relative to the block's own scale, so a system whose solution is tiny
    // (or huge) is judged like any other.
    const double scale = b_.size() > 0 ? x_.cwiseAbs().maxCoeff() : 0.0;
    change_ = scale > 0 ? moved / scale : moved;
    history_.push_back(change_);
    if (history_.size() > kHistory) history_.pop_front();
    // A block that depends on no other is solved exactly by its first iteration.
    stable_ = (change_ < tolerance_ || b_.in.empty()) ? stable_ + 1 : 0;
    if (b_.in.empty()) stable_ = std::max(stable_, p_.stable_iterations);
    return true;
  }

  // Each neighbour's values after the global row of the first of them, so that a receiver whose
  // rows moved since tells them from the values it now needs.
  std::vector<app::Outgoing> TakeOutgoing() override {
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
    return out;
  }

  double LocalChange() const override { return change_; }

  Status Tighten(double factor) override {
    if (!(factor > 1) || !std::isfinite(factor)) return InvalidArgument("cg: a tightening factor must be above 1");
    if (tolerance_ <= kFinestTolerance) {
      return InvalidArgument("cg: the residual stagnates: the local test is at its finest already (" +
                             FormatDouble(kFinestTolerance) + " relative change)");
    }
    tolerance_ = std::max(kFinestTolerance, tolerance_ / factor);
    // The block solves must be at least as accurate as the change the test now looks for.
    inner_tolerance_ = std::max(kFinestTolerance, std::min(inner_tolerance_, tolerance_));
    stable_ = 0;
    history_.clear();
    fresh_ = true;  // solve again with the tighter inner tolerance, even without new input
    return Status::Ok();
  }
  bool LocallyConverged() const override { return stable_ >= p_.stable_iterations; }

  // The rows the task owns first ([-1, -1) when they are not consecutive), so that a task
  // restored after its rows moved rebuilds the block the state belongs to.
  std::string SaveState() const override {
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

  Status RestoreState(std::string_view state) override {
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
        return Corruption("cg: checkpoint of " + RowsText(range[0], range[1]) + ", not of this block's " +
                          RowsText(Lo(), Hi()));
      }
      AIAC_RETURN_IF_ERROR(Rebuild(range[0], range[1], {}, std::move(extra)));
    }
    size_t need = sizeof iterations_ + sizeof stable_ + sizeof work_done_ + x_.size() * sizeof(double);
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

  // The values of the rows this task owns (overlap rows are their owners' to give), after
  // their count and the global row of the first (-1 when they are not consecutive).
  std::string ResultSlice() const override {
    const int32_t head[2] = {static_cast<int32_t>(b_.own.size()), OwnRowsFrom()};
    std::string s(reinterpret_cast<const char*>(head), sizeof head);
    std::vector<double> values(b_.own.size());
    for (size_t k = 0; k < b_.own.size(); ++k) values[k] = x_[b_.own[k]];
    s += PackDoubles(values.data(), values.size());
    return s;
  }

  // ---- Moving rows (row_moves.h). The work unit is an owned row solved once: an iteration of a
  // block owning r rows does r units (with overlap it solves more, the same number more for
  // every block whatever its slice: a move changes the owned rows).
  double WorkDone() const override { return work_done_; }
  double RemainingWork() const override {
    if (!movable_) return -1;
    const double horizon = Horizon();
    std::rotate(reported_horizons_.rbegin(), reported_horizons_.rbegin() + 1, reported_horizons_.rend());
    reported_horizons_[0] = horizon;
    return static_cast<double>(b_.own.size()) * horizon;
  }
  int64_t ItemCount() const override { return movable_ ? static_cast<int64_t>(b_.own.size()) : -1; }

  // The rows at the end of the block next to `to`, about `work` / (a horizon recently reported)
  // of them, keeping MinBlockRows. The spawner turned rows into work with the horizon of one of
  // the last reports it had (a later one may be on its way): the horizon now may differ by
  // orders of magnitude (a block that has just converged expects 3 iterations, not thousands),
  // which made a move of 800 rows one of the whole block. The largest of the last reported
  // horizons errs on the side of giving fewer rows, which the next checking point can add to.
  Result<std::string> ExportItems(double work, uint32_t to) override {
    if (!movable_) return NotMovable();
    const uint32_t l = movable_->task;
    if (to >= movable_->tasks || !(to + 1 == l || to == l + 1)) {
      return InvalidArgument("cg: task " + std::to_string(l) + " can give rows only to its neighbours, not to task " +
                             std::to_string(to));
    }
    const int lo = Lo(), hi = Hi(), bw = movable_->bandwidth, d = movable_->overlap;
    const double reported = *std::max_element(reported_horizons_.begin(), reported_horizons_.end());
    const double per_row = reported > 0 ? reported : Horizon();
    const double wanted = work > 0 && std::isfinite(work) ? std::round(work / per_row) : 0;
    const int k =
        static_cast<int>(std::clamp(wanted, 0.0, static_cast<double>(std::max(0, hi - lo - MinBlockRows(bw, d)))));
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

  // Rows next to the block (from a neighbour), with their values.
  Status ImportItems(std::string_view bytes) override {
    if (!movable_) return NotMovable();
    auto m = DecodeRowMove(bytes, movable_->n);
    if (!m.ok()) return m.status();
    if (m->lo == m->hi) return Status::Ok();
    if (!movable_->generated && m->entries.empty()) {
      return InvalidArgument("cg: " + RowsText(m->lo, m->hi) + " of a matrix from a file came without their entries");
    }
    const int lo = Lo(), hi = Hi();
    if (m->lo < hi && lo < m->hi) {
      return InvalidArgument("cg: " + RowsText(m->lo, m->hi) + " are held here already (" + RowsText(lo, hi) + ")");
    }
    const bool below = m->hi == lo && movable_->task > 0;
    const bool above = m->lo == hi && movable_->task + 1 < movable_->tasks;
    if (!below && !above) {
      return InvalidArgument("cg: " + RowsText(m->lo, m->hi) + " are not next to this block's " + RowsText(lo, hi));
    }
    std::map<int, double> known;
    for (size_t k = 0; k < m->x.size(); ++k) known[m->lo + static_cast<int>(k)] = m->x[k];
    for (size_t k = 0; k < m->halo.size(); ++k) known[m->halo_lo + static_cast<int>(k)] = m->halo[k];
    std::vector<HeldRows> entries;
    if (!movable_->generated) entries.push_back(std::move(m->entries));
    return below ? Rebuild(m->lo, hi, known, std::move(entries)) : Rebuild(lo, m->hi, known, std::move(entries));
  }

  // Rows this task gave away before (at one end of its block).
  Status DropItems(std::string_view bytes) override {
    if (!movable_) return NotMovable();
    auto m = DecodeRowMove(bytes, movable_->n);
    if (!m.ok()) return m.status();
    if (m->lo == m->hi) return Status::Ok();
    const int lo = Lo(), hi = Hi();
    if (m->lo == lo && m->hi < hi) return Rebuild(m->hi, hi, {});
    if (m->hi == hi && m->lo > lo) return Rebuild(lo, m->lo, {});
    return InvalidArgument("cg: " + RowsText(m->lo, m->hi) + " are not at an end of this block's " + RowsText(lo, hi));
  }

 private:
  // The finest local test: a few units in the last place of a double, where block solves
  // stop telling one iterate from the next.
  static constexpr double kFinestTolerance = 1e-14;
  static constexpr size_t kHistory = 16;  // changes kept for Horizon()

  static Status NotMovable() {
    return InvalidArgument(
        "cg: only the rows of a system split in slices of consecutive rows, wider than its bandwidth and overlap, can "
        "move");
  }

  // The rows the task owns, [Lo(), Hi()), when they are consecutive, else -1, -1.
  int Lo() const { return OwnRowsFrom(); }
  int Hi() const { return Lo() < 0 ? -1 : b_.rows[b_.own.back()] + 1; }
  int32_t OwnRowsFrom() const {
    if (b_.own.empty()) return -1;
    const int first = b_.rows[b_.own.front()], last = b_.rows[b_.own.back()];
    return last - first + 1 == static_cast<int>(b_.own.size()) ? first : -1;
  }
  // The block's rows, [BlockLo(), BlockHi()): a movable task's are consecutive (its slab).
  int BlockLo() const { return b_.rows.front(); }
  int BlockHi() const { return b_.rows.back() + 1; }

  // Outer iterations this task expects to need still, from how fast its change fell over the
  // last ones (the lowest of the first and of the last four, as asynchronous inputs make it
  // spiky): log(tolerance / change) / log(rate per iteration), plus the stable iterations. A
  // change that does not fall yet: as many again as so far.
  double Horizon() const {
    const double least = p_.stable_iterations;
    if (LocallyConverged()) return least;
    const size_t n = history_.size();
    if (n >= 8) {
      const double first = *std::min_element(history_.begin(), history_.begin() + 4);
      const double last = *std::min_element(history_.end() - 4, history_.end());
      if (first > 0 && last > 0 && last < first) {
        const double per_iteration = std::log(last / first) / static_cast<double>(n - 4);
        const double to_go = last > tolerance_ ? std::log(tolerance_ / last) / per_iteration : 0;
        return std::clamp(to_go + least, least, kMostIterations);
      }
    }
    return std::clamp(static_cast<double>(iterations_) + least, least, kMostIterations);
  }
  static constexpr double kMostIterations = 1e6;

  // Places a neighbour's values (its first row, then the values) when they are the ones we use
  // from it now.
  bool Place(uint32_t from, std::string_view bytes) {
    auto it = index_.find(from);
    int32_t first = 0;
    if (it == index_.end() || bytes.size() < sizeof first || (bytes.size() - sizeof first) % sizeof(double) != 0) {
      return false;
    }
    const Block::Coupling& c = b_.in[it->second];
    std::memcpy(&first, bytes.data(), sizeof first);
    const size_t count = (bytes.size() - sizeof first) / sizeof(double);
    if (count != c.cols.size() || count == 0 || first != c.cols.front()) return false;
    std::memcpy(xin_[it->second].data(), bytes.data() + sizeof first, count * sizeof(double));
    fresh_ = true;
    return true;
  }

  void IndexInputs() {
    index_.clear();
    xin_.clear();
    for (size_t k = 0; k < b_.in.size(); ++k) {
      index_[b_.in[k].task] = k;
      xin_.push_back(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(b_.in[k].cols.size())));
    }
  }

  Status MakeSolvers() {
    solver_ = std::make_unique<BlockCg>(b_.local);
    direct_.reset();
    if (p_.inner != "cg") {
      auto direct = BlockDirect::Factor(b_.local, solver_->symmetric());
      if (direct.ok()) {
        direct_ = std::move(*direct);
      } else if (p_.inner == "direct") {
        return InvalidArgument("cg: block of " + b_.Describe() + " cannot be factored (inner = \"direct\"): " +
                               direct.status().message());
      }
    }
    return Status::Ok();
  }

  // Rows [lo, hi) of a matrix from a file: those of the block, and the others from `incoming`
  // (rows moved here, or a checkpoint's); an error naming the rows when some are in neither.
  Result<HeldRows> RowsFor(int lo, int hi, std::vector<HeldRows> incoming) const {
    std::vector<HeldRows> parts;
    if (const int from = std::max(lo, BlockLo()), to = std::min(hi, BlockHi()); from < to) {
      parts.push_back(HeldRowsOf(b_, from, to));
    }
    for (HeldRows& rows : incoming) {
      if (HeldRows part = rows.Part(lo, hi); !part.empty()) parts.push_back(std::move(part));
    }
    std::sort(parts.begin(), parts.end(), [](const HeldRows& x, const HeldRows& y) { return x.lo < y.lo; });
    HeldRows all;
    all.lo = lo;
    for (HeldRows& part : parts) {
      // Parts may share rows (with overlap, moved rows come with some the block holds already):
      // the same matrix rows, taken once.
      if (part.hi() <= all.hi()) continue;
      if (part.lo < all.hi()) part = part.Part(all.hi(), part.hi());
      auto joined = JoinRows(std::move(all), std::move(part));
      if (!joined.ok()) return InvalidArgument("cg: " + RowsText(lo, hi) + " are not all held here: " + joined.status().message());
      all = std::move(*joined);
    }
    if (all.lo != lo || all.hi() != hi) {
      return InvalidArgument("cg: " + RowsText(lo, hi) + " are not all held here (" + RowsText(all.lo, all.hi()) + " are)");
    }
    return all;
  }

  // The task owns rows [lo, hi) now: its block (their slab), solvers and send lists are built
  // for them (a file's rows from the block and `incoming`, RowsFor). The iterate and the inputs
  // keep every value known, from `known` (moved rows and their neighbours' values) first, else
  // from the block before; nothing changes if it fails.
  Status Rebuild(int lo, int hi, const std::map<int, double>& known, std::vector<HeldRows> incoming = {}) {
    const MovableRows& m = *movable_;
    std::optional<HeldRows> rows;
    if (!m.generated) {
      const auto [first, last] = SlabRows(m.n, lo, hi, m.overlap);
      auto held = RowsFor(first, last, std::move(incoming));
      if (!held.ok()) return held.status();
      rows = std::move(*held);
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
      for (size_t k = 0; k < b_.in[c].cols.size(); ++k) xin_[c][static_cast<Eigen::Index>(k)] = value(b_.in[c].cols[k]);
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
    history_.clear();
    for (auto it = pending_.begin(); it != pending_.end();) it = Place(it->first, it->second) ? pending_.erase(it) : std::next(it);
    KeepRowsBeyondSlice();
    return Status::Ok();
  }

  // A file's rows the task's first block (the slab of slice_lo..slice_hi) did not have, below and
  // above it, encoded for its checkpoints: a replacement, made with that block again, gets them
  // from there (RestoreState). Kept from one move to the next, since every checkpoint carries
  // them.
  void KeepRowsBeyondSlice() {
    if (!movable_ || movable_->generated) return;
    const MovableRows& m = *movable_;
    const auto [first_lo, first_hi] = SlabRows(m.n, m.slice_lo, m.slice_hi, m.overlap);
    const int lo = BlockLo(), hi = BlockHi();
    SliceWriter w;
    PutHeldRows(w, lo < first_lo ? HeldRowsOf(b_, lo, std::min(hi, first_lo)) : HeldRows{});
    PutHeldRows(w, hi > first_hi ? HeldRowsOf(b_, std::max(lo, first_hi), hi) : HeldRows{});
    rows_beyond_slice_ = w.Take();
  }

  Block b_;
  CgParams p_;
  std::optional<MovableRows> movable_;  // set when rows can move (row_moves.h)
  double tolerance_, inner_tolerance_;  // p_'s, tightened by Tighten()
  std::unique_ptr<BlockCg> solver_;
  std::unique_ptr<BlockDirect> direct_;  // the block's factor; null: solver_ iterates
  Eigen::VectorXd x_, rhs_;
  std::vector<Eigen::VectorXd> xin_;
  std::map<uint32_t, size_t> index_;
  std::map<uint32_t, std::string> pending_;  // per sender, its newest values that did not fit
  bool fresh_ = true;
  uint64_t iterations_ = 0;
  int stable_ = 0;
  double change_ = 0;
  double work_done_ = 0;
  std::deque<double> history_;  // the last kHistory changes
  std::string rows_beyond_slice_;  // KeepRowsBeyondSlice
  // Horizon() as RemainingWork() reported it the last times, newest first (0: not yet).
  mutable std::array<double, 4> reported_horizons_{};
};

}  // namespace

Result<CgParams> ParseCgParams(const app::JobParams& params) {
  static const std::set<std::string> kKnown = {"n", "bandwidth", "seed", "matrix", "rhs", "tolerance",
                                               "stable_iterations", "inner_tolerance", "output",
                                               "residual_tolerance", "inner", "matrix_cache", "partition",
                                               "overlap", "shared_input"};
  CgParams p;
  for (const auto& [key, value] : params.values) {
    if (!kKnown.count(key)) return InvalidArgument("cg: unknown parameter params." + key);
  }
  const bool has_matrix = params.Find("matrix") != nullptr;
  const bool has_n = params.Find("n") != nullptr;
  if (has_matrix == has_n) {
    return InvalidArgument("cg: give either params.matrix (a Matrix Market file) or params.n (with bandwidth and seed)");
  }
  p.generated = has_n;
  if (has_n) {
    auto n = ParseInt("n", *params.Find("n"));
    if (!n.ok()) return n.status();
    if (*n < 1 || *n > 100000000) return InvalidArgument("cg: params.n must be in 1..100000000");
    p.spec.n = static_cast<int>(*n);
    int64_t bw = std::min<int64_t>(8, p.spec.n - 1), seed = 1;  // default: 8, or less for tiny n
    if (auto* s = params.Find("bandwidth")) {
      auto v = ParseInt("bandwidth", *s);
      if (!v.ok()) return v.status();
      bw = *v;
    }
    if (auto* s = params.Find("seed")) {
      auto v = ParseInt("seed", *s);
      if (!v.ok()) return v.status();
      seed = *v;
    }
    if (bw < 0 || bw >= p.spec.n + (p.spec.n == 1)) return InvalidArgument("cg: params.bandwidth must be in 0..n-1");
    p.spec.bandwidth = static_cast<int>(bw);
    p.spec.seed = static_cast<uint64_t>(seed);
    if (params.Find("rhs")) return InvalidArgument("cg: params.rhs goes with params.matrix");
  } else {
    for (const char* k : {"bandwidth", "seed"}) {
      if (params.Find(k)) return InvalidArgument(std::string("cg: params.") + k + " goes with params.n");
    }
    p.matrix = Resolve(params.base_dir, *params.Find("matrix"));
    if (auto* s = params.Find("rhs")) p.rhs = Resolve(params.base_dir, *s);
  }
  if (auto* s = params.Find("output")) p.output = Resolve(params.base_dir, *s);
  if (auto* s = params.Find("tolerance")) {
    auto v = ParseDouble("tolerance", *s);
    if (!v.ok()) return v.status();
    if (*v <= 0) return InvalidArgument("cg: params.tolerance must be positive");
    p.tolerance = *v;
  }
  if (auto* s = params.Find("inner_tolerance")) {
    auto v = ParseDouble("inner_tolerance", *s);
    if (!v.ok()) return v.status();
    if (*v <= 0 || *v >= 1) return InvalidArgument("cg: params.inner_tolerance must be in (0, 1)");
    p.inner_tolerance = *v;
  }
  if (auto* s = params.Find("residual_tolerance")) {
    auto v = ParseDouble("residual_tolerance", *s);
    if (!v.ok()) return v.status();
    if (*v <= 0 || *v >= 1) return InvalidArgument("cg: params.residual_tolerance must be in (0, 1)");
    p.residual_tolerance = *v;
  }
  if (auto* s = params.Find("inner")) {
    if (*s != "auto" && *s != "direct" && *s != "cg") {
      return InvalidArgument("cg: params.inner must be \"auto\", \"direct\" or \"cg\"");
    }
    p.inner = *s;
  }
  if (auto* s = params.Find("partition")) {
    if (*s != "auto" && *s != "metis" && *s != "contiguous") {
      return InvalidArgument("cg: params.partition must be \"auto\", \"metis\" or \"contiguous\"");
    }
    p.partition = *s;
  }
  if (auto* s = params.Find("overlap"); s && *s != "auto") {
    auto v = ParseInt("overlap", *s);
    if (!v.ok() || *v < 0 || *v > 100) {
      return InvalidArgument("cg: params.overlap must be \"auto\" or a number of layers in 0..100");
    }
    p.overlap = static_cast<int>(*v);
  }
  if (auto* s = params.Find("matrix_cache")) {
    if (*s != "true" && *s != "false") return InvalidArgument("cg: params.matrix_cache must be true or false");
    p.matrix_cache = *s == "true";
  }
  if (auto* s = params.Find("shared_input")) {
    if (*s != "auto" && *s != "true" && *s != "false") {
      return InvalidArgument("cg: params.shared_input must be \"auto\", true or false");
    }
    if (p.generated) return InvalidArgument("cg: params.shared_input goes with params.matrix");
    if (*s == "true" && !p.matrix_cache) {
      return InvalidArgument("cg: params.shared_input = true needs matrix_cache (daemons read the matrix's cache)");
    }
    p.shared_input = *s;
  }
  if (auto* s = params.Find("stable_iterations")) {
    auto v = ParseInt("stable_iterations", *s);
    if (!v.ok()) return v.status();
    if (*v < 1 || *v > 1000) return InvalidArgument("cg: params.stable_iterations must be in 1..1000");
    p.stable_iterations = static_cast<int>(*v);
  }
  return p;
}

Result<MatrixRead> ParseMatrix(const std::string& path, bool use_cache, std::vector<std::string>& notes) {
  // The file's version before it is read: a cache made now is keyed by what was parsed.
  std::optional<MatrixFileVersion> version;
  if (use_cache) {
    if (auto v = MatrixFileVersionOf(path); v.ok()) version = *v;  // else the read below says why
  }
  if (version) {
    auto cached = LoadMatrixCache(path, *version);
    if (cached.ok()) {
      notes.push_back("cg: read " + path + " from its cache " + MatrixCachePath(path));
      MatrixRead read;
      read.mapped = std::move(*cached);
      read.cached = version;
      return read;
    }
    if (cached.status().code() != StatusCode::kNotFound) {
      notes.push_back("cg: cache not used: " + cached.status().message());
    }
  }
  auto a = ReadMatrixMarketRows(path);
  if (!a.ok()) return a.status();
  MatrixRead read;
  read.parsed = std::move(*a);
  read.to_cache = version;
  return read;
}

Result<std::string> WriteMatrixCache(const std::string& path, const SpMat& a, const MatrixFileVersion& version) {
  if (Status saved = SaveMatrixCache(path, a, version); !saved.ok()) {
    return Status(saved.code(), "cg: no cache for the next run: " + saved.message());
  }
  return "cg: wrote the cache " + MatrixCachePath(path) + " for the next run";
}

Result<MatrixRead> ReadMatrix(const std::string& path, bool use_cache, std::vector<std::string>& notes) {
  auto read = ParseMatrix(path, use_cache, notes);
  if (!read.ok() || !read->to_cache) return read;
  auto written = WriteMatrixCache(path, read->parsed, *read->to_cache);
  notes.push_back(written.ok() ? *written : written.status().message());
  if (written.ok()) read->cached = read->to_cache;
  read->to_cache.reset();
  return read;
}

// Why daemons that see the matrix's file are sent their blocks all the same.
constexpr const char* kBlocksSentNote = "cg: the blocks are sent: the daemons need the matrix's cache to read it themselves";

Result<app::JobPlan> CgApp::Prepare(const app::JobParams& params) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  order_.clear();
  renumbered_ = SpMat();
  std::string name = "generated system";
  double read_seconds = 0;
  std::vector<std::string> notes;
  // Writes the cache of a parsed matrix meanwhile; any return waits for it (std::async's future).
  std::future<Result<std::string>> cache_writer;
  if (p->generated) {
    const double n = p->spec.n, entries = n * (2.0 * p->spec.bandwidth + 1);
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory("cg: a generated system of n = " + std::to_string(p->spec.n) +
                                               " with bandwidth " + std::to_string(p->spec.bandwidth),
                                           entries * kBytesPerEntry + n * kBytesPerRow));
    problem_ = Generate(p->spec);
    mapped_.reset();
  } else {
    const auto read_start = std::chrono::steady_clock::now();
    name = p->matrix;
    auto matrix = ParseMatrix(p->matrix, p->matrix_cache, notes);
    if (!matrix.ok()) return matrix.status();
    problem_.a = std::move(matrix->parsed);  // (empty when the matrix is mapped: A())
    mapped_ = std::move(matrix->mapped);
    // A parsed matrix's cache is written while the matrix is checked and partitioned (it is only
    // read: both may look at it at once); the writer is waited for before the plan is returned.
    // On an 800,000-row system the write took 0.3-0.8 s on our VM, the partition 0.2-0.4 s.
    if (matrix->to_cache) {
      cache_writer = std::async(std::launch::async, [path = p->matrix, &a = problem_.a, version = *matrix->to_cache] {
        return WriteMatrixCache(path, a, version);
      });
    }
    shared_source_.reset();
    if (p->shared_input == "true" || (p->shared_input == "auto" && params.shared_files)) {
      if (matrix->cached || matrix->to_cache) {  // (a cache that cannot be written: see below)
        shared_matrix_ = std::filesystem::absolute(p->matrix).string();
        shared_source_ = matrix->cached ? matrix->cached : matrix->to_cache;
      } else {
        notes.push_back(kBlocksSentNote);
      }
    }
    read_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
    const auto rows = A().rows(), cols = A().cols();
    if (rows != cols) {
      return InvalidArgument(name + ": the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", not square");
    }
    if (p->rhs.empty()) {
      problem_.b = A() * Eigen::VectorXd::Ones(cols);
    } else {
      const auto rhs_start = std::chrono::steady_clock::now();
      auto b = ReadMatrixMarketVector(p->rhs, rows);
      if (!b.ok()) return b.status();
      read_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - rhs_start).count();
      problem_.b = Eigen::Map<Eigen::VectorXd>(b->data(), static_cast<Eigen::Index>(b->size()));
    }
    AIAC_RETURN_IF_ERROR(CheckSystem(A(), problem_.b, name));
  }
  const int n = static_cast<int>(A().rows());
  if (params.tasks < 1 || params.tasks > static_cast<uint32_t>(n)) {
    return InvalidArgument("cg: " + std::to_string(params.tasks) + " tasks for " + std::to_string(n) +
                           " rows (at most one task per row)");
  }
  // METIS or slices: decided once, on equal shares; Reweigh keeps the choice.
  metis_ = p->metis();
  if (metis_ && p->partition == "auto") {
    const RowPartition slices = ContiguousPartition(n, static_cast<int>(params.tasks));
    if (const double cut = CutFraction(A(), slices); cut <= kSlicesGoodEnough) {
      notes.push_back("cg: slices of consecutive rows cut " + FormatDouble(100 * cut) +
                      " % of the matrix's entries: no METIS partition needed");
      metis_ = false;
    } else {
      // Rows not numbered along the graph: slices of the renumbered rows may do (and can move).
      std::vector<int> order = ReverseCuthillMcKee(A());
      SpMat renumbered = Renumbered(A(), order);
      if (const double rcm_cut = CutFraction(renumbered, slices); rcm_cut <= kSlicesGoodEnough) {
        notes.push_back("cg: slices of consecutive rows cut " + FormatDouble(100 * cut) +
                        " % of the matrix's entries, " + FormatDouble(100 * rcm_cut) +
                        " % once renumbered in reverse Cuthill-McKee order (bandwidth " +
                        std::to_string(Bandwidth(renumbered)) + "): no METIS partition needed");
        Eigen::VectorXd b(n);
        for (int i = 0; i < n; ++i) b[i] = problem_.b[order[static_cast<size_t>(i)]];
        problem_.b = std::move(b);
        order_ = std::move(order);
        renumbered_ = std::move(renumbered);
        metis_ = false;
        if (shared_source_) {
          shared_source_.reset();
          notes.push_back("cg: the blocks are sent: the matrix's cache holds the file's numbering");
        }
      }
    }
  }
  // Rows of a matrix from a file move between slices when its pattern is symmetric
  // (row_moves.h).
  bandwidth_ = p->generated ? std::optional<int>(p->spec.bandwidth)
               : metis_     ? std::nullopt
                            : SymmetricBandwidth(A());
  auto plan = Split(*p, params.tasks, {}, notes);
  if (!plan.ok()) return plan.status();
  if (cache_writer.valid()) {
    auto written = cache_writer.get();
    if (!written.ok() && shared_source_) {
      // The outlines name a cache that is not there: the blocks are sent after all.
      shared_source_.reset();
      notes.push_back(kBlocksSentNote);
      plan = Split(*p, params.tasks, {}, std::move(notes));
      if (!plan.ok()) return plan.status();
    }
    plan->notes.push_back(written.ok() ? *written : written.status().message());
  }
  if (shared_source_) plan->notes.push_back("cg: the daemons build their own blocks from " + MatrixCachePath(shared_matrix_));
  plan->read_seconds = read_seconds;
  return plan;
}

Result<std::optional<app::JobPlan>> CgApp::Reweigh(const app::JobParams& params, const std::vector<double>& task_powers) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  if (task_powers.size() != params.tasks || A().rows() == 0) {
    return InvalidArgument("cg: " + std::to_string(task_powers.size()) + " powers for " + std::to_string(params.tasks) +
                           " tasks (or Reweigh before Prepare)");
  }
  for (double power : task_powers) {
    if (!(power > 0) || !std::isfinite(power)) return InvalidArgument("cg: a daemon's power must be positive");
  }
  const auto [lo, hi] = std::minmax_element(task_powers.begin(), task_powers.end());
  auto plan = Split(*p, params.tasks, task_powers,
                    {"cg: blocks weighted by the powers of their daemons (" + FormatDouble(*lo) + " to " +
                     FormatDouble(*hi) + ")"});
  if (!plan.ok()) return plan.status();
  return std::optional<app::JobPlan>(std::move(*plan));
}

Result<app::JobPlan> CgApp::Split(const CgParams& p, uint32_t task_count, const Shares& shares,
                                  std::vector<std::string> notes) {
  const int n = static_cast<int>(A().rows());
  const auto tasks = static_cast<int>(task_count);
  RowPartition part;
  bool metis = metis_;
  if (metis) {
    auto parts = MetisPartition(A(), tasks, shares);
    if (parts.ok()) {
      part = std::move(*parts);
    } else if (parts.status().code() == StatusCode::kInvalidArgument) {
      // A part left empty (a tiny or oddly coupled system): every task still needs rows.
      notes.push_back(parts.status().message() + "; contiguous partition instead");
      metis = false;
    } else {
      return parts.status();
    }
  }
  if (!metis) part = ContiguousPartition(n, tasks, shares);
  // Each block: its own rows and `layers` layers more; who sends whom what follows from those.
  std::vector<std::vector<int>> block_rows(task_count);
  const bool auto_layers = p.overlap < 0 && !p.generated;
  const int layers = p.overlap >= 0 ? p.overlap
                     : p.generated  ? 0
                                    : AutoLayers(A(), part.rows, kAutoOverlapGrowth, kAutoOverlapLayers);
  for (int l = 0; l < tasks; ++l) block_rows[l] = Extend(A(), part.rows[l], layers);
  // Rows move live between neighbouring slices while each stays wider than the bandwidth and the
  // overlap (row_moves.h): a generated system's, and a file's with a symmetric pattern. Each
  // block is then the slab of its slice that holds its layers (the same rows for a full band).
  int slab = 0;
  chain_ = false;
  if (!metis && bandwidth_) {
    const std::vector<int> starts = SliceStarts(n, tasks, shares);
    slab = SlabOverlap(starts, block_rows);
    chain_ = SlicesCanMove(*bandwidth_, starts, slab);
    for (int l = 0; chain_ && slab > 0 && l < tasks; ++l) {
      const auto [lo, hi] = SlabRows(n, starts[l], starts[l + 1], slab);
      block_rows[l].resize(static_cast<size_t>(hi - lo));
      std::iota(block_rows[l].begin(), block_rows[l].end(), lo);
    }
  }
  const auto sends = SendLists(A(), part.owner, block_rows);
  const bool wrap = chain_ && !p.daemon_builds_block();  // the tasks learn the bandwidth from their slices
  const SpRef a = A();
  RowFn row = [&](int i, std::vector<int>& cols, std::vector<double>& vals) {
    cols.clear();
    vals.clear();
    for (SpRef::InnerIterator it(a, i); it; ++it) {
      cols.push_back(static_cast<int>(it.col()));
      vals.push_back(it.value());
    }
  };
  app::JobPlan plan;
  plan.target_change = p.tolerance;
  plan.graph.resize(task_count);
  plan.slices.resize(task_count);
  // A generated system's daemons build their own blocks from the parameters; only uneven
  // slices need saying, by their starts.
  const std::string starts_slice = p.daemon_builds_block() && !shares.empty()
                                       ? EncodeSliceStarts(SliceStarts(n, tasks, shares))
                                       : std::string();
  // The blocks are independent (each reads the matrix, writes its own slot): built on every core.
  const OwnerFn owner = [&](int r) { return part.owner[static_cast<size_t>(r)]; };
  auto build = [&](uint32_t l) {
    const std::vector<int>& rows = block_rows[l];
    std::vector<double> b_rows(rows.size());
    std::vector<int> own;
    for (size_t k = 0; k < rows.size(); ++k) {
      b_rows[k] = problem_.b[rows[k]];
      if (part.owner[static_cast<size_t>(rows[k])] == l) own.push_back(static_cast<int>(k));
    }
    if (shared_source_) {
      BlockOutline outline = OutlineBlock(a, std::move(b_rows), rows, std::move(own), part.owner, sends[l],
                                          shared_matrix_, *shared_source_);
      plan.graph[l] = NodeOf(outline.nonzeros, outline.in, outline.out);
      plan.slices[l] = wrap ? EncodeMovableSlice(*bandwidth_, slab, EncodeBlockOutline(outline)) : EncodeBlockOutline(outline);
      return;
    }
    Block block = BuildBlock(row, b_rows, n, rows, std::move(own), owner, sends[l]);
    plan.graph[l] = NodeOf(block.nonzeros, block.in, block.out);
    plan.slices[l] = p.daemon_builds_block() ? starts_slice
                     : wrap                    ? EncodeMovableSlice(*bandwidth_, slab, EncodeBlock(block))
                                               : EncodeBlock(block);
  };
  const uint32_t threads = std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, task_count);
  {
    std::vector<std::jthread> workers;
    for (uint32_t w = 1; w < threads; ++w) {
      workers.emplace_back([&, w] {
        for (uint32_t l = w; l < task_count; l += threads) build(l);
      });
    }
    for (uint32_t l = 0; l < task_count; l += threads) build(l);
  }
  if (metis || layers > 0 || !shares.empty()) {
    size_t smallest = part.rows[0].size(), largest = 0, extended = 0;
    for (uint32_t l = 0; l < task_count; ++l) {
      smallest = std::min(smallest, part.rows[l].size());
      largest = std::max(largest, part.rows[l].size());
      extended = std::max(extended, block_rows[l].size());
    }
    notes.push_back("cg: " + std::string(metis ? "METIS" : "contiguous") + " partition into " +
                    std::to_string(task_count) + " blocks of " + std::to_string(smallest) + " to " +
                    std::to_string(largest) + " rows, at most " + std::to_string(extended) + " with overlap " +
                    std::to_string(layers) + (auto_layers ? " (auto)" : "") +
                    (chain_ && slab > 0 ? " (" + std::to_string(slab) + " rows either side)" : ""));
  }
  plan.items_in_chain = chain_;
  if (!chain_ && shares.empty()) {  // (once: Reweigh's split follows Prepare's)
    const std::string why =
        metis         ? "METIS blocks"
        : !bandwidth_ ? "the matrix's pattern is not symmetric"
                      : "a slice has no more rows than the bandwidth " + std::to_string(*bandwidth_) +
                            (slab > 0 ? " plus the overlap of " + std::to_string(slab) + " rows" : "");
    notes.push_back("cg: rows stay in their blocks while the job runs (" + why + "): no live balancing");
  }
  owned_ = std::move(part.rows);
  plan.notes = std::move(notes);
  return plan;
}

Result<std::unique_ptr<app::Task>> CgApp::MakeTask(const app::JobParams& params, uint32_t task, std::string_view slice) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  if (p->daemon_builds_block()) {
    if (params.tasks < 1 || params.tasks > static_cast<uint32_t>(p->spec.n) || task >= params.tasks) {
      return InvalidArgument("cg: task " + std::to_string(task) + " of " + std::to_string(params.tasks) + " does not fit n");
    }
    // Equal slices unless the spawner sent their starts (Reweigh: daemons of unequal power).
    std::vector<int> starts;
    if (slice.empty()) {
      starts = Partition(p->spec.n, static_cast<int>(params.tasks));
    } else {
      auto sent = DecodeSliceStarts(slice, p->spec.n, static_cast<int>(params.tasks));
      if (!sent.ok()) return sent.status();
      starts = std::move(*sent);
    }
    const double rows = starts[task + 1] - starts[task];
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory("cg: block " + std::to_string(task) + " (" + std::to_string(starts[task + 1] - starts[task]) +
                                               " rows)", rows * (2.0 * p->spec.bandwidth + 1) * kBytesPerEntry + rows * kBytesPerRow));
    // Rows can move between neighbours while every block is wider than the bandwidth
    // (row_moves.h); all tasks see the same starts, so they agree.
    std::optional<MovableRows> movable;
    if (SlicesCanMove(p->spec.bandwidth, starts)) {
      movable = MovableRows{p->spec.n, p->spec.bandwidth, params.tasks, task, p->spec, 0, 0};
    }
    Block block = GeneratedBlock(p->spec, starts, task);
    return NewCgTask(std::move(block), *p, std::move(movable));
  }
  std::optional<int> bandwidth;  // set: the rows of this slice of a file's matrix may move
  int overlap = 0;
  if (IsMovableSlice(slice)) {
    auto movable = DecodeMovableSlice(slice);
    if (!movable.ok()) return movable.status();
    bandwidth = movable->bandwidth;
    overlap = movable->overlap;
    slice = movable->slice;
  }
  auto block = [&]() -> Result<Block> {
    if (!IsBlockOutline(slice)) return DecodeBlock(slice);
    auto outline = DecodeBlockOutline(slice);
    if (!outline.ok()) return outline.status();
    return BuildBlockFromCache(std::move(*outline));
  }();
  if (!block.ok()) return block.status();
  if (!bandwidth) return NewCgTask(std::move(*block), *p);
  const std::vector<int>& rows = block->rows;
  const std::vector<int>& own = block->own;
  const bool neighbours_only = std::all_of(block->in.begin(), block->in.end(), [&](const Block::Coupling& c) {
    return c.task + 1 == task || c.task == task + 1;
  });
  const int lo = own.empty() ? 0 : rows[own.front()], hi = own.empty() ? 0 : rows[own.back()] + 1;
  if (own.empty() || rows.back() - rows.front() + 1 != block->size() || hi - lo != static_cast<int>(own.size()) ||
      std::pair(rows.front(), rows.back() + 1) != SlabRows(block->n, lo, hi, overlap) || task >= params.tasks ||
      !neighbours_only) {
    return InvalidArgument("cg: the block of task " + std::to_string(task) + " is not the slab of a slice of " +
                           "consecutive rows that uses only its neighbours' rows: its rows cannot move");
  }
  MovableRows movable{block->n, *bandwidth, params.tasks, task, std::nullopt, lo, hi, overlap};
  return NewCgTask(std::move(*block), *p, std::move(movable));
}

Result<app::GatherReport> CgApp::Gather(const app::JobParams& params, const std::vector<std::string>& slices) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  const int n = static_cast<int>(A().rows());
  Eigen::VectorXd x = Eigen::VectorXd::Constant(n, std::nan(""));
  if (slices.size() != owned_.size()) {
    return Corruption("cg: " + std::to_string(slices.size()) + " results for " + std::to_string(owned_.size()) +
                      " tasks");
  }
  // Slices of consecutive rows may have moved while the job ran (row_moves.h): each result says
  // where its rows start, and together they must cover every row once.
  const bool moved_rows = p->daemon_builds_block() || chain_;
  std::vector<bool> seen(moved_rows ? static_cast<size_t>(n) : 0, false);
  for (size_t l = 0; l < slices.size(); ++l) {
    const std::string& s = slices[l];
    int32_t head[2] = {-1, -1};  // count, first row
    if (s.size() >= sizeof head) std::memcpy(head, s.data(), sizeof head);
    const auto count = static_cast<size_t>(std::max(0, head[0]));
    const bool fits = s.size() >= sizeof head && head[0] >= 0 && s.size() == sizeof head + count * sizeof(double) &&
                      (moved_rows ? head[1] >= 0 && head[1] + static_cast<int64_t>(count) <= n
                                  : count == owned_[l].size());
    if (!fits) return Corruption("cg: result of task " + std::to_string(l) + " does not fit its rows");
    const char* values = s.data() + sizeof head;
    for (size_t k = 0; k < count; ++k) {
      const int row = moved_rows ? head[1] + static_cast<int>(k) : owned_[l][k];
      if (moved_rows) {
        if (seen[static_cast<size_t>(row)]) {
          return Corruption("cg: row " + std::to_string(row + 1) + " is in the results of two tasks");
        }
        seen[static_cast<size_t>(row)] = true;
      }
      std::memcpy(&x[row], values + k * sizeof(double), sizeof(double));
    }
  }
  if (auto gap = std::find(seen.begin(), seen.end(), false); gap != seen.end()) {
    return Corruption("cg: row " + std::to_string(gap - seen.begin() + 1) + " is in no task's result");
  }
  app::GatherReport report;
  const double b_norm = problem_.b.norm();
  const double r_norm = (problem_.b - A() * x).norm();
  report.residual = b_norm > 0 ? r_norm / b_norm : r_norm;  // NaN if a row was never sent
  report.residual_target = p->residual_tolerance;
  if (!std::isfinite(report.residual)) {
    report.status = "diverged";
    report.error = "the gathered solution has non-finite entries";
  } else if (report.residual > p->residual_tolerance) {
    report.status = "unconverged";
    report.error = "residual " + FormatDouble(report.residual) + " is above residual_tolerance " +
                   FormatDouble(p->residual_tolerance);
  }
  if (p->generated) report.numbers["error_inf"] = (x - Eigen::VectorXd::Ones(n)).cwiseAbs().maxCoeff();
  if (!p->output.empty()) {
    // (In the file's numbering: renumbered rows go back to their places.)
    std::vector<double> out(x.data(), x.data() + n);
    for (int i = 0; i < n && !order_.empty(); ++i) out[static_cast<size_t>(order_[static_cast<size_t>(i)])] = x[i];
    AIAC_RETURN_IF_ERROR(WriteMatrixMarketVector(p->output, out));
    report.output = p->output;
  }
  return report;
}

Result<std::unique_ptr<app::Task>> NewCgTask(Block block, const CgParams& params, std::optional<MovableRows> movable) {
  auto t = CgTask::Make(std::move(block), params, std::move(movable));
  if (!t.ok()) return t.status();
  return std::unique_ptr<app::Task>(std::move(*t));
}

}  // namespace aiac::cg
