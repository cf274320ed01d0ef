#include "net/group_commit.h"

namespace aiac::net {

awaitable<void> GroupCommit::Wait() {
  if (!open_) {
    open_ = std::make_shared<Batch>(executor_);
    asio::post(executor_, [this, batch = open_] {
      open_.reset();  // whoever waits from now on staged after this commit read the changes
      commit_();
      ++commits_;
      batch->done.cancel();
    });
  }
  const std::shared_ptr<Batch> batch = open_;
  co_await batch->done.async_wait(use_nothrow);
}

}  // namespace aiac::net
