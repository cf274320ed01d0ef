// Two connected TCP sockets over loopback, and running an io_context until something holds:
// for tests and benchmarks that put both ends of a connection in one process.
#pragma once

#include <chrono>
#include <functional>

#include "net/asio.h"

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

}  // namespace aiac::testing
