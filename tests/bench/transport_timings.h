// Transport timings over loopback, both ends in this process (transport_bench, transport_eval):
// the round trip of a small message and 1 MB one way plus a small acknowledgement, through raw
// Asio TCP and through our framed transport (TLS 1.3, or without encryption for comparison).
#pragma once

#include "net/connection.h"

namespace aiac::bench {

struct Timings {
  double round_trip_us = 0;
  double megabyte_ms = 0;
};

// 64-byte messages and 1 MB writes on a raw TCP socket pair (TCP_NODELAY).
Timings RawTcp(int round_trips, int megabytes);
// Heartbeat envelopes answered by HeartbeatAck, and DependencyData of 1 MB acknowledged, through
// Connection with `transport`.
Timings Framed(net::Transport transport, int round_trips, int megabytes);

}  // namespace aiac::bench
