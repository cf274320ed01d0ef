// A daemon's measure of its link to one peer daemon (docs/balancing.md): DistPM's latency alpha
// and transfer time beta of a channel (distpm-workload-migration.md eq. 1, predicted with the
// "sliding-window mean-based method" on historical measurements, as the NWS toolkit the paper
// uses does), from the traffic itself. The peer acknowledges every frame it reads on a
// monitored connection at once, in order (values, items passed on, and a tiny probe a second), so
// each frame gives a round trip: alpha out, the frame's bytes at beta per byte, alpha back (the
// acknowledgement's few bytes are neglected). Hence, over the last kWindow frames of each kind:
//
//   alpha = half the mean round trip of the small frames (under kLeastBytes: latency only),
//   beta  = the mean of (round trip - 2 alpha) / bytes over the large ones, at least 0.
//
// Pure: the round trips are passed in.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/sliding_window.h"

namespace aiac::monitor {

class LinkMonitor {
 public:
  static constexpr size_t kWindow = 16;
  // Frames this small say how long the link takes to answer, not how fast it carries bytes.
  static constexpr uint64_t kLeastBytes = 4096;

  LinkMonitor() : small_(kWindow), large_(kWindow), large_bytes_(kWindow) {}
  // A frame of `bytes` came back acknowledged `round_trip_s` after it was sent.
  void Add(uint64_t bytes, double round_trip_s);
  // A latency is known (a small frame came back).
  bool measured() const { return small_.size() > 0; }
  double alpha() const { return small_.Mean() / 2; }
  // Seconds per byte; 0 until a large frame came back.
  double seconds_per_byte() const;
  size_t samples() const { return small_.size() + large_.size(); }

 private:
  SlidingWindowMean small_;        // round trips of small frames
  SlidingWindowMean large_;        // round trips of large frames...
  SlidingWindowMean large_bytes_;  // ...and their sizes
};

}  // namespace aiac::monitor
