#include "spawner/live_balancing.h"

#include <algorithm>
#include <cmath>

#include "spawner/spawner_metrics.h"

namespace aiac::spawner {
namespace {

// The latest of the tasks' ends (0 for none): when the run is expected to end.
double Latest(const std::vector<double>& ends) {
  return ends.empty() ? 0.0 : *std::max_element(ends.begin(), ends.end());
}

// Per task the items `moves` (work units) amount to: a giver gives the items its work amounts to
// (at most what it holds less `keep`); the takers share them in proportion to the work each is
// to take (largest remainders), whatever their own work per item. Empty: nothing to move.
std::vector<int64_t> SurplusItems(const std::vector<balance::MoveOrder>& moves,
                                  const std::vector<double>& remaining,
                                  const std::vector<int64_t>& items, int64_t keep) {
  const size_t n = items.size();
  std::vector<double> net(n, 0);  // work to give (> 0) or to take (< 0)
  for (const auto& m : moves) {
    net[m.from] += m.work;
    net[m.to] -= m.work;
  }
  std::vector<int64_t> surplus(n, 0);
  int64_t given = 0;
  double taken = 0;
  for (size_t t = 0; t < n; ++t) {
    if (net[t] > 0 && remaining[t] > 0 && items[t] > keep) {
      surplus[t] = std::min<int64_t>(
          items[t] - keep, std::llround(net[t] * static_cast<double>(items[t]) / remaining[t]));
      given += surplus[t];
    } else if (net[t] < 0) {
      taken -= net[t];
    }
  }
  if (given == 0 || !(taken > 0)) return {};
  std::vector<std::pair<double, size_t>> fractions;
  int64_t dealt = 0;
  for (size_t t = 0; t < n; ++t) {
    if (!(net[t] < 0)) continue;
    const double share = static_cast<double>(given) * -net[t] / taken;
    const auto whole = static_cast<int64_t>(std::floor(share));
    surplus[t] = -whole;
    dealt += whole;
    fractions.emplace_back(share - static_cast<double>(whole), t);
  }
  std::stable_sort(fractions.begin(), fractions.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; dealt < given && k < fractions.size(); ++k, ++dealt)
    --surplus[fractions[k].second];
  return surplus;
}

}  // namespace

LiveBalancing::LiveBalancing(balance::BalanceMode mode, size_t tasks,
                             balance::BalancerOptions options, double window_s)
    : mode_(mode), options_(options), window_s_(window_s), tasks_(tasks) {
  stats_.mode = balance::BalanceModeName(mode);
}

bool LiveBalancing::known() const {
  return !tasks_.empty() && std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) {
    return t.reported && t.last.iteration > 0;
  });
}

bool LiveBalancing::movable() const {
  return !tasks_.empty() && std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) {
    return t.reported && t.last.items >= 0;
  });
}

