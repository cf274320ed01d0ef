// A one-shot slot that a coroutine awaits (with a deadline) until another coroutine fills it:
// how a request sent on a connection is matched with the reply its reader loop receives.
// Single-threaded, like everything on one io_context.
#pragma once

#include <chrono>
#include <optional>

#include "net/asio.h"

namespace aiac::net {

template <typename T>
class ReplySlot {
 public:
  explicit ReplySlot(asio::any_io_executor executor)
      : timer_(executor, std::chrono::steady_clock::time_point::max()) {}

  // Fills the slot and wakes the waiter; later fills are ignored.
  void Fill(T value) {
    if (value_) return;
    value_ = std::move(value);
    timer_.cancel();
  }
  // Wakes the waiter with no value (the connection closed).
  void Abandon() { timer_.cancel(); }

  // The value, or nullopt when `timeout` passed or the slot was abandoned.
  awaitable<std::optional<T>> Wait(std::chrono::milliseconds timeout) {
    if (!value_) {
      timer_.expires_after(timeout);
      co_await timer_.async_wait(use_nothrow);
    }
    co_return std::move(value_);
  }

 private:
  asio::steady_timer timer_;
  std::optional<T> value_;
};

}  // namespace aiac::net
