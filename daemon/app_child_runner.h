// A task's runner in its app's child process (app_child.h): once the task is set up there
// (ChildTask), its TaskRunner runs in the child too, so that an iteration never waits for the
// daemon and the daemon never waits for an iteration (a round trip per iteration costs a
// scheduling hand-off each way, which on a loaded machine is more than many an iteration). The
// daemon's calls (runtime::Runner) go to the child as commands; the runner's callbacks come back
// as events, read on a thread of this object's own and handed to the session's
// RunnerCallbacks, as a TaskRunner here would call them from its thread.
//
// When the child dies, or sends no event for the stall limit once started (a running task
// reports its progress every RunnerOptions::progress_period, waiting or not), the child is killed
// and reaped and `finished` gets the crash (the session finds it in state()): nothing the dead
// app sent after its last whole event is used.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "daemon/app_child.h"
#include "proto/app_child.capnp.h"
#include "runtime/task_runner.h"

namespace aiac::daemon {

class ChildRunner final : public runtime::Runner {
 public:
  // Starts `task`'s runner in its child with `options` (its iteration_time and clock stay unused:
  // an emulated node's tasks run in the daemon). The callbacks are called on this object's reader
  // thread.
  static Result<std::unique_ptr<ChildRunner>> Run(std::unique_ptr<ChildTask> task,
                                                  const runtime::RunnerOptions& options,
                                                  runtime::RunnerCallbacks callbacks);
  // Ends the child (kills and reaps it) and joins the reader thread.
  ~ChildRunner() override;

  void Start() override;
  void Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged,
           uint64_t seen, uint64_t incarnation, uint64_t seen_incarnation) override;
  void Query(uint64_t round) override;
  void Snapshot(uint64_t round) override;
  void Tighten(double factor) override;
  void Move(runtime::ItemMove move) override;
  void Halt() override;

 private:
  ChildRunner(std::unique_ptr<ChildTask> task, runtime::RunnerCallbacks callbacks,
              uint64_t start_iteration);
  // Sends one command; a child that is gone is noticed by the reader.
  template <typename Fill>
  void Command(const Fill& fill);
  void Read();
  // One event; false after `finished`.
  bool Dispatch(proto::RunnerEvent::Reader e);
  // Counts the iterations up to `iteration` in the daemon's aiac_task_iterations_total.
  void Reached(uint64_t iteration);

  std::unique_ptr<ChildTask> task_;
  runtime::RunnerCallbacks cb_;
  std::mutex write_mu_;
  // When Start was called (the epoch before): the stall counts from then at the earliest.
  std::atomic<std::chrono::steady_clock::time_point> started_at_{};
  std::atomic<bool> closing_{false};  // the destructor shut the socket down
  uint64_t last_iteration_;           // reader thread only
  std::thread reader_;
};

}  // namespace aiac::daemon
