// The accepting side of a process (super-node, daemon): listens, admits connections within
// limits, runs the handshake, and hands each authenticated connection to the service's handler.
//
// What a peer without the key can cost: one descriptor and a few KiB (the TLS state and a
// pre-auth frame of at most kPreAuthFrameBytes) per connection, for at most the handshake
// timeout, and at most max_handshakes_per_address such connections per IP address,
// max_handshakes in all. Past max_connections (never more than the descriptor limit allows,
// minus a reserve for files) new connections are closed at once. When accept() itself fails for
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
#include "net/task_group.h"

namespace aiac::net {

struct ServerLimits {
  // Most connections open at once, authenticated or not; further ones are closed at accept.
  // Capped at run time by the descriptor limit (RLIMIT_NOFILE) minus 64. Default: 4096.
  size_t max_connections = 4096;
  // Most handshakes in progress at once. Default: 256.
  size_t max_handshakes = 256;
  // Most handshakes in progress at once from one IP address. Default: 32.
  size_t max_handshakes_per_address = 32;
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
  size_t open_connections() const { return connections_.size(); }
  size_t handshakes_in_progress() const { return handshakes_; }

 private:
  awaitable<void> AcceptLoop();
  awaitable<void> Serve(ConnectionPtr conn, std::string address);
  bool Admit(const std::string& address, std::string& why);

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
  size_t handshakes_ = 0;
  std::map<std::string, size_t> handshakes_by_address_;
  RateLimitedLog refusal_log_;
  RateLimitedLog accept_log_;
};

// Starts `task` detached; an exception escaping it is logged as "`what`: ..." instead of being
// swallowed. For coroutines that read from a peer outside a Server handler.
void SpawnLogged(asio::any_io_executor executor, awaitable<void> task, Logger log,
                 std::string what);

}  // namespace aiac::net
