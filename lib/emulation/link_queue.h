// One direction of an emulated link in aiac-emulate's user-space switch (docs/emulation.md):
// packets leave one after another at the link's rate and arrive its latency after they left,
// which is what netem's `delay` with `rate` does. A queue that already holds more than
// max(0.1 s, 2 x latency) of traffic drops the packet, as a router's full queue does, so that a
// sender's TCP slows down instead of the delay growing without bound.
//
// Pure: times are passed in (seconds on any clock that does not go back).
#pragma once

#include <cstddef>
#include <optional>

#include "emulation/emulated_node.h"

namespace aiac::emulation {

class LinkQueue {
 public:
  // `figures.bytes_per_second` above 0.
  explicit LinkQueue(LinkFigures figures);

  // When a packet of `bytes` offered at `now` reaches the far end; nullopt when it is dropped.
  std::optional<double> Admit(double now, size_t bytes);

  double max_queue_seconds() const { return max_queue_; }

 private:
  LinkFigures figures_;
  double max_queue_;
  double free_at_ = 0;  // when the last admitted packet has left
};

}  // namespace aiac::emulation
