// A daemon's measured power, measured again while it is idle: the figure taken at its first start
// (or kept in DATA/power from an earlier one) says what the host delivered then; a host whose
// other load changed (on a loaded host the figure ranged 1.2 to 10.5) would otherwise be mapped
// on a figure that no longer holds. Every `period`, when no task runs, the benchmark runs again
// (200 ms, on the io thread: nothing else is waiting on an idle daemon); a figure more than
// kChange away from the registered one is kept in DATA/power and registered anew.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/logging.h"
#include "net/asio.h"
#include "net/task_group.h"

namespace aiac::daemon {

class PowerWatch {
 public:
  // A relative change past which the new figure is registered.
  static constexpr double kChange = 0.10;

  struct Hooks {
    std::function<bool()> busy;              // a task runs here
    std::function<double()> measure;         // the benchmark
    std::function<void(double)> registered;  // the new figure: keep it, register it
  };
  PowerWatch(net::asio::any_io_executor executor, double power, std::chrono::milliseconds period,
             Hooks hooks, Logger log);
  // Starts the periodic check (nothing when the period is 0).
  void Start();
  net::awaitable<void> Stop();
  double power() const { return power_; }

 private:
  net::awaitable<void> Run();
  double power_;
  std::chrono::milliseconds period_;
  Hooks hooks_;
  Logger log_;
  net::asio::steady_timer timer_;
  net::TaskGroup tasks_;
  bool stopping_ = false;
};

}  // namespace aiac::daemon
