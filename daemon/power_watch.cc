#include "daemon/power_watch.h"

#include <cmath>

namespace aiac::daemon {

PowerWatch::PowerWatch(net::asio::any_io_executor executor, double power,
                       std::chrono::milliseconds period, Hooks hooks, Logger log)
    : power_(power),
      period_(period),
      hooks_(std::move(hooks)),
      log_(std::move(log)),
      timer_(executor),
      tasks_(executor) {}

void PowerWatch::Start() {
  if (period_.count() > 0) tasks_.Spawn(Run(), log_, "power watch");
}

net::awaitable<void> PowerWatch::Stop() {
  stopping_ = true;
  timer_.cancel();
  co_await tasks_.Wait();
}

net::awaitable<void> PowerWatch::Run() {
  while (!stopping_) {
    timer_.expires_after(period_);
    co_await timer_.async_wait(net::use_nothrow);
    if (stopping_) break;
    if (hooks_.busy()) continue;  // a task's own load would be measured too: next time
    const double now = hooks_.measure();
    if (!(now > 0) || !std::isfinite(now)) continue;
    if (std::abs(now - power_) <= kChange * power_) {
      log_->debug("power measured again while idle: {:.2f} (registered {:.2f})", now, power_);
      continue;
    }
    log_->info("power measured again while idle: {:.2f}, was {:.2f}; registered anew", now, power_);
    power_ = now;
    hooks_.registered(now);
  }
}

}  // namespace aiac::daemon
