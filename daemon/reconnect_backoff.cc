#include "daemon/reconnect_backoff.h"

#include <algorithm>
#include <cmath>

namespace aiac::daemon {

std::chrono::milliseconds ReconnectBackoff::Ceiling(unsigned setbacks) const {
  if (setbacks == 0 || base.count() <= 0) return std::chrono::milliseconds(0);
  // base * 2^(setbacks - 1), without overflowing for long outages.
  const unsigned doublings = std::min(setbacks - 1, 30u);
  const double spread =
      static_cast<double>(base.count()) * std::ldexp(1.0, static_cast<int>(doublings));
  return std::chrono::milliseconds(
      static_cast<long long>(std::min(spread, static_cast<double>(std::max(cap, base).count()))));
}

std::chrono::milliseconds ReconnectBackoff::Wait(unsigned setbacks, double uniform) const {
  const double u = std::clamp(uniform, 0.0, 1.0);
  return std::chrono::milliseconds(
      static_cast<long long>(std::floor(u * static_cast<double>(Ceiling(setbacks).count()))));
}

}  // namespace aiac::daemon
