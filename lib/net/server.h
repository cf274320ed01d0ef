// The accepting side of a process (super-node, daemon): listens, admits connections within
// limits, runs the handshake, and hands each authenticated connection to the service's handler.
//
// What a peer without the key can cost: one descriptor and a few KiB (the TLS state and a
// pre-auth frame of at most kPreAuthFrameBytes) per connection, for at most the handshake
// timeout, and at most twice max_handshakes_per_address such connections per IP address (silent
// ones and handshakes, below), twice max_handshakes in all. Past max_connections (never more than
// the descriptor limit allows, minus a reserve for files) new connections are closed at once.
//
// Those caps must not lock out the legitimate peers that share an address (or the machine) with
// a flood. An honest client sends its ClientHello as soon as it is connected, so:
// - a connection that has sent nothing yet is "silent" and not yet a handshake; silent ones
//   count against the same caps, but separately, and a newcomer that finds them at the cap
//   closes the oldest silent one instead of being refused. A flood of half-open connections
//   then only ever displaces itself;
// - a connection whose bytes have come is a handshake; a newcomer that finds the handshakes at
//   the cap makes room by closing the oldest one in the way when that one has been pending for
//   at least stalled_handshake (an honest handshake takes a round trip or two), and is closed
//   at once otherwise.
// Only connections before the end of their handshake count: an authenticated connection never
// counts against a cap other than max_connections. When accept() itself fails for
// lack of descriptors the loop backs off (100 ms doubling to 1 s) instead of spinning. Each of
// these is logged at most once a second, with a count of what was dropped since.
//
// An exception escaping a handler (a malformed message read without a check, a bug) closes that
// connection with one log line; the process keeps serving everyone else.
//
// Thread-safety: none; use from the io_context's single thread. Stop() closes the acceptor and
// every connection (accepted or Track()ed), and completes once the accept loop and every
// accepted connection's handler have ended: the server may then be destroyed.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/endpoint.h"
#include "core/logging.h"
#include "net/connection.h"
#include "net/describe_exception.h"
#include "net/revocation.h"
#include "net/task_group.h"

namespace aiac::net {

struct ServerLimits {
  // Most connections open at once, authenticated or not; further ones are closed at accept.
  // Capped at run time by the descriptor limit (RLIMIT_NOFILE) minus 64, which the super-node and
  // the daemon raise towards it at start (descriptors.h). Default: 65536.
  size_t max_connections = 65536;
  // Most handshakes in progress at once. Default: 256.
  size_t max_handshakes = 256;
  // Most handshakes in progress at once from one IP address. Default: 32.
  size_t max_handshakes_per_address = 32;
  // A handshake pending this long may be closed to make room for a newcomer when a cap is
  // reached. Default: 1000 ms.
  std::chrono::milliseconds stalled_handshake{1000};
};

// Logs at most once per `period`; the next line says how many were left out.
class RateLimitedLog {
 public:
  explicit RateLimitedLog(std::chrono::milliseconds period = std::chrono::milliseconds(1000))
      : period_(period) {}
  // When this event should be logged now: the text to end its line with, "" or " (N more since
  // the last line)"; nullopt when it is to be left out (and counted).
  std::optional<std::string> Allow();

 private:
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point next_{};
  size_t suppressed_ = 0;
};

class Server {
 public:
  using Handler = std::function<awaitable<void>(ConnectionPtr)>;

  Server(asio::io_context& io, NetOptions options, ServerLimits limits, proto::Role role,
         Logger log, Handler handler);
  ~Server();

  // Opens the listening socket; returns the bound endpoint.
  Result<Endpoint> Listen(const Endpoint& at);
  // The node id this process gives in its Hello (a daemon learns its port before its id).
  void set_id(std::string id) { id_ = std::move(id); }
  // Starts accepting. Call after Listen.
  void Start();
  // Closes the acceptor and every connection; completes when every coroutine of the server
  // (the accept loop, the handlers) has ended.
  awaitable<void> Stop();
  // The first half of Stop, for a destructor: closes, does not wait.
  void Close();

  // A connection this process dialled: Stop() closes it too. Untrack when it is done.
  void Track(const ConnectionPtr& conn) { connections_.insert(conn); }
  void Untrack(const ConnectionPtr& conn) { connections_.erase(conn); }
  // The authenticated connections open now (accepted or Track()ed), to tell them something.
  std::vector<ConnectionPtr> Authenticated() const;
  // Closes, with one log line each, the authenticated connections whose peer's key `revoked`
  // now holds (a revocation list was adopted): how many.
  size_t CloseRevoked(const RevokedKeys& revoked);
  // Connections open, silent ones included.
  size_t open_connections() const { return connections_.size() + silent_.size(); }
  // Accepted connections that have sent nothing yet, and those in their handshake.
  size_t silent_connections() const { return silent_.size(); }
  size_t handshakes_in_progress() const { return pending_.size(); }
  // The most connections it holds: ServerLimits::max_connections within the descriptor budget.
  size_t max_connections() const { return limits_.max_connections; }

 private:
  awaitable<void> AcceptLoop();
  awaitable<void> Serve(ConnectionPtr conn);
  // Waits for the first bytes of an accepted connection when none came yet, then runs it.
  awaitable<void> Serve(tcp::socket socket, std::string address);
  // A silent connection from `address` is about to wait: when its address's (or the global)
  // silent ones are at the cap, closes the oldest of them.
  void MakeRoomForSilent(const std::string& address);
  // Whether a connection from `address` may start its handshake; when a handshake cap is
  // reached, closes the oldest handshake in the way if it has stalled. `why` says why not.
  bool AdmitHandshake(const std::string& address, std::string& why);

  asio::io_context& io_;
  NetOptions options_;
  ServerLimits limits_;
  proto::Role role_;
  std::string id_;
  Logger log_;
  Handler handler_;
  tcp::acceptor acceptor_;
  bool stopping_ = false;
  TaskGroup tasks_;  // the accept loop and one Serve per accepted connection
  std::set<ConnectionPtr> connections_;
  struct Pending {
    std::string address;
    std::chrono::steady_clock::time_point since;
  };
  std::map<ConnectionPtr, Pending> pending_;  // handshakes in progress
  struct Silent {
    std::string address;
    tcp::socket* socket;  // in its Serve coroutine's frame, which erases it before it ends
  };
  std::map<uint64_t, Silent> silent_;  // accepted, nothing received yet; keyed in arrival order
  uint64_t next_silent_ = 0;
  RateLimitedLog refusal_log_;
  RateLimitedLog accept_log_;
};

// Starts `task` detached; an exception escaping it is logged as "`what`: ..." instead of being
// swallowed. For coroutines that read from a peer outside a Server handler.
void SpawnLogged(asio::any_io_executor executor, awaitable<void> task, Logger log,
                 std::string what);

}  // namespace aiac::net
