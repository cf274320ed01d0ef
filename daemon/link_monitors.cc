#include "daemon/link_monitors.h"

namespace aiac::daemon {

void LinkMonitors::Sent(const net::Connection& conn, uint64_t bytes) {
  if (!conn.is_open()) return;
  auto& unacked = unacked_[&conn];
  unacked.emplace_back(Clock::now(), bytes);
  // A peer that does not acknowledge (its frames lost with a restart) must not make this grow.
  while (unacked.size() > 64) unacked.pop_front();
}

net::awaitable<void> LinkMonitors::WatchAcks(net::ConnectionPtr conn) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) break;
    auto env = (*msg)->root();
    if (!env.isLinkAck()) {
      conn->Refuse("unexpected message");
      break;
    }
    auto& unacked = unacked_[conn.get()];
    const auto now = Clock::now();
    for (uint32_t k = env.getLinkAck().getFrames(); k > 0 && !unacked.empty(); --k) {
      const auto [sent, bytes] = unacked.front();
      unacked.pop_front();
      measured_[conn->peer().id].Add(bytes, std::chrono::duration<double>(now - sent).count());
    }
  }
  conn->Close();  // first: Sent() counts nothing more on it
  unacked_.erase(conn.get());
}

std::vector<LinkReport> LinkMonitors::Reports() const {
  std::vector<LinkReport> out;
  for (const auto& [daemon, m] : measured_) {
    if (m.measured())
      out.push_back({daemon, m.alpha(), m.seconds_per_byte(), static_cast<uint32_t>(m.samples())});
  }
  return out;
}

}  // namespace aiac::daemon
