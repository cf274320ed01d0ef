// Two connected TCP sockets over loopback, and running an io_context until something holds:
// for tests and benchmarks that put both ends of a connection in one process.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "net/asio.h"
#include "net/connection.h"

namespace aiac::testing {

struct SocketPair {
  net::tcp::socket client, server;
};

inline SocketPair ConnectLoopback(net::asio::io_context& io) {
  using net::tcp;
  tcp::acceptor acceptor(io, tcp::endpoint(net::asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket client(io), server(io);
  client.connect(acceptor.local_endpoint());
  acceptor.accept(server);
  return {std::move(client), std::move(server)};
}

// Runs `io` until `done()` holds or `timeout` passes (connections keep writer coroutines alive,
// so the loop never runs out of work by itself); returns done().
inline bool RunIoUntil(net::asio::io_context& io, const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return done();
}

// Who runs a handshake on one end: role, node id, and the peer role it expects (if any).
struct HandshakeEnd {
  net::ConnectionPtr conn;
  proto::Role role;
  std::string id;
  std::optional<proto::Role> expect = std::nullopt;
};

// Runs both ends' handshakes to completion; returns (client status, server status).
inline std::pair<Status, Status> HandshakeBoth(net::asio::io_context& io,
                                               const HandshakeEnd& client,
                                               const HandshakeEnd& server) {
  std::optional<Status> a, b;
  net::asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        a = co_await client.conn->Handshake(client.role, client.id, client.expect);
      },
      net::asio::detached);
  net::asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        b = co_await server.conn->Handshake(server.role, server.id, server.expect);
      },
      net::asio::detached);
  RunIoUntil(io, [&] { return a && b; });
  return {a.value_or(Timeout("client did not finish")),
          b.value_or(Timeout("server did not finish"))};
}

}  // namespace aiac::testing
