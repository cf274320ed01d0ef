// Group commit on one io_context: coroutines that each staged a change await Wait(), and one
// call of `commit` writes everything staged so far for all of them. The commit runs as a posted
// handler, after the handlers already queued (the other messages read in the same poll), so the
// changes that arrive together share one synced write; those that arrive while it runs go to the
// next. Single-threaded, like everything on one io_context.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "net/asio.h"

namespace aiac::net {

class GroupCommit {
 public:
  GroupCommit(asio::any_io_executor executor, std::function<void()> commit)
      : executor_(std::move(executor)), commit_(std::move(commit)) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Resumes once a commit that began after this call has ended: what the caller staged before
  // calling is written.
  awaitable<void> Wait();

  // Commits run so far.
  uint64_t commits() const { return commits_; }

 private:
  struct Batch {
    explicit Batch(const asio::any_io_executor& executor)
        : done(executor, std::chrono::steady_clock::time_point::max()) {}
    asio::steady_timer done;
  };

  asio::any_io_executor executor_;
  std::function<void()> commit_;
  std::shared_ptr<Batch> open_;  // the batch the next commit ends; null when none is posted
  uint64_t commits_ = 0;
};

}  // namespace aiac::net
