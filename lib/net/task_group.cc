#include "net/task_group.h"

#include "net/describe_exception.h"

namespace aiac::net {

TaskGroup::TaskGroup(asio::any_io_executor executor)
    : executor_(executor), state_(std::make_shared<State>(executor)) {}

void TaskGroup::Spawn(awaitable<void> task, Logger log, std::string what) {
  ++state_->live;
  asio::co_spawn(
      executor_, std::move(task),
      [state = state_, log = std::move(log), what = std::move(what)](std::exception_ptr e) {
        if (e) log->error("{}: {}", what, DescribeException(e));
        if (--state->live == 0) state->idle.cancel();
      });
}

awaitable<void> TaskGroup::Wait() {
  std::shared_ptr<State> state = state_;
  while (state->live > 0) co_await state->idle.async_wait(use_nothrow);
}

}  // namespace aiac::net