void LiveBalancing::OnReport(size_t task, const TaskReport& r) {
  if (task >= tasks_.size()) return;
  Task& t = tasks_[task];
  if (t.reported && r.at_s <= t.last.at_s) return;
  // A task restored on a new daemon counts its work (or its time computing) from 0 again: its old
  // samples say nothing.
  if (t.reported && (r.work_done < t.last.work_done || r.busy_s < t.last.busy_s)) t.samples.clear();
  if (!t.reported || r.items != t.last.items) t.load_from_s = r.at_s;
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
  if (!t.samples.empty() && r.work_done == t.samples.back().work_done) return;
  t.samples.push_back({r.at_s, r.busy_s, r.work_done});
  while (t.samples.size() > 2 && r.at_s - t.samples[1].at_s >= window_s_) t.samples.pop_front();
  if (t.samples.size() < 2) return;
  // The work done per second computed from sample `from` to the last; 0: not measurable.
  auto rate_from = [&](const Task::Sample& first) {
    const Task::Sample& last = t.samples.back();
    const double span = last.at_s - first.at_s;
    const double done = last.work_done - first.work_done;
    // Over the time it computed, when the task says: waiting for its neighbours' values is not
    // its host's slowness.
    const double computing =
        first.busy_s >= 0 && last.busy_s >= 0 ? last.busy_s - first.busy_s : span;
    return span >= std::min(kLeastSpan, window_s_) && done > 0 && computing > 0 ? done / computing
                                                                                : 0.0;
  };
  const double whole = rate_from(t.samples.front());
  // The last kRecentSpan on its own: a host whose speed stepped (its owner came back) is
  // measured at its new speed from then on, not as a blend over the window.
  auto recent = std::find_if(t.samples.rbegin(), t.samples.rend(),
                             [&](const Task::Sample& s) { return r.at_s - s.at_s >= kRecentSpan; });
  const double lately = recent != t.samples.rend() ? rate_from(*recent) : 0.0;
  if (whole > 0 && lately > 0 && std::abs(lately / whole - 1) > kSpeedChange) {
    // The step lies within the last kRecentSpan, before this report: measured from here on, the
    // speed is the new one alone (meanwhile, the last span's). A checking point before a span
    // of that would weigh a blend: it waits, a span at most.
    t.rate_from_s = recent->at_s;
    t.samples.erase(t.samples.begin(), std::prev(t.samples.end()));
    t.rate = lately;
    next_check_ = std::min(scheduled_ + kRecentSpan,
                           std::max(r.at_s + kRecentSpan, last_check_ + options_.min_check_s));
    return;
  }
  if (whole > 0) {
    t.rate = whole;
    t.rate_from_s = t.samples.front().at_s;
  }
  // A speed that drifted from the one the last checking point weighed brings the next one
  // forward, but not before the window spans kRecentSpan: right after a step (above) the speed
  // is measured again from the step on, over as little as kLeastSpan at first (a slowed CG
  // task's single iteration), and the step's wait for a span would be undone by the drift.
  if (t.checked_rate > 0 && std::abs(t.rate / t.checked_rate - 1) > kSpeedChange) {
    next_check_ = std::min(next_check_, std::max({r.at_s, last_check_ + options_.min_check_s,
                                                  t.samples.front().at_s + kRecentSpan}));
  }
}

std::vector<double> LiveBalancing::Remaining() const {
  std::vector<double> remaining;
  for (const Task& t : tasks_) remaining.push_back(std::max(0.0, t.last.remaining));
  if (!options_.chain) return remaining;
  // The horizon is that of the slowest task still iterating: one locally converged waits for
  // new input, and its horizon (the few iterations of its local test) is not the run's while
  // another has iterations to go. (Right after a redistribution the quarter-speed task that had
  // given its rows away converged at once, the horizon fell to its 3 iterations, the end expected
  // stayed at 0.94 s through 6 s of the others' iterations, and the moves were judged to have
  // gained 4 times what they were predicted to.) When every task is converged, all count.
  double horizon = 0, slowest = 0;  // iterations to go, and seconds per iteration, of the slowest
  for (const bool iterating : {true, false}) {
    for (const Task& t : tasks_) {
      if (!(t.rate > 0) || t.last.items <= 0 || (iterating && t.last.converged)) continue;
      const double items = static_cast<double>(t.last.items);
      if (const double per_iteration = items / t.rate; per_iteration > slowest) {
        slowest = per_iteration;
        horizon = std::max(0.0, t.last.remaining) / items;
      }
    }
    if (slowest > 0) break;
  }
  for (size_t i = 0; i < tasks_.size(); ++i)
    remaining[i] = horizon * static_cast<double>(std::max<int64_t>(0, tasks_[i].last.items));
  return remaining;
}

double LiveBalancing::ExpectedEnd() const { return ExpectedEndOf(Remaining()); }

std::vector<double> LiveBalancing::Rates() const {
  std::vector<double> rates;
  for (const Task& t : tasks_) rates.push_back(t.rate);
  return rates;
}

double LiveBalancing::MoveSeconds(const balance::MoveOrder& m) const {
  return balance::MoveSeconds(cost_, Rates(), m.from, m.to, m.work);
}

std::vector<double> LiveBalancing::EndsOf(const std::vector<double>& remaining) const {
  return EndsOf(remaining, Rates());
}

