#include "apps/cg/coarse_rounds.h"

#include <algorithm>

#include "apps/cg/byte_codec.h"

namespace aiac::cg {
namespace {

enum Flags : uint16_t {
  kHasW = 1,
  kHasRow = 2,
  kHasRound = 4,
  kHasPrevious = 8,
  kGaveUp = 16,         // the sender's A_0 was not positive semi-definite: it stays on one level
  kConverged = 32,      // the sender was locally converged
  kHoldsYourW = 64,     // the sender holds the receiver's A Z on its rows
  kHoldsYourRow = 128,  // the sender holds the receiver's block row of A_0
};
// Sizes a section may claim (functions of a task, of all tasks; rows of A Z): far above any
// real job, low enough that a damaged count cannot ask for gigabytes.
constexpr uint32_t kMostFunctions = 1u << 16;
constexpr uint32_t kMostRows = 1u << 28;

void PutDoubles(SliceWriter& w, const double* v, Eigen::Index n) {
  for (Eigen::Index k = 0; k < n; ++k) w.Put<double>(v[k]);
}

bool GetDoubles(SliceReader& r, double* v, Eigen::Index n) {
  for (Eigen::Index k = 0; k < n; ++k) {
    if (!r.Get(v[k])) return false;
  }
  return true;
}

// Row k of a matrix, its values in order (Eigen stores matrices by column).
void PutRow(SliceWriter& w, const Eigen::MatrixXd& m, Eigen::Index k) {
  for (Eigen::Index j = 0; j < m.cols(); ++j) w.Put<double>(m(k, j));
}

bool GetRow(SliceReader& r, Eigen::MatrixXd& m, Eigen::Index k) {
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    if (!r.Get(m(k, j))) return false;
  }
  return true;
}

}  // namespace

CoarseRounds::CoarseRounds(uint32_t task, uint32_t tasks, CoarseBasis basis,
                           std::vector<int> own_rows, Sends sends)
    : task_(task),
      tasks_(tasks),
      basis_(std::move(basis)),
      own_rows_(std::move(own_rows)),
      sends_(std::move(sends)),
      peers_(tasks) {}

bool CoarseRounds::SetupDone() const {
  for (uint32_t m = 0; m < tasks_; ++m) {
    if (m != task_ && !peers_[m].has_w) return false;
  }
  return true;
}

