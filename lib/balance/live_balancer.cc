#include "balance/live_balancer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace aiac::balance {

Result<BalanceMode> ParseBalanceMode(const std::string& text) {
  if (text == "off") return BalanceMode::kOff;
  if (text == "dp") return BalanceMode::kProposed;
  if (text == "dm") return BalanceMode::kMeans;
  return InvalidArgument("--balance must be dp, dm or off, not '" + text + "'");
}

const char* BalanceModeName(BalanceMode mode) {
  switch (mode) {
    case BalanceMode::kOff:
      return "off";
    case BalanceMode::kProposed:
      return "dp";
    case BalanceMode::kMeans:
      return "dm";
  }
  return "?";
}

std::vector<MoveOrder> PlanMoves(const std::vector<double>& remaining,
                                 const std::vector<double>& target, double min_work) {
  AIAC_CHECK(remaining.size() == target.size());
  std::vector<double> surplus(remaining.size());
  for (size_t i = 0; i < remaining.size(); ++i) surplus[i] = remaining[i] - target[i];
  std::vector<MoveOrder> moves;
  // Each move settles the largest surplus or the largest deficit, so there are at most n - 1.
  for (size_t round = 0; round + 1 < remaining.size(); ++round) {
    const auto from =
        static_cast<size_t>(std::max_element(surplus.begin(), surplus.end()) - surplus.begin());
    const auto to =
        static_cast<size_t>(std::min_element(surplus.begin(), surplus.end()) - surplus.begin());
    const double work = std::min(surplus[from], -surplus[to]);
    if (!(work > 0) || work < min_work) break;
    moves.push_back({from, to, work});
    surplus[from] -= work;
    surplus[to] += work;
  }
  return moves;
}

std::vector<MoveOrder> ChainMoves(const std::vector<double>& remaining,
                                  const std::vector<double>& target, double min_work) {
  AIAC_CHECK(remaining.size() == target.size());
  std::vector<MoveOrder> pending;
  double flow = 0;  // f_i: the surplus of tasks 0..i crosses link i -> i+1
  for (size_t i = 0; i + 1 < remaining.size(); ++i) {
    flow += remaining[i] - target[i];
    if (std::abs(flow) < min_work || !(std::abs(flow) > 0)) continue;
    pending.push_back(flow > 0 ? MoveOrder{i, i + 1, flow} : MoveOrder{i + 1, i, -flow});
  }
  // In waves of moves of different tasks, each wave from the loads the earlier waves leave: the
  // moves whose source can give and keep min(before, after), in link order, so that a slow task
  // sheds work before it takes any on; when there is none, one whose source has received all it
  // is to receive (on a chain the flows form no cycle, so there is one). A move's load changes
  // only with its own tasks' moves, so any order within a wave, or one wave after the other,
  // keeps every load at or above min(before, after).
  std::vector<double> load = remaining;
  std::vector<MoveOrder> moves;
  for (int wave = 0; !pending.empty(); ++wave) {
    std::vector<bool> taken(remaining.size(), false);
    const size_t first = moves.size();
    for (auto m = pending.begin(); m != pending.end();) {
      if (!taken[m->from] && !taken[m->to] &&
          load[m->from] - m->work >= std::min(remaining[m->from], target[m->from])) {
        taken[m->from] = taken[m->to] = true;
        moves.push_back(*m);
        m = pending.erase(m);
      } else {
        ++m;
      }
    }
    if (moves.size() == first) {
      auto ready = std::find_if(pending.begin(), pending.end(), [&](const MoveOrder& m) {
        return std::none_of(pending.begin(), pending.end(),
                            [&](const MoveOrder& in) { return in.to == m.from; });
      });
      AIAC_CHECK(ready != pending.end());
      moves.push_back(*ready);
      pending.erase(ready);
    }
    for (size_t k = first; k < moves.size(); ++k) {
      moves[k].wave = wave;
      load[moves[k].from] -= moves[k].work;
      load[moves[k].to] += moves[k].work;
    }
  }
  return moves;
}

double MoveSlowness(const std::vector<double>& rates, size_t from, size_t to) {
  AIAC_CHECK(from < rates.size() && to < rates.size());
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const double slower = std::min(rates[from], rates[to]);
  return slower > 0 && median > slower ? median / slower : 1.0;
}

