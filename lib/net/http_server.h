// A small read-only HTTP/1.1 server (Boost.Beast) on the process's io_context: what serves
// `--metrics` (Prometheus's `/metrics`) and the super-node's web page. GET and HEAD only; each
// path is a handler that returns the whole answer at once (no streaming, no request body).
//
// What a slow or hostile client can cost: one descriptor and one coroutine per connection (at
// most max_connections; further ones are closed at accept), a request header of at most
// kMaxHeaderBytes (a larger one is answered 431 and closed), and a connection idle for
// idle_timeout is closed. Nothing here blocks: the registry and the links keep being served on
// the same thread while 200 clients sit idle.
//
// Thread-safety: none; use from the io_context's thread. Handlers run on it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/endpoint.h"
#include "core/logging.h"
#include "core/status.h"
#include "net/asio.h"
#include "net/task_group.h"

namespace aiac::net {

struct HttpAnswer {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// The request's query string ("job=a-1" of "/api/history?job=a-1"), undecoded.
using HttpHandler = std::function<HttpAnswer(const std::string& query)>;

// The value of `key` in a query string, %-decoded; "" when absent.
std::string QueryValue(const std::string& query, const std::string& key);

class HttpServer {
 public:
  static constexpr size_t kMaxHeaderBytes = 16 * 1024;

  struct Limits {
    size_t max_connections = 1024;
    std::chrono::milliseconds idle_timeout{30000};
  };

  HttpServer(asio::io_context& io, Logger log, Limits limits);
  explicit HttpServer(asio::io_context& io, Logger log)
      : HttpServer(io, std::move(log), Limits{}) {}
  ~HttpServer();

  // Serves `path` (exact, without the query) with `handler`. Before Start().
  void Handle(std::string path, HttpHandler handler);
  // Listens on `at` (port 0: any free port) and starts accepting; the bound endpoint.
  Result<Endpoint> Start(const Endpoint& at);
  // Closes the listener and every connection; completes once every coroutine has ended.
  awaitable<void> Stop();
  size_t connections() const { return open_.size(); }

 private:
  struct Client;
  awaitable<void> AcceptLoop();
  awaitable<void> Serve(std::shared_ptr<Client> client);

  asio::io_context& io_;
  Logger log_;
  Limits limits_;
  tcp::acceptor acceptor_;
  TaskGroup group_;
  std::map<std::string, HttpHandler> handlers_;
  std::set<std::shared_ptr<Client>> open_;
  bool stopping_ = false;
};

// Starts `server` on `address` ("HOST:PORT", or "PORT" alone: 127.0.0.1) with `/metrics`
// answering the process's registry, and logs where; the address it is bound to.
Result<Endpoint> ServeMetrics(HttpServer& server, const std::string& address, const Logger& log);

}  // namespace aiac::net
