// How a process stops: on SIGINT or SIGTERM, or when Begin() is called (a fatal error), it
// awaits `stop` (its services' Stop(), which complete once their coroutines and threads ended),
// lets `linger` pass (what is being sent still has to reach its peer), then stops the loop. A
// second signal, or a stop that takes longer than `limit`, stops the loop at once, with a log
// line: a process always exits.
#pragma once

#include <chrono>
#include <functional>

#include "core/logging.h"
#include "net/asio.h"

namespace aiac::net {

class Shutdown {
 public:
  Shutdown(asio::io_context& io, Logger log, std::function<awaitable<void>()> stop,
           std::chrono::seconds limit);

  void Begin(std::chrono::milliseconds linger = std::chrono::milliseconds(0));
  bool begun() const { return begun_; }

 private:
  void WaitForSignal();

  asio::io_context& io_;
  Logger log_;
  std::function<awaitable<void>()> stop_;
  std::chrono::seconds limit_;
  asio::signal_set signals_;
  asio::steady_timer limit_timer_;
  bool begun_ = false;
};

}  // namespace aiac::net
