// Fault injection for test runs (`aiac-spawner run --kill-every S --kill-count K [--kill-seed X]`):
// every S seconds once the tasks run, one daemon chosen at random among those running a task is
// killed, K in all. With --local the spawner SIGKILLs the process; with daemons started by
// hand it asks the daemon to exit at once (an Exit message, obeyed only from the spawner of the
// daemon's job). What follows is the run's ordinary failure handling.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/logging.h"
#include "net/asio.h"

namespace aiac::spawner {

struct FaultPlan {
  double every_seconds = 0;  // 0: no injection
  uint32_t count = 1;
  uint64_t seed = 1;
};

class FaultInjector {
 public:
  // `candidates()`: the daemons running a task now (empty before the tasks start);
  // `kill(id)`: kills one, returning false when it could not.
  FaultInjector(FaultPlan plan, std::function<std::vector<std::string>()> candidates,
                std::function<bool(const std::string&)> kill, Logger log);

  // Runs the schedule to its end (or until the io_context stops).
  net::awaitable<void> Run();
  uint32_t injected() const { return injected_; }

 private:
  FaultPlan plan_;
  std::function<std::vector<std::string>()> candidates_;
  std::function<bool(const std::string&)> kill_;
  Logger log_;
  std::mt19937_64 rng_;
  uint32_t injected_ = 0;
};

}  // namespace aiac::spawner
