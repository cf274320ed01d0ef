// Items that travel daemon to daemon during live balancing (docs/balancing.md; DistPM's
// migration gateways, distpm-workload-migration.md section 4): the spawner gives an export a
// route; once the task exported the items they go to the route's first daemon (RelayItems),
// which passes them on, and the last one imports them once the spawner names their SHA-256
// (RoutedImports). A daemon passes items on only for the job it runs.
//
// Runs on the daemon's io thread; one per daemon, Reset() for each job it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/logging.h"
#include "daemon/link_monitors.h"
#include "daemon/neighbour_links.h"
#include "daemon/routed_imports.h"
#include "daemon/task_host_options.h"
#include "daemon/task_session.h"
#include "net/connection.h"

namespace aiac::daemon {

class ItemRelay {
 public:
  using Session = std::shared_ptr<TaskSession>;

  // The relays' coroutines run in `tasks` (the daemon waits for them when it stops).
  ItemRelay(net::asio::io_context& io, const TaskHostOptions& options, NeighbourLinks& dialer,
            LinkMonitors& monitors, net::TaskGroup& tasks, std::function<Session()> current,
            Logger log);

  // A new job runs here: no routes, no items waiting.
  void Reset();
  // The job ended: the connections items went on through close.
  void End();
  // The spawner's export `move` to `to_task` goes along `route` once the task exported it.
  void Route(uint64_t move, uint32_t to_task, capnp::List<proto::Neighbour>::Reader route);
  // The task exported move `move`'s items: on along its route, if it has one.
  void OnExported(uint64_t move, const std::string& items);
  // RelayItems from a daemon: passed on, or imported here. False when the sender misbehaved.
  bool OnRelayed(const net::Connection& from, proto::RelayItems::Reader r);
  // The spawner's import of move `move`, named by the items' SHA-256: imported now when they came
  // already by their route.
  void Expect(uint64_t move, const std::string& sha256);
  // The spawner sends move `move`'s items itself: true when they are to be imported (the routed
  // copy has not been).
  bool Direct(uint64_t move) { return routed_.Direct(move); }
  // The connections items go on through, for the link monitors' probes.
  std::vector<net::ConnectionPtr> Connections() const;

 private:
  struct Hop {
    uint32_t task = 0;  // the task that daemon runs (for logs)
    std::string address, daemon;
  };
  static std::vector<Hop> HopsOf(capnp::List<proto::Neighbour>::Reader route);
  // Sends move `move`'s items for task `to_task` to route[0], telling it the route from there.
  net::awaitable<void> Relay(std::string job, uint64_t move, uint32_t to_task,
                             std::vector<Hop> route, std::string items);
  // The connection to the next daemon of a route, reused or dialed (three attempts).
  net::awaitable<net::ConnectionPtr> LinkTo(const Hop& next, const std::string& job);
  // The task imports move `move`'s items (the routed or the spawner's copy, once).
  void Import(uint64_t move, std::string items);

  net::asio::io_context& io_;
  net::TaskGroup& tasks_;
  const TaskHostOptions& options_;
  NeighbourLinks& dialer_;
  LinkMonitors& monitors_;
  std::function<Session()> current_;
  Logger log_;
  std::map<uint64_t, std::pair<uint32_t, std::vector<Hop>>> export_routes_;  // by move
  RoutedImports routed_;
  std::map<std::string, net::ConnectionPtr> links_;  // by daemon id
};

}  // namespace aiac::daemon
