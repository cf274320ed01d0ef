// A daemon's link to the super-nodes: register, heartbeat, and move to the next super-node in
// the list when the current one goes away (its connection closes, or it answers nothing for the
// silence limit: a hung host, or one cut off by the network, closes nothing), after a jittered wait
// (reconnect_backoff.h) so that the daemons of a lost super-node do not all arrive at the next one
// at once. Gives up only when every super-node has refused the handshake (a wrong cluster_key or
// protocol version cannot fix itself): then `on_fatal` runs. The revocation lists a super-node
// passes on (net/revocation.h) go to `on_revocations`.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "daemon/reconnect_backoff.h"
#include "net/connection.h"
#include "net/revocation.h"
#include "net/task_group.h"
#include "proto/aiac.capnp.h"

namespace aiac::daemon {

struct SelfDescription {
  std::string id;
  std::string address;
  std::string cluster;
  double power = 1;
  uint32_t cores = 1;
};

// What links did, for a process that plays many daemons (tools/swarm.cc); links may share one.
struct LinkCounters {
  std::atomic<uint64_t> registered{0};     // links whose registration the super-node acknowledged,
                                           // on a connection still open
  std::atomic<uint64_t> registrations{0};  // RegisterAcks received in all
  std::atomic<uint64_t> heartbeats{0};     // heartbeats sent
  std::atomic<uint64_t> acked{0};          // heartbeat acknowledgements received
  std::atomic<uint64_t> forgotten{0};      // of those, saying the super-node did not know us
  std::atomic<uint64_t> lost{0};           // connections to a super-node that ended (not by Stop)
  std::atomic<uint64_t> dials{0};          // super-nodes dialled, answered or not
};

// The `supernode_timeout_ms` option against `heartbeat_ms`: a silence limit must leave room for
// a heartbeat's answer (0: off).
Status CheckSilenceLimit(std::chrono::milliseconds limit, std::chrono::milliseconds heartbeat);

// How often a daemon asks its super-node to answer its heartbeats (Heartbeat.ackWithinMs): a
// third of what the silence limit leaves after a heartbeat period, so that the answers' gaps
// (at most this plus a period) stay well inside it; 0 (every heartbeat) without a limit or a
// margin. Each answer is a TLS record written and read: at one heartbeat a second, answering
// one in four spares a super-node holding 20,000 daemons 15,000 of them a second (issue 37).
std::chrono::milliseconds AckWithin(std::chrono::milliseconds limit,
                                    std::chrono::milliseconds heartbeat);

class SupernodeLink {
 public:
  SupernodeLink(net::asio::any_io_executor executor, std::vector<Endpoint> supernodes,
                SelfDescription self, net::NetOptions net, std::chrono::milliseconds heartbeat,
                Logger log, std::function<bool()> busy, std::function<void(Status)> on_fatal,
                std::function<void(const net::RevocationList&)> on_revocations);

  // Registers with the first super-node that answers, and keeps heartbeating; the next
  // super-node of the list when one is lost.
  void Start();
  // The daemon's power changed (daemon/power_watch.h): registers again with the new figure.
  void UpdatePower(double power);
  // Closes the link; completes once its coroutines (the link, the heartbeats) have ended.
  net::awaitable<void> Stop();
  // Counts what this link does into `counters` (which must outlive it); before Start().
  void set_counters(LinkCounters* counters) { counters_ = counters; }
  // The waits before dialing again; before Start().
  void set_backoff(ReconnectBackoff backoff) { backoff_ = backoff; }
  // A super-node that sends nothing this long (it answers a heartbeat at least every
  // AckWithin) is left for the next; 0: only a closed connection counts. Before Start().
  void set_silence_limit(std::chrono::milliseconds limit) { silence_limit_ = limit; }

 private:
  net::awaitable<void> Run();
  // Registers on `conn`, heartbeats and reads the acks until it closes: why it did.
  // `registered`: set when the super-node acknowledged the registration.
  net::awaitable<Status> ServeOne(net::ConnectionPtr conn, bool& registered);
  // Waits before the next dial after `setbacks` in a row (none for 0); Stop() cuts it short.
  net::awaitable<void> Pause(unsigned setbacks);
  // Heartbeats on `conn` until it closes; closes it once the super-node has been silent past the
  // silence limit, and says so in silenced_.
  net::awaitable<void> Heartbeats(net::ConnectionPtr conn);
  // `registered`: set once the super-node acknowledged a registration on `conn`.
  net::awaitable<Status> ReadAcks(net::ConnectionPtr conn, bool& registered);
  void SendRegister(net::Connection& conn);

  std::vector<Endpoint> supernodes_;
  SelfDescription self_;
  net::NetOptions net_;
  std::chrono::milliseconds heartbeat_;
  std::chrono::milliseconds silence_limit_{0};
  // When the current super-node last sent something (or was reached).
  std::chrono::steady_clock::time_point last_heard_;
  // The connection Heartbeats closed for its super-node's silence (compared, never used; ServeOne
  // clears it).
  const net::Connection* silenced_ = nullptr;
  Logger log_;
  std::function<bool()> busy_;
  std::function<void(Status)> on_fatal_;
  std::function<void(const net::RevocationList&)> on_revocations_;
  net::ConnectionPtr current_;
  LinkCounters* counters_ = nullptr;
  bool stopping_ = false;
  net::asio::steady_timer heartbeat_timer_;
  ReconnectBackoff backoff_;
  net::asio::steady_timer backoff_timer_;
  std::mt19937_64 random_{std::random_device{}()};
  net::TaskGroup tasks_;
};

}  // namespace aiac::daemon