Status CoarseRounds::Absorb(uint32_t from, std::string_view section) {
  if (from >= tasks_ || from == task_) {
    return InvalidArgument("cg: a coarse section from task " + std::to_string(from));
  }
  auto bad = [&](const char* what) {
    return Corruption("cg: damaged coarse section from task " + std::to_string(from) + " (" + what +
                      ")");
  };
  SliceReader r(section);
  // Whether `count` items of `each` bytes are left to read: checked before anything is sized,
  // so a damaged count cannot ask for gigabytes.
  auto left = [&](uint64_t count, uint64_t each) {
    return count <= (section.size() - r.position()) / each;
  };
  uint16_t flags = 0;
  uint32_t size = 0;
  if (!r.Get(flags) || !r.Get(size) || size == 0 || size > kMostFunctions) return bad("header");
  Peer next = peers_[from];
  next.heard = true;
  next.size = static_cast<int>(size);
  next.gave_up = flags & kGaveUp;
  next.converged = flags & kConverged;
  next.holds_w = flags & kHoldsYourW;
  next.holds_row = flags & kHoldsYourRow;
  if (flags & kHasW) {
    uint32_t count = 0;
    if (!r.Get(count) || count > kMostRows || !left(count, sizeof(int32_t) + size * sizeof(double)))
      return bad("rows");
    std::vector<int32_t> rows(count);
    for (auto& row : rows) {
      if (!r.Get(row)) return bad("rows");
    }
    next.w_pos.clear();
    std::vector<Eigen::Index> keep;
    for (uint32_t k = 0; k < count; ++k) {
      auto it = std::lower_bound(own_rows_.begin(), own_rows_.end(), rows[k]);
      if (it != own_rows_.end() && *it == rows[k]) {
        next.w_pos.push_back(static_cast<int>(it - own_rows_.begin()));
        keep.push_back(k);
      }
    }
    Eigen::VectorXd row(size);
    next.w.resize(static_cast<Eigen::Index>(keep.size()), size);
    size_t kept = 0;
    for (uint32_t k = 0; k < count; ++k) {
      if (!GetDoubles(r, row.data(), size)) return bad("A Z");
      if (kept < keep.size() && keep[kept] == k)
        next.w.row(static_cast<Eigen::Index>(kept++)) = row;
    }
    uint32_t used = 0;
    if (!r.Get(used) || used > kMostRows || !left(used, size * sizeof(double)))
      return bad("Z on the values");
    next.z_in.resize(used, size);
    for (uint32_t k = 0; k < used; ++k) {
      if (!GetRow(r, next.z_in, k)) return bad("Z on the values");
    }
    if (!next.w.allFinite() || !next.z_in.allFinite()) return bad("not finite");
    next.has_w = true;
  }
  if (flags & kHasRow) {
    uint32_t total = 0;
    if (!r.Get(total) || total == 0 || total > kMostFunctions ||
        !left(uint64_t{size} * total, sizeof(double)))
      return bad("block row");
    Eigen::MatrixXd row(size, total);
    for (uint32_t i = 0; i < size; ++i) {
      if (!GetRow(r, row, i)) return bad("block row");
    }
    next.block_row = std::move(row);
  }
  if (flags & kHasRound) {
    uint64_t round = 0;
    uint32_t total = 0;
    if (!r.Get(round) || round == 0 || !r.Get(total) || total == 0 || total > kMostFunctions ||
        !left(total, sizeof(double)))
      return bad("round");
    next.round = round;
    next.g.resize(total);
    if (!GetDoubles(r, next.g.data(), total)) return bad("contribution");
    next.e_prev.reset();
    if (flags & kHasPrevious) {
      Eigen::VectorXd e(total);
      if (!GetDoubles(r, e.data(), total)) return bad("solution");
      next.e_prev = std::move(e);
    }
  }
  if (r.position() != section.size()) return bad("trailing bytes");
  peers_[from] = std::move(next);
  return Status::Ok();
}

