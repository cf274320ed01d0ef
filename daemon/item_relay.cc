#include "daemon/item_relay.h"

#include "core/printable.h"
#include "net/capnp_bytes.h"
#include "net/server.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::AsBytes;
using net::AsString;
using net::awaitable;

ItemRelay::ItemRelay(asio::io_context& io, const TaskHostOptions& options, NeighbourLinks& dialer,
                     LinkMonitors& monitors, net::TaskGroup& tasks,
                     std::function<Session()> current, Logger log)
    : io_(io),
      tasks_(tasks),
      options_(options),
      dialer_(dialer),
      monitors_(monitors),
      current_(std::move(current)),
      log_(std::move(log)) {}

void ItemRelay::Reset() {
  export_routes_.clear();
  routed_ = RoutedImports();
}

void ItemRelay::End() {
  for (auto& [daemon, conn] : links_) conn->Close();
  links_.clear();
}

std::vector<ItemRelay::Hop> ItemRelay::HopsOf(capnp::List<proto::Neighbour>::Reader route) {
  std::vector<Hop> hops;
  for (auto n : route) hops.push_back({n.getTask(), n.getAddress().cStr(), n.getDaemonId().cStr()});
  return hops;
}

void ItemRelay::Route(uint64_t move, uint32_t to_task,
                      capnp::List<proto::Neighbour>::Reader route) {
  export_routes_[move] = {to_task, HopsOf(route)};
}

std::vector<net::ConnectionPtr> ItemRelay::Connections() const {
  std::vector<net::ConnectionPtr> conns;
  for (const auto& [daemon, conn] : links_) conns.push_back(conn);
  return conns;
}

void ItemRelay::OnExported(uint64_t move, const std::string& items) {
  auto route = export_routes_.find(move);
  const Session job = current_();
  if (!job || route == export_routes_.end()) return;
  auto [to_task, hops] = std::move(route->second);
  export_routes_.erase(route);
  tasks_.Spawn(Relay(job->job(), move, to_task, std::move(hops), items), log_, "item relay");
}

awaitable<net::ConnectionPtr> ItemRelay::LinkTo(const Hop& next, const std::string& job) {
  if (auto known = links_.find(next.daemon); known != links_.end() && known->second->is_open()) {
    co_return known->second;
  }
  auto backoff = std::chrono::milliseconds(50);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) {
      asio::steady_timer wait(io_, backoff);
      co_await wait.async_wait(net::use_nothrow);
      backoff *= 2;
    }
    auto ep = ParseEndpoint(next.address);
    if (!ep.ok()) break;
    auto dialed = co_await dialer_.DialOnce(*ep, next.daemon, job, "to pass items on to");
    if (!dialed.ok()) continue;
    links_[next.daemon] = *dialed;
    // The next daemon acknowledges what it reads, or refuses the connection: then it is closed
    // and dialed again next time.
    tasks_.Spawn(monitors_.WatchAcks(*dialed), log_, "relay link watch");
    co_return *dialed;
  }
  co_return nullptr;
}

awaitable<void> ItemRelay::Relay(std::string job, uint64_t move, uint32_t to_task,
                                 std::vector<Hop> route, std::string items) {
  const Hop next = route.front();
  net::ConnectionPtr conn = co_await LinkTo(next, job);
  const Session current = current_();
  if (!conn || !current || current->job() != job) {
    // The spawner sends the items itself once it hears the route failed, or after a while.
    log_->warn("job {}: items of move {} not passed on to daemon {} (task {}): {}", job, move,
               next.daemon, next.task, conn ? "the job ended here" : "unreachable");
    co_return;
  }
  conn->SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initRelayItems();
    r.setJob(job);
    r.setMove(move);
    r.setToTask(to_task);
    auto hops = r.initRoute(static_cast<unsigned>(route.size()));
    for (unsigned i = 0; i < hops.size(); ++i) {
      hops[i].setTask(route[i].task);
      hops[i].setAddress(route[i].address);
      hops[i].setDaemonId(route[i].daemon);
    }
    r.setItems(AsBytes(items));
  });
  monitors_.Sent(*conn, items.size() + 64);
  log_->debug(
      "job {}: move {}: {} bytes of items passed on to daemon {} (task {}), {} daemons to go", job,
      move, items.size(), next.daemon, next.task, route.size() - 1);
}

bool ItemRelay::OnRelayed(const net::Connection& from, proto::RelayItems::Reader r) {
  auto route = r.getRoute();
  if (route.size() == 0 || route[0].getDaemonId() != options_.id) {
    log_->warn("closed {}: items of move {} routed through another daemon", from.Describe(),
               r.getMove());
    return false;
  }
  const Session job = current_();
  if (!job || job->job() != r.getJob().cStr()) {
    // This daemon no longer runs that job: the spawner sends the items itself after a while.
    log_->info("items of move {} of job {} dropped: that job does not run here", r.getMove(),
               Printable(r.getJob().cStr(), 64));
    return true;
  }
  if (route.size() > 1) {
    std::vector<Hop> rest = HopsOf(route);
    rest.erase(rest.begin());
    tasks_.Spawn(
        Relay(job->job(), r.getMove(), r.getToTask(), std::move(rest), AsString(r.getItems())),
        log_, "item relay");
    return true;
  }
  if (r.getToTask() != job->task()) {
    log_->info("job {}: items of move {} for task {} dropped: task {} runs here", job->job(),
               r.getMove(), r.getToTask(), job->task());
    return true;
  }
  auto here = routed_.Arrive(r.getMove(), AsString(r.getItems()));
  if (!here.ok()) {
    log_->warn("job {}: items from {} dropped: {}", job->job(), from.Describe(),
               here.status().message());
  } else if (*here) {
    Import(r.getMove(), std::move(**here));
  }
  return true;
}

void ItemRelay::Expect(uint64_t move, const std::string& sha256) {
  if (auto here = routed_.Expect(move, sha256)) Import(move, std::move(*here));
}

void ItemRelay::Import(uint64_t move, std::string items) {
  const Session job = current_();
  if (!job) return;
  runtime::ItemMove m;
  m.move = move;
  m.kind = runtime::MoveKind::kImport;
  m.items = std::move(items);
  job->Move(std::move(m));
}

}  // namespace aiac::daemon
