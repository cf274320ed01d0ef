#include "net/net_metrics.h"

#include <string>

namespace aiac::net {
namespace {

metrics::Counter& Directed(const char* name, const char* help, const char* direction) {
  return metrics::Registry::Process().GetCounter(name, help, {{"direction", direction}});
}

constexpr const char* kFramesHelp = "Cap'n Proto frames written or read, each way";
constexpr const char* kBytesHelp = "Bytes of frames written or read (before TLS), each way";

}  // namespace

NetMetrics& NetMetrics::Get() {
  static NetMetrics* m = new NetMetrics{
      metrics::Registry::Process().GetGauge("aiac_connections_open",
                                            "Peer connections open, authenticated or not"),
      Directed("aiac_frames_total", kFramesHelp, "sent"),
      Directed("aiac_frames_total", kFramesHelp, "received"),
      Directed("aiac_bytes_total", kBytesHelp, "sent"),
      Directed("aiac_bytes_total", kBytesHelp, "received"),
  };
  return *m;
}

metrics::Counter& NetMetrics::HandshakeFailures(std::string_view reason) {
  return metrics::Registry::Process().GetCounter("aiac_handshake_failures_total",
                                                 "Handshakes that failed, by reason",
                                                 {{"reason", std::string(reason)}});
}

}  // namespace aiac::net
