#include "monitor/link_monitor.h"

#include <algorithm>

namespace aiac::monitor {

void LinkMonitor::Add(uint64_t bytes, double round_trip_s) {
  if (!(round_trip_s >= 0)) return;
  if (bytes < kLeastBytes) {
    small_.Add(round_trip_s);
  } else {
    large_.Add(round_trip_s);
    large_bytes_.Add(static_cast<double>(bytes));
  }
}

double LinkMonitor::seconds_per_byte() const {
  if (large_.size() == 0) return 0;
  // The means' ratio rather than the mean of ratios: a big frame's time weighs as much as it
  // took, and one small "large" frame's noise does not dominate.
  return std::max(0.0, (large_.Mean() - 2 * alpha()) / large_bytes_.Mean());
}

}  // namespace aiac::monitor
