// The spawner's live balancing loop (docs/balancing.md), apart from the wire: the figures each
// task's progress reports carry (work done, work remaining, items held, the host's run-queue
// length), each task's speed measured from them over a sliding window, and at each checking
// point Lee & Cho's decision on those figures (balance/live_balancer.h) with the cost of moving
// measured on the moves done so far. It also keeps what the summary's `balancing` reports.
//
// Pure: times are seconds on the caller's clock, passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "balance/live_balancer.h"
#include "redistribution/cluster_moves.h"
#include "redistribution/ring_moves.h"
#include "spawner/move_ledger.h"

namespace aiac::spawner {

// What a task's daemon measured of its link to another daemon (monitor/link_monitor.h).
struct MeasuredLink {
  std::string daemon;
  double alpha = 0;             // seconds
  double seconds_per_byte = 0;  // 0: not measured
  uint32_t samples = 0;
};

// The link between two clusters (the same one twice: within it) as the daemons measured it.
struct LinkFigure {
  std::string from, to;
  double alpha = 0;             // seconds
  double seconds_per_byte = 0;  // 0: not measured
  uint64_t samples = 0;
};

// A task's TaskProgress figures, and when they came.
struct TaskReport {
  double at_s = 0;
  uint64_t iteration = 0;  // the task's figures mean something once it iterated
  double work_done = 0;
  double remaining = -1;
  int64_t items = -1;
  uint64_t moves = 0;
  double n_mean = 1, n_std = 0;
  // Seconds the task spent computing so far (runtime::TaskProfile::compute_s); < 0: not reported,
  // the speed is then measured over wall time.
  double busy_s = -1;
  // The task last said it is locally converged (it waits for new input).
  bool converged = false;
  std::vector<MeasuredLink> links{};
};

// The summary's `balancing`.
struct BalancingStats {
  std::string mode = "off";
  // How moved items travel: "distpm" or "greedy" (daemon to daemon, between clusters through
  // gateways, the channels' amounts by DistPM's LP or greedily), "ring" or "nearest" (daemon to
  // daemon between neighbours on the ring of tasks, redistribution/ring_moves.h), "spawner"
  // (through the spawner).
  std::string migration = "distpm";
  uint32_t checks = 0;           // checking points with every task's speed measured
  uint32_t redistributions = 0;  // checking points that moved work
  uint64_t moves = 0;            // moves completed (items went from one task to another)
  uint64_t abandoned = 0;        // moves given up (the source lost before its export was durable)
  uint64_t items_moved = 0;
  uint64_t items_between_clusters =
      0;                      // of items_moved, those whose two tasks ran in different clusters
  double seconds_moving = 0;  // first export to last import, summed over redistributions
  // "ring" and "nearest": the one-port time of each redistribution's plan on the links' per-item
  // costs (ring_moves.h planned_time) for items of the size its moves measured, summed.
  double planned_seconds = 0;
  // Eq. (11)'s expected gain net of the moves' expected cost, and the gain observed at the next
  // checking point (or at the run's end), summed over the redistributions. Observed: the end
  // expected, had nothing moved, from the work each task had at the decision less the work it
  // did since and what it would have done in the time its moves held it, on the speeds measured
  // now (for a task whose items changed since the decision, its speed since the decision when
  // its speed now spans the change or the second after it, and at most that speed when it gave
  // work away: a smaller load runs faster on a node held to a CPU quota), against the end
  // expected now (0 at the run's end). The moves' cost is in the work the tasks have left now;
  // a host that slowed down or sped up in between changes both ends alike, from when it did (the
  // work done is measured); and the work is weighed as the decision weighed it (a CG task's
  // iterations to go are estimated again at every report, and would not tell what the rows moved
  // would have cost the task that gave them).
  double predicted_gain = 0;
  double observed_gain = 0;
  // DistPM's group coordinators (spawner/gateways.h ReportGroups): the groups whose tasks
  // reported through one, and the members' reports they passed on.
  uint32_t coordinators = 0;
  uint64_t relayed_reports = 0;