double GuessSlowness(const std::vector<double>& rates, const std::vector<double>& guess_rates,
                     size_t from, size_t to) {
  AIAC_CHECK(from < rates.size() && to < rates.size());
  if (guess_rates.size() != rates.size()) return 1.0;
  return std::max(1.0, MoveSlowness(rates, from, to) / MoveSlowness(guess_rates, from, to));
}

namespace {

// How many times seconds_per_move a move between `from` and `to` takes (MoveSeconds).
double CostSlowness(const MoveCost& cost, const std::vector<double>& rates, size_t from,
                    size_t to) {
  return cost.timed ? MoveSlowness(rates, from, to)
                    : GuessSlowness(rates, cost.guess_rates, from, to);
}

}  // namespace

double MoveSeconds(const MoveCost& cost, const std::vector<double>& rates, size_t from, size_t to,
                   double work) {
  return cost.seconds_per_move * CostSlowness(cost, rates, from, to) + cost.seconds_per_unit * work;
}

BalanceDecision Decide(BalanceMode mode, const std::vector<TaskFigures>& tasks,
                       const MoveCost& cost, const BalancerOptions& options) {
  AIAC_CHECK(mode != BalanceMode::kOff && tasks.size() >= 2);
  BalanceDecision d;
  d.next_check_s = options.min_check_s;
  std::vector<Workstation> ws;
  std::vector<double> remaining;
  for (const TaskFigures& t : tasks) {
    if (!(t.work_rate > 0) || !std::isfinite(t.work_rate)) return d;  // a speed not measured yet
    const double n = std::max(1.0, t.n_mean);
    const double sigma = mode == BalanceMode::kMeans ? 0.0 : std::max(0.0, t.n_std);
    // mu such that eq. (6), with the mode's sigma_n, gives back the rate just measured:
    // rate = mu (1 + sigma_n^2 / N^2) / N. The measured rate already holds what the run queue's
    // variation did to the task; taking mu = N x rate and then applying the variance factor
    // expected every task on a varying host to run that factor faster than it was measured to
    // (1.25x for N = 2, sigma_n = 1), and predicted gains the runs never saw.
    ws.push_back({n * t.work_rate / (1 + sigma * sigma / (n * n)), n, sigma});
    remaining.push_back(std::max(0.0, t.remaining));
  }
  d.measured = true;
  const double total = std::accumulate(remaining.begin(), remaining.end(), 0.0);
  // Eq. (9) on X_rem: the split the checking point would move to, and what reaching it costs.
  std::vector<MoveOrder> moves;
  if (total > 0) {
    const std::vector<double> target = SplitProposed(ws, total);
    moves = options.chain ? ChainMoves(remaining, target, options.min_move_share * total)
                          : PlanMoves(remaining, target, options.min_move_share * total);
  }
  double moved = 0;
  for (const MoveOrder& m : moves) moved += m.work;
  // Moves of independent items run side by side when their tasks differ (a task takes part in
  // one at a time): the time of the task whose moves take longest. Chain moves run wave after
  // wave (ChainMoves): the sum over the waves of each one's longest move. A move takes
  // seconds_per_move times its MoveSlowness once moves were timed, else its GuessSlowness.
  std::vector<double> rates;
  for (const TaskFigures& t : tasks) rates.push_back(t.work_rate);
  double serial = 0;
  std::map<size_t, double> per_task, per_wave;
  for (const MoveOrder& m : moves) {
    const double slowness = CostSlowness(cost, rates, m.from, m.to);
    if (options.chain) {
      per_wave[static_cast<size_t>(m.wave)] =
          std::max(per_wave[static_cast<size_t>(m.wave)], slowness);
    } else {
      serial = std::max({serial, per_task[m.from] += slowness, per_task[m.to] += slowness});
    }
  }
  for (const auto& [wave, slowness] : per_wave) serial += slowness;
  d.overhead = moves.empty() ? 0 : cost.seconds_per_move * serial + cost.seconds_per_unit * moved;
  d.step =
      CheckingPoint(ws, remaining, options.h, d.overhead, options.threshold_s);  // eqs. (10)-(12)
  if (d.step.redistribute && !moves.empty()) d.moves = moves;
  d.step.redistribute = !d.moves.empty();
  const double t = std::isfinite(d.step.t_check) ? d.step.t_check : options.max_check_s;
  d.next_check_s = std::clamp(t, options.min_check_s, options.max_check_s);
  return d;
}

}  // namespace aiac::balance