std::vector<double> LiveBalancing::EndsOf(const std::vector<double>& remaining,
                                          const std::vector<double>& rates) {
  std::vector<double> ends;
  for (size_t i = 0; i < rates.size() && i < remaining.size(); ++i) {
    ends.push_back(rates[i] > 0 && remaining[i] > 0 ? remaining[i] / rates[i] : 0.0);
  }
  return ends;
}

double LiveBalancing::ExpectedEndOf(const std::vector<double>& remaining) const {
  return Latest(EndsOf(remaining));
}

void LiveBalancing::Judge(double now_s, double expected_now) {
  if (!observing_) return;
  // Had nothing moved, each task would have the work it had at the decision less what it would
  // have done since: computing all along (the moves held none of it), at the speed it computed at
  // meanwhile. That speed is measured (its work done over its time computing), so a host whose
  // speed stepped in between is weighed at each speed for the time it ran at it: counting the
  // whole interval at the new speed charged a cut that came after the decision to the moves (a
  // move predicted to gain 0.39 s "gained" 10.97 s). And the time it did not compute is not taken
  // from what it would have done: a slow CG task that gave most of its rows away was often
  // locally converged soon after, and waited; counting only the work it then did left it, had
  // nothing moved, nearly all its work to go at the checking point (a redistribution predicted
  // to gain 7.45 s "gained" 58.72 s, more than the unbalanced run lasted).
  //
  // Its remainder is weighed at its speed now, unless its items changed since the decision. A
  // speed measured across the change or within a second after it (kRecentSpan: the move's
  // export, the block rebuilt, the checkpoints that follow on its node) says nothing of the load
  // it had: it is weighed at its speed since the decision (a quarter-speed CG task judged as its
  // move of 93,509 rows ended measured 3.15e6 units/s against 8.88e6 since the decision: a move
  // predicted to gain 5.05 s "gained" 23.98 s). And one that gave work away (net) is weighed at
  // no more than that: on a node held to a CPU quota, a small load runs at a full core's pace
  // between its waits (its bursts fit in the quota's periods), which the load it had would not
  // (a quarter-speed CG task that gave its rows away measured 5.17e7 units/s against 7.89e6
  // since the decision and the others' 3.5e7: a move predicted to gain 6.98 s "gained" -2.89 s).
  // A host that slowed down since, measured later on the new load, counts as for any task.
  const double since = now_s - observed_from_;
  std::vector<double> unmoved = decided_remaining_, speeds, weighed = Rates();
  for (size_t i = 0; i < tasks_.size() && i < unmoved.size(); ++i) {
    const Task& t = tasks_[i];
    const double done = t.last.work_done - decided_done_[i];
    const double held = std::min(paused_[i], since);
    // Its time computing: as reported, or the interval less its moves when it does not say.
    const double busy = t.last.busy_s >= 0 && decided_busy_[i] >= 0
                            ? t.last.busy_s - decided_busy_[i]
                            : since - held;
    // A task restored meanwhile counts from 0 again, and one that computed less than a span
    // gives no speed to trust (as in OnReport): its speed now, then.
    const double speed =
        done > 0 && busy >= std::min(kLeastSpan, since) && busy > 0 ? done / busy : t.rate;
    unmoved[i] = std::max(0.0, unmoved[i] - speed * since);
    speeds.push_back(speed);
    if (t.load_from_s > observed_from_ && speed > 0) {
      if (t.rate_from_s < t.load_from_s + kRecentSpan) {
        weighed[i] = speed;
      } else if (net_items_[i] < 0) {
        weighed[i] = std::min(weighed[i], speed);
      }
    }
  }
  std::vector<double> ends = EndsOf(unmoved, weighed);
  const double had_nothing_moved = Latest(ends);
  const double observed = had_nothing_moved - expected_now;
  stats_.observed_gain += observed;
  judged_ =
      Judged{stats_.redistributions, predicted_, observed, std::move(speeds), std::move(ends)};
  observing_ = false;
}

