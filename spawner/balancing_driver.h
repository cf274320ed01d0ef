// Live balancing during a run, apart from the wire (docs/balancing.md): at every wake of the
// run's wait, BalancingDriver feeds the tasks' latest progress reports to LiveBalancing (Lee &
// Cho's checking points on measured figures), runs a checking point when one is due, starts the
// moves of a redistribution in order through the Supervisor (which sends them), and logs each
// checking point. It owns no socket and reads no clock: the run passes the time in.
//
// Also here, for the summary and the plans: the tasks' clusters and the links between them as
// the daemons' link monitors measured them (pure functions of the supervisor's state).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/logging.h"
#include "spawner/live_balancing.h"
#include "spawner/run_settings.h"
#include "spawner/supervisor.h"

namespace aiac::spawner {

// The cluster of each task's daemon now ("" for a daemon the deployment does not know).
std::vector<std::string> TaskClusters(const Supervisor& supervisor);

// The links between (and within) clusters as the daemons' monitors last reported them,
// averaged over the daemons' links from one cluster to another.
std::vector<LinkFigure> MeasuredChannels(const Supervisor& supervisor);

// The tasks' clusters and their channels for the balancer (LiveBalancing::SetClusters): the
// measured figures where there are some, else the platform's (settings.channel), else 1 ms and
// 1 Gbit/s.
ClusterView Clusters(const Supervisor& supervisor, const RunSettings& settings);

class BalancingDriver {
 public:
  // `start`: the run's start, from which the balancer counts its seconds; `setup_seconds`: how
  // long the tasks took to be set up (eq. 11's cost of a move until one is timed); `earlier`:
  // what the spawners that ran the job before this one balanced (a resumed run), counted in
  // stats().
  BalancingDriver(Supervisor& supervisor, const RunSettings& settings, bool items_in_chain,
                  size_t tasks, SteadyTime start, double setup_seconds, std::string job_id,
                  std::string app, Logger log, BalancingStats earlier = {});

  // Feeds the reports, starts the next moves of a redistribution under way, or runs a checking
  // point when one is due. Returns when it wants to be woken next (SteadyTime::max(): when a
  // move ends, which wakes the run through the supervisor).
  SteadyTime Tick(SteadyTime now);
  // The run is over at `now`: the last redistribution's figures are closed.
  void Finish(SteadyTime now) {
    balancing_->Finish(SinceStart(now));
    LogJudged("by the end of the run");
  }
  // The summary's balancing figures, the earlier spawners' included; mode "off" when the tasks
  // were never known to hold items.
  BalancingStats stats() const;
  // Moves completed so far (a task that gave or took items starts its convergence again).
  uint64_t moves() const { return balancing_->stats().moves; }

 private:
  // Starts the moves of the redistribution under way that can start now, in order: each whose
  // two tasks take part in no move under way (DistPM's channels run in parallel); ring and chain
  // moves of a later wave wait for their source's moves of the earlier ones. Moves whose tasks
  // are not both running are dropped. True while moves are under way.
  bool StartMoves(SteadyTime now);
  // One line per redistribution: the speeds, the expected ends (eqs. 10 and 9) and the moves.
  void LogCheckingPoint(const std::vector<balance::MoveOrder>& moves) const;
  void LogPlans() const;
  // What the redistribution the last checking point (or the run's end, `when`) judged gained,
  // against its prediction: one line per redistribution.
  void LogJudged(const std::string& when) const;
  // The ring planner `--migration ring|nearest` asks for (nullopt: another migration).
  std::optional<redistribution::RingPlanner> Ring() const;
  double SinceStart(SteadyTime t) const {
    return std::chrono::duration<double>(t - start_).count();
  }
  SteadyTime AtSecond(double s) const {
    return start_ +
           std::chrono::duration_cast<SteadyTime::duration>(std::chrono::duration<double>(s));
  }

  Supervisor& supervisor_;
  const RunSettings& settings_;
  const bool chain_;
  const size_t tasks_;
  const SteadyTime start_;
  const std::string job_id_, app_;
  Logger log_;
  BalancingStats earlier_;
  std::unique_ptr<LiveBalancing> balancing_;
  std::deque<balance::MoveOrder> queue_;  // the moves of the redistribution under way
  std::optional<SteadyTime> redistribution_since_;
  bool announced_ = false;
};

}  // namespace aiac::spawner
