// A task's runner in its app's child process (app_child.h): once the task is set up there
// (ChildTask), its TaskRunner runs in the child too, so that an iteration never waits for the
// daemon and the daemon never waits for an iteration. The daemon's calls (runtime::Runner) go to
// the child as commands; the runner's callbacks come back as events.
//
// Both travel on the daemon's io thread, without a thread of their own in between (one hand-off
// less for every value a task sends). Commands are queued and written as the child reads them, so
// a child busy in a long iteration never holds the io thread up; a neighbour's value still queued
// is replaced by a newer one of the same neighbour (asynchronous runs keep only the newest anyway,
// runtime::Mailbox). What could take the io thread long runs on a side thread of this runner's:
// a checkpoint's hashing (the session's checkpoint callback), the result, and reaping a dead
// child; they keep their order there (docs/fault-tolerance.md, "When the app crashes").
//
// When the child dies, or sends no event for the stall limit once started (a running task
// reports its progress every RunnerOptions::progress_period, waiting or not), the child is killed
// and reaped and `finished` gets the crash (the session finds it in state()): nothing the dead
// app sent after its last whole event is used.
#pragma once

#include <memory>
#include <thread>

#include "daemon/app_child.h"
#include "net/asio.h"
#include "runtime/task_runner.h"

namespace aiac::daemon {

class ChildRunner final : public runtime::Runner {
 public:
  // Starts `task`'s runner in its child with `options` (its iteration_time and clock stay unused:
  // an emulated node's tasks run in the daemon). The callbacks are called on `io`'s thread, and
  // checkpoint and finished on the side thread. The calls below may come from any thread.
  static Result<std::unique_ptr<ChildRunner>> Run(net::asio::io_context& io,
                                                  std::unique_ptr<ChildTask> task,
                                                  const runtime::RunnerOptions& options,
                                                  runtime::RunnerCallbacks callbacks);
  // Kills and reaps the child and joins the side thread. From its start no io-thread callback
  // begins (one under way may end after it).
  ~ChildRunner() override;

  void Start() override;
  void Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged,
           uint64_t seen, uint64_t incarnation, uint64_t seen_incarnation) override;
  void Query(uint64_t round) override;
  void Snapshot(uint64_t round) override;
  void Tighten(double factor) override;
  void Move(runtime::ItemMove move) override;
  void Halt() override;

  class Channel;  // the socket's end on the io thread (app_child_runner.cc)

 private:
  explicit ChildRunner(std::shared_ptr<Channel> channel);

  std::shared_ptr<Channel> channel_;
  std::thread side_;
};

}  // namespace aiac::daemon
