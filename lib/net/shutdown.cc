#include "net/shutdown.h"

#include <csignal>
#include <utility>

namespace aiac::net {

Shutdown::Shutdown(asio::io_context& io, Logger log, std::function<awaitable<void>()> stop,
                   std::chrono::seconds limit)
    : io_(io),
      log_(std::move(log)),
      stop_(std::move(stop)),
      limit_(limit),
      signals_(io, SIGINT, SIGTERM),
      limit_timer_(io) {
  WaitForSignal();
}

void Shutdown::WaitForSignal() {
  signals_.async_wait([this](error_code ec, int sig) {
    if (ec) return;
    if (begun_) {
      log_->warn("signal {} again: exiting without waiting further", sig);
      io_.stop();
      return;
    }
    log_->info("signal {}: stopping", sig);
    Begin();
    WaitForSignal();
  });
}

void Shutdown::Begin(std::chrono::milliseconds linger) {
  if (std::exchange(begun_, true)) return;
  limit_timer_.expires_after(limit_);
  limit_timer_.async_wait([this](error_code ec) {
    if (ec) return;
    log_->error("stopping took over {} s: exiting without waiting further", limit_.count());
    io_.stop();
  });
  asio::co_spawn(
      io_,
      [this, linger]() -> awaitable<void> {
        co_await stop_();
        asio::steady_timer wind_down(io_, linger);
        co_await wind_down.async_wait(use_nothrow);
        limit_timer_.cancel();
        io_.stop();
      },
      asio::detached);
}

}  // namespace aiac::net