Result<bool> CoarseRounds::Advance() {
  bool progressed = false;
  if (offset_.empty()) {
    bool known = true;
    for (uint32_t m = 0; m < tasks_; ++m) known = known && (m == task_ || peers_[m].size > 0);
    if (known) {
      offset_.resize(tasks_);
      total_ = 0;
      for (uint32_t m = 0; m < tasks_; ++m) {
        offset_[m] = total_;
        total_ += m == task_ ? functions() : peers_[m].size;
      }
    }
  }
  if (!block_row_ && total_ > 0 && SetupDone()) {
    // Task l's block row of A_0 = Z^T A Z: Z_l^T (A Z_m) over l's own rows, for every m.
    Eigen::MatrixXd row = Eigen::MatrixXd::Zero(functions(), total_);
    row.middleCols(offset_[task_], functions()) = basis_.z.transpose() * basis_.w_own;
    for (uint32_t m = 0; m < tasks_; ++m) {
      const Peer& p = peers_[m];
      if (m == task_ || p.w_pos.empty()) continue;
      if (p.w.cols() != p.size) continue;
      Eigen::MatrixXd zm(static_cast<Eigen::Index>(p.w_pos.size()), functions());
      for (size_t k = 0; k < p.w_pos.size(); ++k)
        zm.row(static_cast<Eigen::Index>(k)) = basis_.z.row(p.w_pos[k]);
      row.middleCols(offset_[m], p.size) = zm.transpose() * p.w;
    }
    block_row_ = std::move(row);
    progressed = true;
  }
  if (!problem_ && block_row_ && !gave_up_) {
    std::vector<Eigen::MatrixXd> rows(tasks_);
    bool all = true;
    for (uint32_t m = 0; m < tasks_ && all; ++m) {
      if (m == task_) {
        rows[m] = *block_row_;
      } else if (peers_[m].block_row && peers_[m].block_row->rows() == peers_[m].size) {
        rows[m] = *peers_[m].block_row;
      } else {
        all = false;
      }
    }
    if (all) {
      auto problem = CoarseProblem::Make(rows);
      if (!problem.ok()) {
        if (!optional_) return problem.status();
        gave_up_ = true;  // every task finds the same A_0: they all stay on one level
        return true;
      }
      problem_ = std::move(*problem);
      round_ = 1;
      for (const Peer& p : peers_) round_ = std::max(round_, p.round);
      progressed = true;
    }
  }
  if (!problem_) return progressed;
  uint64_t newest = 0;
  for (uint32_t m = 0; m < tasks_; ++m) {
    if (m != task_) newest = std::max(newest, peers_[m].round);
  }
  if (newest > round_ + 1) {  // restored from an old state: join the newest round
    round_ = newest;
    g_.reset();
    e_prev_.reset();
    return progressed;
  }
  for (uint32_t m = 0; m < tasks_; ++m) {
    const Peer& p = peers_[m];
    if (m != task_ && p.round == round_ + 1 && p.e_prev && p.e_prev->size() == total_) {
      Begin(*p.e_prev);  // a faster task completed our round: its solution is the round's
      return true;
    }
  }
  if (!g_) return progressed;
  Eigen::VectorXd r0 = Eigen::VectorXd::Zero(total_);
  for (uint32_t m = 0; m < tasks_; ++m) {
    if (m == task_) {
      r0 += *g_;
      continue;
    }
    const Peer& p = peers_[m];
    if (p.round != round_ || p.g.size() != total_) return progressed;
    r0 += p.g;
  }
  Begin(problem_->Solve(r0));
  return true;
}

bool CoarseRounds::PeerNeedsSetup() const {
  for (uint32_t m = 0; m < tasks_; ++m) {
    const Peer& p = peers_[m];
    if (m == task_ || !p.heard || p.gave_up) continue;
    if (!p.holds_w && !p.sent_w) return true;
    if (block_row_ && !gave_up_ && !p.holds_row && !p.sent_row) return true;
  }
  return false;
}

bool CoarseRounds::AwaitsSetup() const { return !problem_ && !gave_up_ && !PeerNeedsSetup(); }

bool CoarseRounds::AwaitsWorkingPeers() const {
  if (!contributed()) return false;
  bool missing = false;
  for (uint32_t m = 0; m < tasks_; ++m) {
    const Peer& p = peers_[m];
    if (m == task_ || (p.round == round_ && p.g.size() == total_)) continue;
    if (p.converged) return false;
    missing = true;
  }
  return missing;
}

void CoarseRounds::Begin(const Eigen::VectorXd& e) {
  e_prev_ = e;
  due_ = e;
  ++round_;
  ++corrections_;
  g_.reset();
}

void CoarseRounds::CorrectInputs(std::vector<Eigen::VectorXd>& inputs,
                                 const std::vector<uint32_t>& from) {
  if (!due_) return;
  const uint64_t applied = round_ - 1;  // the round of the due solution
  for (size_t k = 0; k < inputs.size() && k < from.size(); ++k) {
    const Peer& p = peers_[from[k]];
    // Values m sent once it had applied this round are corrected already (by its block solve).
    if (p.round > applied || p.z_in.rows() != inputs[k].size() || p.z_in.cols() != p.size) continue;
    inputs[k] += p.z_in * due_->segment(offset_[from[k]], p.size);
  }
  due_.reset();
}

