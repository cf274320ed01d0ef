// How long a daemon waits before it dials a super-node again: exponential backoff with full
// jitter (a uniform wait in [0, min(cap, base * 2^(setbacks - 1))]). When a super-node holding
// thousands of daemons dies, they all find out within a heartbeat; dialing the next one at once,
// they would arrive together, overflow its handshake caps, be closed and come back together
// (a thundering herd). Drawn at random, the first reconnections spread over `base`, and each
// failure in a row doubles the spread, so a saturated super-node sees the arrivals thin out.
// Pure: the caller draws the uniform number.
#pragma once

#include <chrono>

namespace aiac::daemon {

struct ReconnectBackoff {
  // The spread of the first reconnection after a loss. Default: 1000 ms.
  std::chrono::milliseconds base{1000};
  // The largest spread, however many setbacks in a row. Default: 8000 ms.
  std::chrono::milliseconds cap{8000};

  // The `reconnect_spread_ms` option's backoff: that first spread, capped at 8 times it.
  static ReconnectBackoff WithSpread(std::chrono::milliseconds spread) {
    return {spread, 8 * spread};
  }

  // The longest wait after `setbacks` in a row (a lost super-node, failed dials): 0 for none.
  std::chrono::milliseconds Ceiling(unsigned setbacks) const;
  // The wait after `setbacks` in a row, for `uniform` drawn in [0, 1).
  std::chrono::milliseconds Wait(unsigned setbacks, double uniform) const;
};

}  // namespace aiac::daemon
