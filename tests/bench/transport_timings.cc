#include "transport_timings.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

#include "bench_support.h"
#include "support/loopback.h"

namespace aiac::bench {

using namespace aiac::net;

namespace {

using Clock = std::chrono::steady_clock;
using testing::ConnectLoopback;

// Runs `io` until `done` holds.
void RunUntil(asio::io_context& io, const std::function<bool()>& done) {
  while (!done()) io.run_one();
}

}  // namespace

Timings RawTcp(int round_trips, int megabytes) {
  asio::io_context io;
  testing::SocketPair pair = ConnectLoopback(io);
  tcp::socket& a = pair.client;
  tcp::socket& b = pair.server;
  a.set_option(tcp::no_delay(true));
  b.set_option(tcp::no_delay(true));
  Timings t;
  std::array<char, 64> small{};
  auto start = Clock::now();
  for (int i = 0; i < round_trips; ++i) {
    asio::write(a, asio::buffer(small));
    asio::read(b, asio::buffer(small));
    asio::write(b, asio::buffer(small));
    asio::read(a, asio::buffer(small));
  }
  t.round_trip_us = SecondsSince(start) * 1e6 / round_trips;
  std::string mb(1 << 20, 'x'), in(1 << 20, '\0');
  std::array<char, 64> ack{};
  start = Clock::now();
  for (int i = 0; i < megabytes; ++i) {
    // Both ends on this thread, as the framed transport's are: the write, the read and the
    // acknowledgement interleave in one event loop (a 1 MB write does not fit the socket buffers).
    asio::async_write(a, asio::buffer(mb), [](std::error_code, size_t) {});
    asio::async_read(b, asio::buffer(in), [&](std::error_code, size_t) {
      asio::async_write(b, asio::buffer(small), [](std::error_code, size_t) {});
    });
    asio::async_read(a, asio::buffer(ack), [](std::error_code, size_t) {});
    io.restart();
    io.run();
  }
  t.megabyte_ms = SecondsSince(start) * 1e3 / megabytes;
  return t;
}

Timings Framed(Transport transport, int round_trips, int megabytes) {
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  NetOptions options;
  options.cluster_key = "transport-bench-key-0123456789";
  options.transport = transport;
  auto a = Connection::Create(std::move(sa), options, Side::kClient);
  auto b = Connection::Create(std::move(sb), options, Side::kServer);
  std::optional<Status> ha, hb;
  asio::co_spawn(
      io, [&]() -> awaitable<void> { ha = co_await a->Handshake(proto::Role::SPAWNER, "s1"); },
      asio::detached);
  asio::co_spawn(
      io, [&]() -> awaitable<void> { hb = co_await b->Handshake(proto::Role::DAEMON, "d1"); },
      asio::detached);
  RunUntil(io, [&] { return ha && hb; });
  if (!ha->ok() || !hb->ok()) {
    std::fprintf(stderr, "handshake failed: %s / %s\n", ha->ToString().c_str(),
                 hb->ToString().c_str());
    std::exit(1);
  }
  Timings t;
  // The daemon end echoes every small message and acknowledges every big one.
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (;;) {
          auto m = co_await b->Receive();
          if (!m.ok()) co_return;
          b->SendEnvelope([](proto::Envelope::Builder e) { e.initHeartbeatAck().setKnown(true); });
        }
      },
      asio::detached);
  int answers = 0;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (;;) {
          auto m = co_await a->Receive();
          if (!m.ok()) co_return;
          ++answers;
        }
      },
      asio::detached);
  auto start = Clock::now();
  for (int i = 0; i < round_trips; ++i) {
    a->SendEnvelope([](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("d1"); });
    RunUntil(io, [&] { return answers == i + 1; });
  }
  t.round_trip_us = SecondsSince(start) * 1e6 / round_trips;
  const std::string mb(1 << 20, 'x');
  answers = 0;
  start = Clock::now();
  for (int i = 0; i < megabytes; ++i) {
    a->SendEnvelope([&](proto::Envelope::Builder e) {
      auto d = e.initDependencyData();
      d.setJob("bench");
      d.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(mb.data()), mb.size()));
    });
    RunUntil(io, [&] { return answers == i + 1; });
  }
  t.megabyte_ms = SecondsSince(start) * 1e3 / megabytes;
  a->Close();
  b->Close();
  io.poll();
  return t;
}

}  // namespace aiac::bench