  // These counts and sums with `earlier`'s added (a resumed run's and its predecessors'); mode,
  // migration and coordinators stay this one's.
  BalancingStats Plus(const BalancingStats& earlier) const;
};

// Where the tasks run, for moves of unordered items between clusters (DistPM).
struct ClusterView {
  std::vector<int> cluster;  // per task: its daemon's cluster, an index into the tables below
  // Clusters x clusters: a channel's latency in seconds and its seconds per byte (alpha and
  // beta of distpm-workload-migration.md eq. 1, beta per byte; per item with the moves' measured
  // bytes per item).
  std::vector<std::vector<double>> latency, seconds_per_byte;
  redistribution::ChannelPlanner planner = redistribution::ChannelPlanner::kDistPM;
  std::vector<std::string> names;  // per cluster index
  // Clusters x clusters: the figures above come from the daemons' link monitors (else from the
  // platform's links, or the defaults).
  std::vector<std::vector<bool>> measured;
  // Set: the moves of unordered items go between neighbours on the ring of tasks 0..n-1 (task
  // i's link to i + 1 costing the channel between their clusters, per item), planned by
  // ring-redistribution.md (kOptimal) or as the nearest-neighbour shuffle (kNearest), whether
  // the tasks share one cluster or not.
  std::optional<redistribution::RingPlanner> ring;
};

class LiveBalancing {
 public:
  // The least span of reports a speed is measured over: one report period (250 ms), with whole
  // iterations in between (reports where the work done moved).
  static constexpr double kLeastSpan = 0.25;
  // A task whose speed moved by more than this share from the one the last checking point
  // weighed brings the next one forward (to at least BalancerOptions::min_check_s after it).
  // Eq. (12) times checks for loads that vary around steady means, as the paper's do; a host
  // whose owner comes back is a step, and waiting up to max_check_s for it left a quarter-speed
  // task holding a full share of the work for 5 s more.
  static constexpr double kSpeedChange = 0.3;
  // A speed measured over the last kRecentSpan that differs by more than kSpeedChange from the
  // window's replaces it for now, and the window starts again at that report (the step lies
  // before it); the next checking point waits until the window spans kRecentSpan again.
  static constexpr double kRecentSpan = 1.0;

  // `window_s`: the span speeds are measured over (at least the last two reports where the work
  // done moved). Default 3 s.
  LiveBalancing(balance::BalanceMode mode, size_t tasks, balance::BalancerOptions options = {},
                double window_s = 3);