double CoarseRounds::DueChange() const {
  if (!due_ || functions() == 0) return 0;
  return (basis_.z * due_->segment(offset_[task_], functions())).cwiseAbs().maxCoeff();
}

void CoarseRounds::Contribute(const Eigen::VectorXd& x, const std::vector<int>& own) {
  if (!problem_) return;
  Eigen::VectorXd xo(static_cast<Eigen::Index>(own.size()));
  for (size_t k = 0; k < own.size(); ++k) xo[static_cast<Eigen::Index>(k)] = x[own[k]];
  // Our rows' part of r_0 = Z^T b - (A Z)^T x: Z_l^T b_l in our slot, and -(A Z_m)^T x on our
  // rows in every slot.
  Eigen::VectorXd g = Eigen::VectorXd::Zero(total_);
  g.segment(offset_[task_], functions()) = basis_.zb - basis_.w_own.transpose() * xo;
  for (uint32_t m = 0; m < tasks_; ++m) {
    const Peer& p = peers_[m];
    if (m == task_ || p.w_pos.empty() || p.w.cols() != p.size) continue;
    Eigen::VectorXd xm(static_cast<Eigen::Index>(p.w_pos.size()));
    for (size_t k = 0; k < p.w_pos.size(); ++k) xm[static_cast<Eigen::Index>(k)] = xo[p.w_pos[k]];
    g.segment(offset_[m], p.size) -= p.w.transpose() * xm;
  }
  g_ = std::move(g);
}

std::string CoarseRounds::SectionFor(uint32_t to, bool converged) {
  Peer& p = peers_[to];
  // Until the peer says it holds them: a value may be replaced by the next before its receiver
  // takes it (runtime::Mailbox), so each one carries them.
  const bool send_w = !p.heard || !p.holds_w;
  const bool send_row = block_row_ && !gave_up_ && (!p.heard || (!p.holds_row && !p.gave_up));
  const bool send_round = problem_ && g_;
  p.sent_w = send_w;
  p.sent_row = send_row;
  uint16_t flags = 0;
  if (gave_up_) flags |= kGaveUp;
  if (converged) flags |= kConverged;
  if (p.has_w) flags |= kHoldsYourW;
  if (p.block_row && p.block_row->rows() == p.size) flags |= kHoldsYourRow;
  if (send_w) flags |= kHasW;
  if (send_row) flags |= kHasRow;
  if (send_round) flags |= kHasRound;
  if (send_round && e_prev_) flags |= kHasPrevious;
  SliceWriter w;
  w.Put<uint16_t>(flags);
  w.Put<uint32_t>(static_cast<uint32_t>(functions()));
  if (send_w) {
    w.Put<uint32_t>(static_cast<uint32_t>(basis_.far_rows.size()));
    for (int row : basis_.far_rows) w.Put<int32_t>(row);
    for (Eigen::Index k = 0; k < basis_.w_far.rows(); ++k) PutRow(w, basis_.w_far, k);
    auto it =
        std::find_if(sends_.begin(), sends_.end(), [to](const auto& s) { return s.first == to; });
    const std::vector<int> none;
    const std::vector<int>& used = it == sends_.end() ? none : it->second;
    w.Put<uint32_t>(static_cast<uint32_t>(used.size()));
    for (int k : used) PutRow(w, basis_.z, k);
  }
  if (send_row) {
    w.Put<uint32_t>(static_cast<uint32_t>(total_));
    for (Eigen::Index i = 0; i < block_row_->rows(); ++i) PutRow(w, *block_row_, i);
  }
  if (send_round) {
    w.Put<uint64_t>(round_);
    w.Put<uint32_t>(static_cast<uint32_t>(total_));
    PutDoubles(w, g_->data(), g_->size());
    if (e_prev_) PutDoubles(w, e_prev_->data(), e_prev_->size());
  }
  return w.Take();
}

}  // namespace aiac::cg
