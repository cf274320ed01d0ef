// The secured transport against raw Asio TCP and against the same transport without
// encryption, measured in the same run over loopback, both ends in this process:
//   - round trip of a small message (a Heartbeat envelope; 64 bytes for raw TCP),
//   - 1 MB one way plus a small acknowledgement (a DependencyData of 1 MB).
// Prints each time and the ratios tls/raw, plain/raw and tls/plain (1.00x = as fast).
// Run: build/bin/transport_bench [round_trips] [megabytes]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

#include "net/connection.h"
#include "support/loopback.h"

using namespace aiac;
using namespace aiac::net;
using Clock = std::chrono::steady_clock;

namespace {

using testing::ConnectLoopback;

struct Timings {
  double round_trip_us = 0;
  double megabyte_ms = 0;
};

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Timings Raw(int round_trips, int megabytes) {
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
  t.round_trip_us = Since(start) * 1e6 / round_trips;
  std::string mb(1 << 20, 'x'), in(1 << 20, '\0');
  start = Clock::now();
  for (int i = 0; i < megabytes; ++i) {
    // The reader runs on a thread: a 1 MB write does not fit the socket buffers.
    std::thread reader([&] {
      asio::read(b, asio::buffer(in));
      asio::write(b, asio::buffer(small));
    });
    asio::write(a, asio::buffer(mb));
    asio::read(a, asio::buffer(small));
    reader.join();
  }
  t.megabyte_ms = Since(start) * 1e3 / megabytes;
  return t;
}

// Runs `io` until `done` holds.
void RunUntil(asio::io_context& io, const std::function<bool()>& done) {
  while (!done()) io.run_one();
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
  asio::co_spawn(io, [&]() -> awaitable<void> { ha = co_await a->Handshake(proto::Role::SPAWNER, "s1"); }, asio::detached);
  asio::co_spawn(io, [&]() -> awaitable<void> { hb = co_await b->Handshake(proto::Role::DAEMON, "d1"); }, asio::detached);
  RunUntil(io, [&] { return ha && hb; });
  if (!ha->ok() || !hb->ok()) {
    std::fprintf(stderr, "handshake failed: %s / %s\n", ha->ToString().c_str(), hb->ToString().c_str());
    std::exit(1);
  }
  Timings t;
  // The daemon end echoes every small message and acknowledges every big one.
  asio::co_spawn(io, [&]() -> awaitable<void> {
    for (;;) {
      auto m = co_await b->Receive();
      if (!m.ok()) co_return;
      b->SendEnvelope([](proto::Envelope::Builder e) { e.initHeartbeatAck().setKnown(true); });
    }
  }, asio::detached);
  int answers = 0;
  asio::co_spawn(io, [&]() -> awaitable<void> {
    for (;;) {
      auto m = co_await a->Receive();
      if (!m.ok()) co_return;
      ++answers;
    }
  }, asio::detached);
  auto start = Clock::now();
  for (int i = 0; i < round_trips; ++i) {
    a->SendEnvelope([](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("d1"); });
    RunUntil(io, [&] { return answers == i + 1; });
  }
  t.round_trip_us = Since(start) * 1e6 / round_trips;
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
  t.megabyte_ms = Since(start) * 1e3 / megabytes;
  a->Close();
  b->Close();
  io.poll();
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int round_trips = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int megabytes = argc > 2 ? std::atoi(argv[2]) : 20;
  // Warm-up, then the measured runs in an interleaved order.
  Framed(Transport::kTls, round_trips / 10 + 1, 2);
  const Timings raw = Raw(round_trips, megabytes);
  const Timings plain = Framed(Transport::kPlaintextBenchmarkOnly, round_trips, megabytes);
  const Timings tls = Framed(Transport::kTls, round_trips, megabytes);
  std::printf("transport_bench: %d round trips, %d x 1 MB, loopback, one thread\n", round_trips, megabytes);
  std::printf("  %-28s %12s %12s\n", "", "round trip", "1 MB");
  std::printf("  %-28s %9.1f us %9.2f ms\n", "raw Asio TCP", raw.round_trip_us, raw.megabyte_ms);
  std::printf("  %-28s %9.1f us %9.2f ms\n", "framed, no encryption", plain.round_trip_us, plain.megabyte_ms);
  std::printf("  %-28s %9.1f us %9.2f ms\n", "framed, TLS 1.3 (aiac)", tls.round_trip_us, tls.megabyte_ms);
  std::printf("  ratio tls/raw:    round trip %.2fx, 1 MB %.2fx\n", tls.round_trip_us / raw.round_trip_us,
              tls.megabyte_ms / raw.megabyte_ms);
  std::printf("  ratio plain/raw:  round trip %.2fx, 1 MB %.2fx\n", plain.round_trip_us / raw.round_trip_us,
              plain.megabyte_ms / raw.megabyte_ms);
  std::printf("  ratio tls/plain:  round trip %.2fx, 1 MB %.2fx  (what encryption costs)\n",
              tls.round_trip_us / plain.round_trip_us, tls.megabyte_ms / plain.megabyte_ms);
  return 0;
}