  balance::BalanceMode mode() const { return mode_; }
  // Every task has reported since it iterated, and every one holds movable items
  // (app::Task::ItemCount >= 0).
  bool movable() const;
  // Every task has reported since it iterated: movable() is the app's answer.
  bool known() const;
  // A progress report of task `task` (repeated reports are ignored).
  void OnReport(size_t task, const TaskReport& report);
  // When the next checking point is due (kSpeedChange may bring it forward).
  double next_check_s() const { return next_check_; }
  // A checking point at `now_s`: the moves to make (empty: none). Only with mode != off.
  std::vector<balance::MoveOrder> Check(double now_s);
  // Where the tasks run now. With tasks in more than one cluster, the moves of unordered items
  // (not options.chain) are planned cluster to cluster: the work each task is to give or take
  // (eq. 9's targets) in items, the clusters' net amounts over the channels by `view.planner`,
  // then task to task (redistribution/cluster_moves.h). nullopt: task to task only.
  void SetClusters(std::optional<ClusterView> view) { clusters_ = std::move(view); }
  // Told in the summary (BalancingStats::migration).
  void SetMigration(std::string migration) { stats_.migration = std::move(migration); }
  // Eq. (11)'s cost of a move until one is timed (OnMoveDone): the seconds the tasks took to be
  // set up (their data sent, their blocks built), which a move repeats on a smaller scale at its
  // two ends; never below MoveCost's default. A fixed guess of 0.05 s let a 1,000,000-row CG job
  // whose set-up took 1.8 s move rows for a predicted 0.4 s gain; the two moves took 2.4 s.
  // A move of a task whose host slowed since the first speeds were measured costs as much more
  // (balance::GuessSlowness).
  void SetMoveCostPrior(double seconds);
  // A move ended after `seconds`; counted, and its time becomes the measured cost of a move.
  // `between_clusters`: its two tasks ran in different clusters.
  void OnMoveDone(const CompletedMove& move, double seconds, bool between_clusters = false);
  // The inter-cluster channels of the last checking point's plan (empty: none, or task to task).
  const std::vector<redistribution::Flow>& channels() const { return channels_; }
  // The encoded size of an item as the moves so far measured it (a guess of 64 bytes until then).
  double bytes_per_item() const { return bytes_per_item_; }
  // The last checking point's plan on the ring (ClusterView::ring), if it moved anything.
  const std::optional<redistribution::RingMoves>& ring_plan() const { return ring_plan_; }
  // The last checking point's moves along the chain (options.chain), when the tasks' clusters
  // are known (SetClusters): ring-redistribution.md's case on the ring of tasks whose closing
  // link is unusable, from the links' measured costs ("bi-hom", or "bi-het" when they differ by
  // more than 1 %; a chain moves both ways), its net flows, and the one-port replay's time of
  // its moves over those links (ring_simulator.h) for items of bytes_per_item(), with each link's
  // flow x cost as the bound. Its moves are ChainMoves' waves, as items.
  const std::optional<redistribution::RingMoves>& chain_plan() const { return chain_plan_; }
  // The moves of the last checking point are all done (`seconds` after it).
  void OnRedistributionDone(double seconds);
  // The run converged at `now_s`: a redistribution not yet observed is judged against it.
  void Finish(double now_s);
  const BalancingStats& stats() const { return stats_; }
  // The last checking point's decision (eqs. 10-12).
  const balance::BalanceDecision& last_decision() const { return last_; }
  // The redistribution the last checking point judged, if it judged one: its number, and its
  // predicted and observed gains (BalancingStats).
  struct Judged {
    uint32_t redistribution = 0;
    double predicted = 0, observed = 0;
    // Per task: the speed it computed at since the decision (work units a second), and its end
    // had nothing moved (seconds from the judgment), whose largest the observed gain rests on.
    std::vector<double> speeds_since{}, unmoved_ends{};
  };
  const std::optional<Judged>& last_judged() const { return judged_; }
  // Task `task`'s measured speed in work units per second (0: not measured yet).
  double rate(size_t task) const { return tasks_[task].rate; }
  // The expected end from the latest figures, no move made: max_i remaining_i / rate_i (eq. 10).
  double ExpectedEnd() const;
  // How long move `m` is expected to take at today's speeds (balance::MoveSeconds).
  double MoveSeconds(const balance::MoveOrder& m) const;
  // Whether move `m`, of a later wave of a redistribution under way, can still pay: not once
  // every task is locally converged (`every_task_converged`, as the supervisor knows it now: the
  // confirmation rounds have begun, and a move would only unsettle them), nor when the run is
  // expected to end before the move would. Along a chain the slow task's own move often ended
  // with the run about to end, and the next waves' moves (0.9 to 2.3 s each) held its end by up
  // to 3 s.
  bool StillPays(const balance::MoveOrder& m, bool every_task_converged) const {
    return !every_task_converged && ExpectedEnd() > MoveSeconds(m);
  }

