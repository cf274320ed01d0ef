// The link monitors of a daemon's job (monitor/link_monitor.h): every frame sent on a monitored
// connection to another daemon (values, items passed on, probes) waits here for the peer's
// LinkAck, and the round trip it took feeds that peer's LinkMonitor. The figures go to the
// spawner with the task's progress (LinkReport), for DistPM's channel costs.
//
// Runs on the daemon's io thread. Clear() starts afresh for a new job.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/task_session.h"
#include "monitor/link_monitor.h"
#include "net/connection.h"

namespace aiac::daemon {

class LinkMonitors {
 public:
  using Clock = std::chrono::steady_clock;

  // A frame of `bytes` went out on `conn` now (not counted once `conn` is closed).
  void Sent(const net::Connection& conn, uint64_t bytes);
  // Reads `conn` (one of ours to another daemon) until it fails: each LinkAck times the oldest
  // frames still unacknowledged; anything else is a refusal (the peer does not, or no longer,
  // run the task). Then closes it.
  net::awaitable<void> WatchAcks(net::ConnectionPtr conn);
  // The figures measured so far, one per peer daemon with a latency known.
  std::vector<LinkReport> Reports() const;
  void Clear() { measured_.clear(); }

 private:
  // Frames sent and not yet acknowledged, per monitored connection (send time, bytes).
  std::map<const net::Connection*, std::deque<std::pair<Clock::time_point, uint64_t>>> unacked_;
  std::map<std::string, monitor::LinkMonitor> measured_;  // per peer daemon id
};

}  // namespace aiac::daemon
