#include "emulation/link_queue.h"

#include <algorithm>

namespace aiac::emulation {

LinkQueue::LinkQueue(LinkFigures figures)
    : figures_(figures), max_queue_(std::max(0.1, 2 * figures.latency_seconds)) {}

std::optional<double> LinkQueue::Admit(double now, size_t bytes) {
  const double start = std::max(now, free_at_);
  if (start - now > max_queue_) return std::nullopt;
  free_at_ = start + static_cast<double>(bytes) / figures_.bytes_per_second;
  return free_at_ + figures_.latency_seconds;
}

}  // namespace aiac::emulation