 private:
  struct Task {
    bool reported = false;
    TaskReport last;
    struct Sample {
      double at_s, busy_s, work_done;
    };
    std::deque<Sample> samples;  // where its work done moved, while it had work
    double rate = 0;
    double rate_from_s = 0;   // the start of the span `rate` was measured over
    double load_from_s = 0;   // its first report with the items it holds now
    double checked_rate = 0;  // its rate at the last checking point with every speed measured
  };
  // Each task's remaining work as the balancer weighs it. Work along a chain
  // (options.chain: app::JobPlan::items_in_chain) is items x iterations still to go, and the
  // run ends when the task whose iterations take longest has done its: its horizon (remaining /
  // items) is every task's (of those not locally converged, unless all are). Asynchronous tasks
  // would not do: a faster task iterates more on the same inputs, so it expects more iterations and
  // looks no sooner done than the slow one.
  std::vector<double> Remaining() const;
  // Chain moves in the weighed units (Remaining) as whole items, each in its source's own work
  // units (the unit app::Task::ExportItems takes); moves of less than an item are left out.
  std::vector<balance::MoveOrder> InSourceUnits(const std::vector<balance::MoveOrder>& moves,
                                                const std::vector<double>& remaining) const;
  // Task-to-task `moves` (work units) planned again cluster to cluster (SetClusters), in the
  // sources' work units; `moves` unchanged when the tasks share one cluster or the plan fails.
  std::vector<balance::MoveOrder> ByCluster(const std::vector<balance::MoveOrder>& moves,
                                            const std::vector<double>& remaining);
  // Task-to-task `moves` planned again between neighbours on the ring (ClusterView::ring), in
  // the sources' work units and in waves; none when the plan fails (a task holding no item).
  std::vector<balance::MoveOrder> ByRing(const std::vector<balance::MoveOrder>& moves,
                                         const std::vector<double>& remaining);
  // chain_plan() for chain `moves` in the sources' work units (InSourceUnits); nullopt without
  // clusters or when the replay cannot run them.
  std::optional<redistribution::RingMoves> PlanChain(
      const std::vector<balance::MoveOrder>& moves) const;
  // The ring paper's model (section 2) of the links between the tasks' daemons around the ring
  // 0..n-1: a time per item, the channel's seconds per byte times the items' measured size (its
  // latency left out, each link carrying one move), from task i to i + 1 (`next`) and to i - 1
  // (`prev`), mod n. Needs clusters_.
  void RingLinkSeconds(std::vector<double>& next, std::vector<double>& prev) const;
  // The items each task holds (never below 0).
  std::vector<int64_t> Items() const;
  // The same for `remaining` (as Remaining() weighs it) on the speeds measured now.
  double ExpectedEndOf(const std::vector<double>& remaining) const;
  // Each task's end for `remaining`: remaining_i / rate_i, on the speeds measured now or on
  // `rates` (0 without a speed or work).
  std::vector<double> EndsOf(const std::vector<double>& remaining) const;
  static std::vector<double> EndsOf(const std::vector<double>& remaining,
                                    const std::vector<double>& rates);
  // The tasks' measured speeds, in task order.
  std::vector<double> Rates() const;
  // BalancingStats::observed_gain of the redistribution under observation, at `now_s`, with
  // `expected_now` the end expected now.
  void Judge(double now_s, double expected_now);

  balance::BalanceMode mode_;
  balance::BalancerOptions options_;
  double window_s_;
  std::vector<Task> tasks_;
  balance::MoveCost cost_;
  uint64_t timed_moves_ = 0;
  double next_check_ = 0;
  double scheduled_ = 0;      // when the last checking point scheduled the next one
  double last_check_ = 0;     // when the last checking point with every speed measured was
  bool observing_ = false;    // a redistribution whose gain is not observed yet
  double observed_from_ = 0;  // its time
  double predicted_ = 0;      // its predicted gain
  std::vector<double> decided_remaining_;  // Remaining() then
  std::vector<double> decided_done_;       // each task's work done then
  std::vector<double> decided_busy_;       // and its seconds computing (busy_s) then
  std::vector<double> paused_;             // seconds of moves each task took part in since
  std::vector<int64_t> net_items_;         // and the items it received less those it gave
  std::optional<Judged> judged_;
  BalancingStats stats_;
  balance::BalanceDecision last_;
  std::optional<ClusterView> clusters_;
  std::vector<redistribution::Flow> channels_;
  std::optional<redistribution::RingMoves> ring_plan_;
  std::optional<redistribution::RingMoves> chain_plan_;
  // The ring (or chain) plan under way: its planned time per byte of an item (the time scales with
  // the size; BalancingStats::planned_seconds takes it at the size its moves measured).
  double planned_per_byte_ = 0;
  // The encoded size of an item, measured on the moves done (a guess until the first).
  double bytes_per_item_ = 64;
  uint64_t sized_moves_ = 0;
};

}  // namespace aiac::spawner
