// Lee & Cho's dynamic load balancing (lee-cho-load-balancing.md, section 4.2) on figures measured
// while a job runs (docs/balancing.md): at each checking point, the remaining work of every task
// and the speed of its daemon give each one's expected completion time (eq. 10); the remaining
// work is split again in proportion to the speeds (eq. 9) only when the expected gain, net of the
// measured cost of moving, reaches the threshold (eq. 11); the next checking point comes before
// the first daemon is likely to run out of work (eq. 12).
//
// D_P ("dp") uses the means and the standard deviations of each host's run-queue length; D_M
// ("dm") the means only. The speeds are measured on the target job itself: a task that did w
// work units in t seconds on a host whose run queue averaged N jobs (the task among them), with
// standard deviation sigma_n, runs at w / t = mu (1 + sigma_n^2 / N^2) / N (eq. 6), so its
// workstation's service rate is taken as mu = N (w / t) / (1 + sigma_n^2 / N^2): each expected
// time (eq. 10) is then the time the measured rate gives, in both modes, and the modes differ
// in when they check again (eq. 12, sigma_t from sigma_n for D_P, none for D_M).
//
// Pure: a function of its inputs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "balance/lee_cho.h"
#include "core/status.h"

namespace aiac::balance {

enum class BalanceMode { kOff, kProposed, kMeans };  // off, D_P, D_M
// "off", "dp", "dm".
Result<BalanceMode> ParseBalanceMode(const std::string& text);
const char* BalanceModeName(BalanceMode mode);

// What the monitors measured for one task over the last window.
struct TaskFigures {
  double work_rate =
      0;  // work units per second (app::Task::WorkDone over time); 0: not measured yet
  double remaining = 0;  // work units left (app::Task::RemainingWork)
  double n_mean = 1;     // N: mean run-queue length of its host, the task counted (>= 1)
  double n_std = 0;      // sigma_n
};

struct BalancerOptions {
  double h = 1;              // eq. (12): checking margin, in standard deviations of T*. Default 1.
  double threshold_s = 0.2;  // eq. (11): least net gain worth a redistribution. Default 0.2 s.
  double min_check_s = 0.5;  // the next checking point, clamped to [min, max]. Default 0.5 s.
  double max_check_s = 5;    // Default 5 s.
  // Moves smaller than this share of all the remaining work are not worth a message. Default 1 %.
  double min_move_share = 0.01;
  // The work lies along the task order (app::JobPlan::items_in_chain): moves go only between
  // tasks i and i + 1 (ChainMoves), else from any task to any other (PlanMoves).
  bool chain = false;
};

// The measured cost of moving work, from the moves done so far (eq. 11's overhead).
struct MoveCost {
  // Fixed: pause, messages, checkpoints, between tasks of the median speed. Default until
  // measured.
  double seconds_per_move = 0.05;
  double seconds_per_unit = 0;  // per work unit moved
  // seconds_per_move was timed on moves (and so grows with MoveSlowness); false: a guess (the
  // default, or the set-up time), which grows only with what the tasks' speeds lost since
  // `guess_rates` (GuessSlowness).
  bool timed = false;
  // The tasks' speeds when the guess held (the first ones measured, right after the set-up it
  // was timed on); empty: the guess is taken as it is.
  std::vector<double> guess_rates{};
};

// How much longer than between tasks of the median speed a move between tasks `from` and `to`
// takes (at least 1): the median of `rates` over the slower of the two. Its two ends export,
// import, rebuild and checkpoint at their hosts' speed: a move out of a task whose host runs at
// a quarter of the others' speed took 2 s where the others' took 0.5 s.
double MoveSlowness(const std::vector<double>& rates, size_t from, size_t to);

// How much longer than the set-up-time guess a move between tasks `from` and `to` takes: its
// MoveSlowness now over the one at `guess_rates` (at least 1; 1 without them). The set-up time
// already holds a host that was slow from the start (multiplied by its whole slowness, it kept a
// 4x slowed CG task from giving any row away in 20 s), not one slowed since (a quarter-speed
// node's first move took 2.6 s where the guess said 0.92 s).
double GuessSlowness(const std::vector<double>& rates, const std::vector<double>& guess_rates,
                     size_t from, size_t to);

// How long a move of `work` units between tasks `from` and `to` is expected to take at the
// tasks' speeds `rates`: cost.seconds_per_move times its MoveSlowness once moves were timed, else
// its GuessSlowness, plus cost.seconds_per_unit per unit.
double MoveSeconds(const MoveCost& cost, const std::vector<double>& rates, size_t from, size_t to,
                   double work);

struct MoveOrder {
  size_t from = 0, to = 0;
  double work = 0;  // work units to move
  // Moves on a ring (redistribution/ring_moves.h) and along a chain (ChainMoves) run in waves:
  // this one once its source's moves of the earlier waves (in and out) have ended. 0 for the
  // others.
  int wave = 0;
};

struct BalanceDecision {
  bool measured = false;         // every task had a speed: the figures below mean something
  DynamicStep step;              // eqs. (10)-(12) as computed, with the overhead below
  double overhead = 0;           // expected seconds the moves cost
  std::vector<MoveOrder> moves;  // empty unless step.redistribute
  double next_check_s = 0;       // eq. (12), clamped
};

// One checking point. Requires figures for every task (at least 2) and mode != kOff.
BalanceDecision Decide(BalanceMode mode, const std::vector<TaskFigures>& tasks,
                       const MoveCost& cost, const BalancerOptions& options = {});

// Moves that take `remaining` to `target` (same totals): the largest surplus to the largest
// deficit, repeatedly, so each move settles one task and there are at most tasks - 1 (the fewest
// in general is a subset-sum problem). Stops at the first move under `min_work`.
std::vector<MoveOrder> PlanMoves(const std::vector<double>& remaining,
                                 const std::vector<double>& target, double min_work);

// Moves that take `remaining` to `target` (same totals) along the chain 0 - 1 - ... - n-1: the
// ring of ring-redistribution.md whose closing link is unusable. That fixes System 2's
// circulation: the net flow over link i -> i+1 is the surplus of tasks 0..i (conservation,
// f_i - f_{i-1} = delta_i, with f_{n-1} = 0), so each link carries one move, either way. Links
// whose flow is under `min_work` are left out. In waves (MoveOrder::wave, ascending) of moves of
// different tasks, so that every task's load stays at or above min(before, after) throughout
// when each move starts once its source's moves of the earlier waves have ended (or when the
// moves run one at a time in this order): a task gives first when it can (a slowed task sheds
// work before it passes any on), else only after everything it is to receive has come (on a
// chain the flows form no cycle).
std::vector<MoveOrder> ChainMoves(const std::vector<double>& remaining,
                                  const std::vector<double>& target, double min_work);

}  // namespace aiac::balance
