#include "spawner/balancing_driver.h"

#include <algorithm>
#include <map>

#include "spawner/gateways.h"

namespace aiac::spawner {

namespace {

// The cluster of granted daemon `daemon`, or nullopt.
std::optional<std::string> ClusterOf(const Supervisor& supervisor, const std::string& daemon) {
  for (const auto& g : supervisor.deployment().granted()) {
    if (g.id == daemon) return g.cluster;
  }
  return std::nullopt;
}

double MaxOf(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

}  // namespace

std::vector<std::string> TaskClusters(const Supervisor& supervisor) {
  std::vector<std::string> clusters;
  const Deployment& d = supervisor.deployment();
  for (size_t t = 0; t < d.tasks(); ++t) {
    clusters.push_back(ClusterOf(supervisor, d.task(t).daemon).value_or(std::string()));
  }
  return clusters;
}

std::vector<LinkFigure> MeasuredChannels(const Supervisor& supervisor) {
  struct Sum {
    double alpha = 0, per_byte = 0;
    int links = 0, sized = 0;
    uint64_t samples = 0;
  };
  std::map<std::pair<std::string, std::string>, Sum> sums;
  const Deployment& d = supervisor.deployment();
  for (size_t t = 0; t < d.tasks(); ++t) {
    auto r = supervisor.report(t);
    auto from = ClusterOf(supervisor, d.task(t).daemon);
    if (!r || !from) continue;
    for (const MeasuredLink& l : r->first.links) {
      auto to = ClusterOf(supervisor, l.daemon);
      if (!to) continue;
      Sum& s = sums[{*from, *to}];
      s.alpha += l.alpha;
      ++s.links;
      s.samples += l.samples;
      if (l.seconds_per_byte > 0) {
        s.per_byte += l.seconds_per_byte;
        ++s.sized;
      }
    }
  }
  std::vector<LinkFigure> out;
  for (const auto& [pair, s] : sums) {
    out.push_back({pair.first, pair.second, s.alpha / s.links, s.sized ? s.per_byte / s.sized : 0,
                   s.samples});
  }
  return out;
}

ClusterView Clusters(const Supervisor& supervisor, const RunSettings& settings) {
  ClusterView view;
  view.planner = settings.migration == Migration::kGreedy ? redistribution::ChannelPlanner::kGreedy
                                                          : redistribution::ChannelPlanner::kDistPM;
  if (settings.migration == Migration::kRing) view.ring = redistribution::RingPlanner::kOptimal;
  if (settings.migration == Migration::kNearest) view.ring = redistribution::RingPlanner::kNearest;
  std::vector<std::string>& names = view.names;
  for (const std::string& c : TaskClusters(supervisor)) {
    auto at = std::find(names.begin(), names.end(), c);
    view.cluster.push_back(static_cast<int>(at - names.begin()));
    if (at == names.end()) names.push_back(c);
  }
  // Unknown channels: 1 ms and 1 Gbit/s each, so the plan only spreads the items evenly.
  const size_t n = names.size();
  view.latency.assign(n, std::vector<double>(n, 1e-3));
  view.seconds_per_byte.assign(n, std::vector<double>(n, 8e-9));
  view.measured.assign(n, std::vector<bool>(n, false));
  for (size_t a = 0; a < n && settings.channel; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (auto link = settings.channel(names[a], names[b])) {
        view.latency[a][b] = link->first;
        view.seconds_per_byte[a][b] = link->second;
      }
    }
  }
  // What the daemons' link monitors measured, averaged over the links between two clusters,
  // replaces the rest.
  for (const LinkFigure& f : MeasuredChannels(supervisor)) {
    const auto a =
        static_cast<size_t>(std::find(names.begin(), names.end(), f.from) - names.begin());
    const auto b = static_cast<size_t>(std::find(names.begin(), names.end(), f.to) - names.begin());
    if (a >= n || b >= n) continue;
    view.latency[a][b] = f.alpha;
    if (f.seconds_per_byte > 0) view.seconds_per_byte[a][b] = f.seconds_per_byte;
    view.measured[a][b] = true;
  }
  return view;
}

BalancingDriver::BalancingDriver(Supervisor& supervisor, const RunSettings& settings,
                                 bool items_in_chain, size_t tasks, SteadyTime start,
                                 double setup_seconds, std::string job_id, std::string app,
                                 Logger log, BalancingStats earlier)
    : supervisor_(supervisor),
      settings_(settings),
      chain_(items_in_chain),
      tasks_(tasks),
      start_(start),
      job_id_(std::move(job_id)),
      app_(std::move(app)),
      log_(std::move(log)),
      earlier_(std::move(earlier)) {
  balance::BalancerOptions options;
  options.chain = items_in_chain;
  balancing_ = std::make_unique<LiveBalancing>(settings_.balance, tasks, options);
  balancing_->SetMigration(MigrationName(settings_.migration));
  balancing_->SetMoveCostPrior(setup_seconds);
}

BalancingStats BalancingDriver::stats() const {
  BalancingStats stats = balancing_->stats().Plus(earlier_);
  // Never known to hold movable items (an app without them, or a run over before every task
  // reported): nothing was balanced.
  if (!balancing_->movable() && earlier_.redistributions == 0) stats.mode = "off";
  return stats;
}

std::optional<redistribution::RingPlanner> BalancingDriver::Ring() const {
  if (settings_.migration == Migration::kRing) return redistribution::RingPlanner::kOptimal;
  if (settings_.migration == Migration::kNearest) return redistribution::RingPlanner::kNearest;
  return std::nullopt;
}

SteadyTime BalancingDriver::Tick(SteadyTime now) {
  const auto never = SteadyTime::max();
  const std::vector<std::string> clusters = TaskClusters(supervisor_);
  for (const auto& [move, seconds] : supervisor_.TakeCompletedMoves()) {
    balancing_->OnMoveDone(move, seconds, clusters[move.from] != clusters[move.to]);
  }
  for (size_t t = 0; t < tasks_; ++t) {
    if (auto r = supervisor_.report(t)) {
      TaskReport report = r->first;
      report.at_s = SinceStart(r->second);
      report.converged = supervisor_.locally_converged(t);
      balancing_->OnReport(t, report);
    }
  }
  if (balancing_->mode() == balance::BalanceMode::kOff) return never;
  if (!announced_ && balancing_->known()) {
    announced_ = true;
    if (!balancing_->movable()) {
      log_->info("job {}: no live balancing: app {} has no items to move", job_id_, app_);
      balancing_ = std::make_unique<LiveBalancing>(balance::BalanceMode::kOff, tasks_);
      return never;
    }
    log_->info("job {}: live balancing on ({})", job_id_,
               balance::BalanceModeName(balancing_->mode()));
  }
  // Each move's end wakes the run (SupervisorPort::changed), and the next ones start.
  if (StartMoves(now)) return never;
  if (redistribution_since_) {
    balancing_->OnRedistributionDone(
        std::chrono::duration<double>(now - *redistribution_since_).count());
    redistribution_since_.reset();
  }
  if (supervisor_.converged() || !balancing_->movable())
    return now + std::chrono::milliseconds(250);
  if (now < AtSecond(balancing_->next_check_s())) return AtSecond(balancing_->next_check_s());
  if (settings_.migration != Migration::kSpawner)
    balancing_->SetClusters(Clusters(supervisor_, settings_));
  const auto moves = balancing_->Check(SinceStart(now));
  const auto checked_next = AtSecond(balancing_->next_check_s());
  LogJudged("at checking point " + std::to_string(balancing_->stats().checks));
  LogCheckingPoint(moves);
  if (moves.empty()) return checked_next;
  queue_.assign(moves.begin(), moves.end());
  redistribution_since_ = now;
  return StartMoves(now) ? never : checked_next;
}

bool BalancingDriver::StartMoves(SteadyTime now) {
  const bool ring = !chain_ && Ring().has_value();
  const bool through_spawner = settings_.migration == Migration::kSpawner;
  const std::vector<std::string> clusters = TaskClusters(supervisor_);
  for (auto it = queue_.begin(); it != queue_.end();) {
    // A ring or chain move of a later wave waits for its source's moves of the earlier ones, in
    // and out (those under way make BeginMove answer kBusy): it gives items that only then are
    // there, or that its source can only then spare. Moves of other tasks run beside it: on 64
    // CG tasks a redistribution was up to 37 chain moves, which used to run one after the other.
    const bool waits = std::any_of(queue_.begin(), queue_.end(), [&](const balance::MoveOrder& m) {
      return m.wave < it->wave && (m.to == it->from || m.from == it->from);
    });
    if (waits) {
      ++it;
      continue;
    }
    // The first wave was just weighed by the checking point; a later one may come too late.
    if (it->wave > 0) {
      const bool converged = supervisor_.all_locally_converged();
      if (!balancing_->StillPays(*it, converged)) {
        log_->info(
            "job {}: move {}->{} (wave {}) not made: {}", job_id_, it->from, it->to, it->wave + 1,
            converged ? std::string("every task is locally converged")
                      : fmt::format("the run is expected to end in {:.2f} s, the move "
                                    "would take {:.2f} s",
                                    balancing_->ExpectedEnd(), balancing_->MoveSeconds(*it)));
        it = queue_.erase(it);
        continue;
      }
    }
    std::optional<std::vector<size_t>> via;
    // Ring and chain neighbours send to each other straight, whatever their clusters (chain
    // neighbours exchange their values straight at every iteration anyway); `--migration
    // spawner` still sends everything through the spawner.
    if (ring || (chain_ && !through_spawner)) {
      via = std::vector<size_t>{};
    } else if (!through_spawner) {
      via = GatewaysBetween(clusters, it->from, it->to);
    }
    const auto started = supervisor_.BeginMove(it->from, it->to, it->work, now, via);
    if (started == Supervisor::MoveStart::kBusy) {
      ++it;  // once its tasks' moves ended
    } else {
      it = queue_.erase(it);  // started, or refused: a task not running now (being replaced)
    }
  }
  return supervisor_.moving();
}

void BalancingDriver::LogCheckingPoint(const std::vector<balance::MoveOrder>& moves) const {
  double work = 0;
  std::string pairs;
  for (const auto& m : moves) {
    work += m.work;
    pairs += (pairs.empty() ? "" : ", ") + std::to_string(m.from) + "->" + std::to_string(m.to);
  }
  double slowest = balancing_->rate(0), fastest = slowest;
  for (size_t t = 1; t < tasks_; ++t) {
    slowest = std::min(slowest, balancing_->rate(t));
    fastest = std::max(fastest, balancing_->rate(t));
  }
  const auto& decision = balancing_->last_decision();
  const balance::DynamicStep& step = decision.step;
  const uint32_t check = balancing_->stats().checks;
  if (log_->should_log(spdlog::level::debug) && decision.measured) {
    std::string each, ends;
    for (size_t t = 0; t < tasks_; ++t) {
      each += fmt::format("{}{:.3g}", t ? " " : "", balancing_->rate(t));
      if (t < step.t_rem.size()) ends += fmt::format("{}{:.2f}", t ? " " : "", step.t_rem[t]);
    }
    log_->debug("job {}: checking point {}: task speeds {}; expected ends (s) {}", job_id_, check,
                each, ends);
  }
  if (moves.empty()) {
    // Every checking point, for whoever wants to see why nothing moved (--log-level debug).
    if (decision.measured) {
      log_->debug(
          "job {}: checking point {}: speeds {:.3g}..{:.3g} units/s, expected end {:.2f} s -> "
          "{:.2f} s, "
          "gain {:.2f} s net of {:.2f} s moving: nothing moved",
          job_id_, check, slowest, fastest, MaxOf(step.t_rem), step.t_after, step.gain,
          decision.overhead);
    }
    return;
  }
  log_->info(
      "job {}: checking point {}: speeds {:.3g}..{:.3g} units/s, expected end {:.2f} s -> {:.2f} "
      "s, gain {:.2f} s net of {:.2f} s moving; moving {:.3g} work units in {} moves ({})",
      job_id_, check, slowest, fastest, MaxOf(step.t_rem), step.t_after, step.gain,
      decision.overhead, work, moves.size(), pairs);
  LogPlans();
}

void BalancingDriver::LogJudged(const std::string& when) const {
  if (const auto& judged = balancing_->last_judged()) {
    log_->info("job {}: redistribution {} gained {:.2f} s {} (predicted {:.2f} s)", job_id_,
               judged->redistribution, judged->observed, when, judged->predicted);
    // Why, for whoever checks the judgment (--log-level debug).
    if (log_->should_log(spdlog::level::debug)) {
      std::string speeds, ends;
      for (size_t t = 0; t < judged->unmoved_ends.size(); ++t) {
        speeds += fmt::format("{}{:.3g}", t ? " " : "", judged->speeds_since[t]);
        ends += fmt::format("{}{:.2f}", t ? " " : "", judged->unmoved_ends[t]);
      }
      log_->debug(
          "job {}: redistribution {}: speeds since the decision {}; had nothing moved, expected "
          "ends (s) {}",
          job_id_, judged->redistribution, speeds, ends);
    }
  }
}

void BalancingDriver::LogPlans() const {
  const uint32_t check = balancing_->stats().checks;
  const std::string migration = MigrationName(settings_.migration);
  if (!balancing_->channels().empty()) {
    const ClusterView view = Clusters(supervisor_, settings_);
    std::string channels;
    for (const auto& f : balancing_->channels()) {
      const auto a = static_cast<size_t>(f.from), b = static_cast<size_t>(f.to);
      const double per_byte = view.seconds_per_byte[a][b];
      channels += fmt::format("{}{} -> {} {} items ({:.1f} ms, {:.0f} Mbit/s, {})",
                              channels.empty() ? "" : ", ", view.names[a], view.names[b], f.amount,
                              1e3 * view.latency[a][b], per_byte > 0 ? 8e-6 / per_byte : 0.0,
                              view.measured[a][b] ? "measured" : "nominal");
    }
    log_->info("job {}: checking point {}: between clusters ({}): {}", job_id_, check, migration,
               channels);
  }
  if (const auto& ring = balancing_->ring_plan()) {
    std::string links;
    for (const auto& m : ring->moves) {
      links += fmt::format("{}{}->{} {} items{}", links.empty() ? "" : ", ", m.from, m.to, m.items,
                           m.wave > 0 ? fmt::format(" (wave {})", m.wave + 1) : "");
    }
    log_->info(
        "job {}: checking point {}: around the ring ({}, {}): {}; planned {:.3f} s (bound {:.3f} "
        "s) for "
        "items of {:.0f} bytes",
        job_id_, check, migration, ring->ring_case, links, ring->planned_time, ring->lower_bound,
        balancing_->bytes_per_item());
  }
  if (const auto& chain = balancing_->chain_plan()) {
    log_->info(
        "job {}: checking point {}: along the chain ({}): planned {:.3f} s over the links (busiest "
        "link "
        "{:.3f} s) for items of {:.0f} bytes",
        job_id_, check, chain->ring_case, chain->planned_time, chain->lower_bound,
        balancing_->bytes_per_item());
  }
}

}  // namespace aiac::spawner
