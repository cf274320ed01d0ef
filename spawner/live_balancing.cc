#include "spawner/live_balancing.h"

#include <algorithm>
#include <cmath>

namespace aiac::spawner {

LiveBalancing::LiveBalancing(balance::BalanceMode mode, size_t tasks, balance::BalancerOptions options,
                             double window_s)
    : mode_(mode), options_(options), window_s_(window_s), tasks_(tasks) {
  stats_.mode = balance::BalanceModeName(mode);
}

bool LiveBalancing::known() const {
  return !tasks_.empty() &&
         std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.reported && t.last.iteration > 0; });
}

bool LiveBalancing::movable() const {
  return !tasks_.empty() &&
         std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.reported && t.last.items >= 0; });
}

void LiveBalancing::OnReport(size_t task, const TaskReport& r) {
  if (task >= tasks_.size()) return;
  Task& t = tasks_[task];
  if (t.reported && r.at_s <= t.last.at_s) return;
  // A task restored on a new daemon counts its work from 0 again: its old samples say nothing.
  if (t.reported && r.work_done < t.last.work_done) t.samples.clear();
  t.reported = true;
  t.last = r;
  // Only while it has work does its pace say how fast its host is: an idle task does nothing.
  if (!(r.remaining > 0)) {
    t.samples.clear();
    return;
  }
  // Only the reports where its work done moved: between two of them lie whole iterations, so an
  // iteration longer than the reports' period is not counted as a pause (and the window keeps
  // two such points however long an iteration takes).
  if (!t.samples.empty() && r.work_done == t.samples.back().second) return;
  t.samples.emplace_back(r.at_s, r.work_done);
  while (t.samples.size() > 2 && r.at_s - t.samples[1].first >= window_s_) t.samples.pop_front();
  if (t.samples.size() < 2) return;
  const double span = t.samples.back().first - t.samples.front().first;
  const double done = t.samples.back().second - t.samples.front().second;
  if (span >= std::min(0.5, window_s_) && done > 0) t.rate = done / span;
}

double LiveBalancing::ExpectedEnd() const {
  double end = 0;
  for (const Task& t : tasks_) {
    if (t.rate > 0 && t.last.remaining > 0) end = std::max(end, t.last.remaining / t.rate);
  }
  return end;
}

std::vector<balance::MoveOrder> LiveBalancing::Check(double now_s) {
  std::vector<balance::MoveOrder> none;
  if (mode_ == balance::BalanceMode::kOff || tasks_.size() < 2 || !movable()) return none;
  std::vector<balance::TaskFigures> figures;
  for (const Task& t : tasks_) figures.push_back({t.rate, std::max(0.0, t.last.remaining), t.last.n_mean, t.last.n_std});
  last_ = balance::Decide(mode_, figures, cost_, options_);
  const balance::BalanceDecision& d = last_;
  next_check_ = now_s + (d.measured ? d.next_check_s : options_.min_check_s);
  if (!d.measured) return none;
  ++stats_.checks;
  if (observing_) {
    // How much sooner the run is now expected to end than it was, had nothing moved.
    stats_.observed_gain += expected_before_ - ((now_s - observed_from_) + ExpectedEnd());
    observing_ = false;
  }
  if (d.moves.empty()) return none;
  ++stats_.redistributions;
  stats_.predicted_gain += d.step.gain;
  observing_ = true;
  observed_from_ = now_s;
  expected_before_ = ExpectedEnd();
  return d.moves;
}

void LiveBalancing::OnMoveDone(const CompletedMove& move, double seconds) {
  if (move.abandoned) {
    ++stats_.abandoned;
    return;
  }
  ++stats_.moves;
  stats_.items_moved += move.count;
  // Eq. (11)'s overhead: the mean time a move took (a pause between iterations, four messages,
  // two checkpoints); it hardly depends on the work moved at these sizes.
  ++timed_moves_;
  cost_.seconds_per_move += (seconds - cost_.seconds_per_move) / static_cast<double>(timed_moves_);
}

void LiveBalancing::OnRedistributionDone(double seconds) { stats_.seconds_moving += seconds; }

void LiveBalancing::Finish(double now_s) {
  if (!observing_) return;
  stats_.observed_gain += expected_before_ - (now_s - observed_from_);
  observing_ = false;
}

}  // namespace aiac::spawner
