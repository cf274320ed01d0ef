// Coroutines spawned as one group, so that their owner can wait until every one of them has
// ended before it goes away: a service's Stop() closes what its coroutines wait on, then waits
// for its group, and only then may the service be destroyed (a coroutine still suspended would
// resume into freed memory).
//
// Single-threaded: use from the io_context's thread. The count lives in shared state, so a
// coroutine that ends after the group was destroyed (a misuse, which Wait() exists to prevent)
// touches nothing freed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/logging.h"
#include "net/asio.h"

namespace aiac::net {

class TaskGroup {
 public:
  explicit TaskGroup(asio::any_io_executor executor);

  // Starts `task` on the group's executor; an exception escaping it is logged as
  // "`what`: ..." instead of being swallowed.
  void Spawn(awaitable<void> task, Logger log, std::string what);
  // Coroutines started and not ended yet.
  size_t live() const { return state_->live; }
  // Completes once no coroutine of the group is live (at once when none is). Coroutines
  // spawned meanwhile are waited for too.
  awaitable<void> Wait();

 private:
  struct State {
    explicit State(asio::any_io_executor executor)
        : idle(executor, asio::steady_timer::time_point::max()) {}
    size_t live = 0;
    // Never expires: Wait() waits on it, and it is cancelled (which wakes every waiter and
    // keeps the expiry) each time live drops to 0.
    asio::steady_timer idle;
  };
  asio::any_io_executor executor_;
  std::shared_ptr<State> state_;
};

}  // namespace aiac::net