std::vector<balance::MoveOrder> LiveBalancing::Check(double now_s) {
  std::vector<balance::MoveOrder> none;
  if (mode_ == balance::BalanceMode::kOff || tasks_.size() < 2 || !movable()) return none;
  const std::vector<double> remaining = Remaining();
  std::vector<balance::TaskFigures> figures;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    figures.push_back({tasks_[i].rate, remaining[i], tasks_[i].last.n_mean, tasks_[i].last.n_std});
  }
  last_ = balance::Decide(mode_, figures, cost_, options_);
  const balance::BalanceDecision& d = last_;
  // The speeds the set-up-time guess of a move's cost held at: the first all measured (the
  // decision that measured them weighed the guess as it is, as these speeds give).
  if (d.measured && !cost_.timed && cost_.guess_rates.empty()) {
    for (const balance::TaskFigures& f : figures) cost_.guess_rates.push_back(f.work_rate);
  }
  // Until every speed is measured, look again at the next reports: a short run gets its first
  // checking point as soon as it can.
  next_check_ = now_s + (d.measured ? d.next_check_s : std::min(kLeastSpan, options_.min_check_s));
  scheduled_ = next_check_;
  if (!d.measured) return none;
  ++stats_.checks;
  last_check_ = now_s;
  for (Task& t : tasks_) t.checked_rate = t.rate;
  judged_.reset();
  Judge(now_s, ExpectedEnd());
  channels_.clear();
  ring_plan_.reset();
  chain_plan_.reset();
  std::vector<balance::MoveOrder> moves = options_.chain ? InSourceUnits(d.moves, remaining)
                                          : clusters_ && clusters_->ring
                                              ? ByRing(d.moves, remaining)
                                              : ByCluster(d.moves, remaining);
  if (moves.empty()) return none;
  if (options_.chain) chain_plan_ = PlanChain(moves);
  if (ring_plan_) planned_per_byte_ += ring_plan_->planned_time / bytes_per_item_;
  if (chain_plan_) planned_per_byte_ += chain_plan_->planned_time / bytes_per_item_;
  ++stats_.redistributions;
  stats_.predicted_gain += d.step.gain;
  predicted_ = d.step.gain;
  observing_ = true;
  observed_from_ = now_s;
  decided_remaining_ = remaining;
  decided_done_.clear();
  decided_busy_.clear();
  for (const Task& t : tasks_) {
    decided_done_.push_back(t.last.work_done);
    decided_busy_.push_back(t.last.busy_s);
  }
  paused_.assign(tasks_.size(), 0.0);
  net_items_.assign(tasks_.size(), 0);
  return moves;
}

std::vector<balance::MoveOrder> LiveBalancing::InSourceUnits(
    const std::vector<balance::MoveOrder>& moves, const std::vector<double>& remaining) const {
  std::vector<balance::MoveOrder> out;
  for (balance::MoveOrder m : moves) {
    const TaskReport& from = tasks_[m.from].last;
    if (from.items <= 0 || !(remaining[m.from] > 0) || !(from.remaining > 0)) continue;
    const double items = std::round(m.work * static_cast<double>(from.items) / remaining[m.from]);
    if (items < 1) continue;
    m.work = items * from.remaining / static_cast<double>(from.items);
    out.push_back(m);
  }
  return out;
}

std::vector<balance::MoveOrder> LiveBalancing::ByCluster(
    const std::vector<balance::MoveOrder>& moves, const std::vector<double>& remaining) {
  if (!clusters_ || clusters_->cluster.size() != tasks_.size() || moves.empty()) return moves;
  const std::vector<int>& cluster = clusters_->cluster;
  if (std::all_of(cluster.begin(), cluster.end(), [&](int c) { return c == cluster[0]; }))
    return moves;
  redistribution::ClusterMoveInput in;
  in.cluster = cluster;
  in.items = Items();
  in.surplus = SurplusItems(moves, remaining, in.items, 0);
  if (in.surplus.empty()) return {};
  in.alpha = clusters_->latency;
  in.beta = clusters_->seconds_per_byte;
  for (auto& row : in.beta)
    for (double& b : row) b *= bytes_per_item_;
  auto planned = redistribution::PlanClusterMoves(in, clusters_->planner);
  if (!planned.ok()) return moves;
  channels_ = planned->channels;
  std::vector<balance::MoveOrder> out;
  for (const auto& x : planned->transfers) {
    const double per_item = remaining[x.from] / static_cast<double>(in.items[x.from]);
    out.push_back({x.from, x.to, static_cast<double>(x.items) * per_item});
  }
  return out;
}

