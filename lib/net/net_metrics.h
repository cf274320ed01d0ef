// The metrics every process's network layer keeps (docs/operations.md, "Metrics"): connections
// open, handshakes that failed and why, frames and bytes each way. Kept by net/connection.cc.
#pragma once

#include <string_view>

#include "core/metrics.h"

namespace aiac::net {

struct NetMetrics {
  metrics::Gauge& connections_open;
  metrics::Counter& frames_sent;
  metrics::Counter& frames_received;
  metrics::Counter& bytes_sent;
  metrics::Counter& bytes_received;

  // reason: tls (the TLS handshake failed: most often another cluster key), version (a protocol
  // version outside what this build speaks), identity (certificate, role or id refused),
  // refused (the peer refused us), protocol (a malformed or oversized frame), timeout, closed.
  metrics::Counter& HandshakeFailures(std::string_view reason);

  static NetMetrics& Get();
};

}  // namespace aiac::net
