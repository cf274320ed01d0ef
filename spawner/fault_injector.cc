#include "spawner/fault_injector.h"

#include <chrono>

namespace aiac::spawner {

namespace asio = net::asio;

FaultInjector::FaultInjector(FaultPlan plan, std::function<std::vector<std::string>()> candidates,
                             std::function<bool(const std::string&)> kill, Logger log)
    : plan_(plan),
      candidates_(std::move(candidates)),
      kill_(std::move(kill)),
      log_(std::move(log)),
      rng_(plan.seed) {}

net::awaitable<void> FaultInjector::Run() {
  if (plan_.every_seconds <= 0) co_return;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(plan_.every_seconds));
  // The clock starts once the tasks run: before that there is nothing to kill.
  while (candidates_().empty()) {
    timer.expires_after(std::chrono::milliseconds(50));
    co_await timer.async_wait(net::use_nothrow);
  }
  while (injected_ < plan_.count) {
    timer.expires_after(period);
    auto [ec] = co_await timer.async_wait(net::use_nothrow);
    if (ec) co_return;
    auto victims = candidates_();
    if (victims.empty()) continue;  // every task is being replaced: try again next period
    const std::string victim =
        victims[std::uniform_int_distribution<size_t>(0, victims.size() - 1)(rng_)];
    ++injected_;
    log_->warn("fault injection {}/{}: killing daemon {}", injected_, plan_.count, victim);
    if (!kill_(victim)) log_->warn("fault injection: could not kill daemon {}", victim);
  }
}

}  // namespace aiac::spawner
