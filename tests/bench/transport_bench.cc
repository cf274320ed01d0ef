// The secured transport against raw Asio TCP and against the same transport without
// encryption, measured in the same run over loopback, both ends in this process
// (transport_timings.h):
//   - round trip of a small message (a Heartbeat envelope; 64 bytes for raw TCP),
//   - 1 MB one way plus a small acknowledgement (a DependencyData of 1 MB).
// Prints each time and the ratios tls/raw, plain/raw and tls/plain (1.00x = as fast).
// Run: build/bin/transport_bench [round_trips] [megabytes]
#include <cstdio>
#include <cstdlib>

#include "transport_timings.h"

using namespace aiac;
using aiac::bench::Framed;
using aiac::bench::Timings;
using aiac::net::Transport;

int main(int argc, char** argv) {
  const int round_trips = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int megabytes = argc > 2 ? std::atoi(argv[2]) : 20;
  // Warm-up, then the measured runs in an interleaved order.
  Framed(Transport::kTls, round_trips / 10 + 1, 2);
  const Timings raw = bench::RawTcp(round_trips, megabytes);
  const Timings plain = Framed(Transport::kPlaintextBenchmarkOnly, round_trips, megabytes);
  const Timings tls = Framed(Transport::kTls, round_trips, megabytes);
  std::printf("transport_bench: %d round trips, %d x 1 MB, loopback, one thread\n", round_trips,
              megabytes);
  std::printf("  %-28s %12s %12s\n", "", "round trip", "1 MB");
  std::printf("  %-28s %9.1f us %9.2f ms\n", "raw Asio TCP", raw.round_trip_us, raw.megabyte_ms);
  std::printf("  %-28s %9.1f us %9.2f ms\n", "framed, no encryption", plain.round_trip_us,
              plain.megabyte_ms);
  std::printf("  %-28s %9.1f us %9.2f ms\n", "framed, TLS 1.3 (aiac)", tls.round_trip_us,
              tls.megabyte_ms);
  std::printf("  ratio tls/raw:    round trip %.2fx, 1 MB %.2fx\n",
              tls.round_trip_us / raw.round_trip_us, tls.megabyte_ms / raw.megabyte_ms);
  std::printf("  ratio plain/raw:  round trip %.2fx, 1 MB %.2fx\n",
              plain.round_trip_us / raw.round_trip_us, plain.megabyte_ms / raw.megabyte_ms);
  std::printf("  ratio tls/plain:  round trip %.2fx, 1 MB %.2fx  (what encryption costs)\n",
              tls.round_trip_us / plain.round_trip_us, tls.megabyte_ms / plain.megabyte_ms);
  return 0;
}