std::optional<redistribution::RingMoves> LiveBalancing::PlanChain(
    const std::vector<balance::MoveOrder>& moves) const {
  const size_t n = tasks_.size();
  if (!clusters_ || clusters_->cluster.size() != n || n < 2) return std::nullopt;
  std::vector<double> c_next, c_prev;
  RingLinkSeconds(c_next, c_prev);
  // The chain's links both ways (the ring's closing one is unusable): i -> i + 1, i + 1 -> i.
  double least = c_next[0], most = c_next[0];
  for (size_t i = 0; i + 1 < n; ++i) {
    for (double c : {c_next[i], c_prev[i + 1]}) {
      least = std::min(least, c);
      most = std::max(most, c);
    }
  }
  redistribution::RingMoves plan;
  plan.ring_case = most > 1.01 * least ? "bi-het" : "bi-hom";
  plan.flows.assign(n, 0);
  std::vector<std::vector<redistribution::RingOp>> ops(n);
  std::vector<balance::MoveOrder> in_order = moves;
  std::stable_sort(in_order.begin(), in_order.end(),
                   [](const auto& x, const auto& y) { return x.wave < y.wave; });
  for (const balance::MoveOrder& m : in_order) {
    const TaskReport& from = tasks_[m.from].last;
    if (!(from.remaining > 0) || from.items <= 0) return std::nullopt;
    const auto items = static_cast<int64_t>(
        std::llround(m.work * static_cast<double>(from.items) / from.remaining));
    const bool up = m.to == m.from + 1;
    ops[m.from].push_back({up, items, 0});
    plan.flows[up ? m.from : m.to] += up ? items : -items;
    plan.moves.push_back({m.from, m.to, items, m.wave});
    // Each link must carry its flow: no plan beats the busiest link.
    plan.lower_bound = std::max(
        plan.lower_bound, static_cast<double>(items) * (up ? c_next[m.from] : c_prev[m.from]));
  }
  const redistribution::RingSchedule schedule =
      redistribution::SimulateRing(Items(), c_next, c_prev, /*bidirectional=*/true, ops);
  if (!schedule.complete) return std::nullopt;
  plan.planned_time = schedule.makespan;
  return plan;
}

void LiveBalancing::RingLinkSeconds(std::vector<double>& next, std::vector<double>& prev) const {
  const size_t n = tasks_.size();
  auto per_item = [&](size_t a, size_t b) {
    const auto ca = static_cast<size_t>(clusters_->cluster[a]),
               cb = static_cast<size_t>(clusters_->cluster[b]);
    return std::max(1e-12, clusters_->seconds_per_byte[ca][cb] * bytes_per_item_);
  };
  next.clear();
  prev.clear();
  for (size_t i = 0; i < n; ++i) {
    next.push_back(per_item(i, (i + 1) % n));
    prev.push_back(per_item(i, (i + n - 1) % n));
  }
}

std::vector<int64_t> LiveBalancing::Items() const {
  std::vector<int64_t> items;
  for (const Task& t : tasks_) items.push_back(std::max<int64_t>(0, t.last.items));
  return items;
}

