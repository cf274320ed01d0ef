// A task whose app runs in a child process of the daemon (aiac-app-child), so that an app that
// crashes, aborts, lets an exception escape, exceeds its limits or hangs ends that process and
// not the daemon (docs/fault-tolerance.md, "When the app crashes").
//
// ChildTask is an app::Task that forwards every call over a socketpair (app_child_wire.h): the
// values to absorb and InputsFinal travel with the next call, and each answer carries the
// figures read between calls (LocalChange, LocallyConverged, WorkDone, ...) and, after Iterate,
// the outgoing values. The daemon builds, restores and tightens a task through it (one answer
// per call, each within the stall limit), then runs the task's runner in the child as well
// (ChildRunner, app_child_runner.h), so that its iterations never wait on a round trip.
//
// When the child dies or does not answer within the stall limit, the task is dead for good:
// ChildTask kills and reaps the child, keeps an AppCrash (the signal or exit code, the last
// lines of its stderr, with the backtrace its signal handler wrote), and every call fails from
// then on (the calls without a status return empty values, and health() says why).
//
// Calls come from one thread at a time; crash() and health() may be read from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/app.h"
#include "core/status.h"
#include "proto/app_child.capnp.h"

namespace aiac::daemon {

// Why an app's process ended.
struct AppCrash {
  std::string cause;        // "SIGSEGV", "exit code 3", "hung: no answer in 30 s", ...
  std::string stderr_tail;  // its last lines (at most 20), newline-separated
};

struct AppChildSpec {
  std::string executable;    // aiac-app-child
  std::string plugin;        // the plugin file, checked against the task's hash and signature
  std::string stderr_path;   // the child's stdout and stderr (created, truncated)
  uint64_t memory_mb = 0;    // address space (RLIMIT_AS); 0: none
  uint64_t cpu_seconds = 0;  // CPU time (RLIMIT_CPU); 0: none
  int threads = 1;           // OMP_THREAD_LIMIT in the child's environment; 0: the daemon's
  // A call that takes longer has hung: the child is killed. 0: no limit.
  std::chrono::milliseconds stall{0};
  std::shared_ptr<const app::Log> log;  // where the app's lines go
};

// What a ChildTask's owner reads while it runs.
class AppChildState {
 public:
  std::optional<AppCrash> crash() const;
  // Ok while the child lives and the calls that return no status went well; the crash as an
  // error after (or the app's error in such a call: values absorbed with it are refused).
  Status health() const;

 private:
  friend class ChildTask;
  mutable std::mutex mu_;
  std::optional<AppCrash> crash_;
  Status error_;  // an error of the app's in a call that returns no status
};

class ChildTask final : public app::Task {
 public:
  // Starts the child and builds task `task` in it (app::App::MakeTask of the app `app_name`,
  // which the plugin must hold). The child dies with the thread that starts it (it asks for
  // SIGKILL then: PR_SET_PDEATHSIG follows that thread, not the process), so the caller is a
  // thread that lives as long as the task: the daemon's worker. When the child crashes meanwhile,
  // the error says so and `crash` (if given) gets the AppCrash.
  static Result<std::unique_ptr<ChildTask>> Start(const AppChildSpec& spec,
                                                  const std::string& app_name,
                                                  const app::JobParams& params, uint32_t task,
                                                  std::string_view slice,
                                                  std::optional<AppCrash>* crash = nullptr);
  // Closes the socket and kills and reaps the child (what it computed is not wanted any more).
  ~ChildTask() override;
  ChildTask(const ChildTask&) = delete;
  ChildTask& operator=(const ChildTask&) = delete;

  // Kills the child and reaps it (nothing once reaped); not while Died runs on another thread.
  void Kill() const;

  std::shared_ptr<const AppChildState> state() const { return state_; }
  const AppChildSpec& spec() const { return spec_; }
  pid_t pid() const { return pid_; }

  std::vector<uint32_t> Dependencies() const override { return dependencies_; }
  Status Absorb(uint32_t from, std::string_view bytes) override;
  Result<bool> Iterate() override;
  std::vector<app::Outgoing> TakeOutgoing() override;
  double LocalChange() const override { return figures_.local_change; }
  bool LocallyConverged() const override { return figures_.locally_converged; }
  void InputsFinal(bool final) override { inputs_final_ = final; }
  std::string SaveState() const override;
  Status RestoreState(std::string_view state) override;
  std::string Notes() const override { return notes_; }
  std::string ResultSlice() const override;
  Status Tighten(double factor) override;
  double WorkDone() const override { return figures_.work_done; }
  double RemainingWork() const override { return figures_.remaining; }
  int64_t ItemCount() const override { return figures_.items; }
  Result<std::string> ExportItems(double work, uint32_t to) override;
  Status ImportItems(std::string_view items) override;
  Status DropItems(std::string_view items) override;

 private:
  friend class ChildRunner;  // runs the task's runner in the child, on this child's socket
  ChildTask(const AppChildSpec& spec, pid_t pid, int fd);
  struct Figures {
    double local_change = 0;
    bool locally_converged = false;
    double work_done = 0;
    double remaining = -1;
    int64_t items = -1;
  };
  // What one call gave back.
  struct Answer {
    std::string bytes;
    bool iterated = false;
    std::vector<app::Outgoing> outgoing;
    std::vector<uint32_t> dependencies;
  };
  enum class Op { kMake, kIterate, kSave, kRestore, kSlice, kTighten, kExport, kImport, kDrop };
  // One round trip: the queued absorbs, then `op`. An error of the app's, or the crash.
  Result<Answer> Call(Op op, std::string_view bytes = {}, double number = 0, uint32_t to = 0,
                      const app::JobParams* params = nullptr, const std::string* app_name = nullptr,
                      uint32_t task = 0) const;
  // A line the app wrote in the child, to spec_.log.
  void Forward(proto::ChildLog::Reader log) const;
  // An error of the app's where the call returns no status: kept for health().
  void Keep(const Status& error) const;
  // The child is gone or hung: kill and reap it, keep why. Returns the crash as an error.
  Status Died(const std::string& hung) const;

  AppChildSpec spec_;
  mutable pid_t pid_;  // -1 once reaped
  const int fd_;
  std::shared_ptr<AppChildState> state_ = std::make_shared<AppChildState>();
  mutable std::vector<std::pair<uint32_t, std::string>> absorb_;  // sent with the next call
  mutable std::optional<bool> inputs_final_;
  mutable Figures figures_;
  mutable std::vector<app::Outgoing> outgoing_;
  std::vector<uint32_t> dependencies_;
  mutable std::string notes_;
};

// The last `lines` lines of the file at `path` (its last 64 KiB at most), each cut to 300
// characters of printable text; empty when it cannot be read.
std::string TailOfFile(const std::string& path, size_t lines = 20);

}  // namespace aiac::daemon