std::vector<balance::MoveOrder> LiveBalancing::ByRing(const std::vector<balance::MoveOrder>& moves,
                                                      const std::vector<double>& remaining) {
  const size_t n = tasks_.size();
  if (!clusters_ || clusters_->cluster.size() != n || moves.empty()) return {};
  redistribution::RingMovesInput in;
  in.items = Items();
  // Every task keeps an item: a ring plan leaves none empty.
  in.surplus = SurplusItems(moves, remaining, in.items, 1);
  if (in.surplus.empty()) return {};
  RingLinkSeconds(in.c_next, in.c_prev);
  auto planned = redistribution::PlanRingMoves(in, *clusters_->ring);
  if (!planned.ok() || planned->moves.empty()) return {};
  std::vector<balance::MoveOrder> out;
  for (const auto& m : planned->moves) {
    // In the source's own work per item as it weighs them now (items it passes on arrive with
    // their own, and it gives items worth about as much).
    const double per_unit =
        remaining[m.from] / static_cast<double>(std::max<int64_t>(1, in.items[m.from]));
    out.push_back({m.from, m.to, static_cast<double>(m.items) * per_unit, m.wave});
  }
  ring_plan_ = std::move(*planned);
  return out;
}

void LiveBalancing::SetMoveCostPrior(double seconds) {
  if (timed_moves_ == 0 && std::isfinite(seconds)) {
    cost_.seconds_per_move = std::max(balance::MoveCost{}.seconds_per_move, seconds);
  }
}

BalancingStats BalancingStats::Plus(const BalancingStats& earlier) const {
  BalancingStats sum = *this;
  sum.checks += earlier.checks;
  sum.redistributions += earlier.redistributions;
  sum.moves += earlier.moves;
  sum.abandoned += earlier.abandoned;
  sum.items_moved += earlier.items_moved;
  sum.items_between_clusters += earlier.items_between_clusters;
  sum.seconds_moving += earlier.seconds_moving;
  sum.planned_seconds += earlier.planned_seconds;
  sum.predicted_gain += earlier.predicted_gain;
  sum.observed_gain += earlier.observed_gain;
  sum.relayed_reports += earlier.relayed_reports;
  return sum;
}

void LiveBalancing::OnMoveDone(const CompletedMove& move, double seconds, bool between_clusters) {
  if (move.abandoned) {
    ++stats_.abandoned;
    return;
  }
  ++stats_.moves;
  stats_.items_moved += move.count;
  if (observing_) {
    // Both ends are counted as held for the whole move (an upper bound: each pauses only to
    // export or to import), so an observed gain errs low.
    for (size_t t : {move.from, move.to})
      if (t < paused_.size()) paused_[t] += seconds;
    if (move.from < net_items_.size() && move.to < net_items_.size()) {
      net_items_[move.from] -= static_cast<int64_t>(move.count);
      net_items_[move.to] += static_cast<int64_t>(move.count);
    }
  }
  SpawnerMetrics::Get().items_moved.Add(move.count);
  if (between_clusters) stats_.items_between_clusters += move.count;
  if (move.count > 0 && move.bytes > 0) {
    ++sized_moves_;
    const double size = static_cast<double>(move.bytes) / static_cast<double>(move.count);
    bytes_per_item_ += (size - bytes_per_item_) / static_cast<double>(sized_moves_);
  }
  // Eq. (11)'s overhead: the mean time a move took (a pause between iterations, four messages,
  // two checkpoints); it hardly depends on the work moved at these sizes, but on the speed of
  // its two tasks' hosts: counted as between tasks of the median speed (MoveSlowness).
  const std::vector<double> rates = Rates();
  const double normal = move.from < rates.size() && move.to < rates.size()
                            ? seconds / balance::MoveSlowness(rates, move.from, move.to)
                            : seconds;
  ++timed_moves_;
  cost_.timed = true;
  cost_.seconds_per_move += (normal - cost_.seconds_per_move) / static_cast<double>(timed_moves_);
}

void LiveBalancing::OnRedistributionDone(double seconds) {
  stats_.seconds_moving += seconds;
  stats_.planned_seconds += planned_per_byte_ * bytes_per_item_;
  planned_per_byte_ = 0;
}

void LiveBalancing::Finish(double now_s) {
  stats_.planned_seconds += planned_per_byte_ * bytes_per_item_;
  planned_per_byte_ = 0;
  judged_.reset();
  Judge(now_s, 0);
}

}  // namespace aiac::spawner
