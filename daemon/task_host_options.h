// What a daemon's task host is configured with (aiac-daemon's options, daemon/main.cc).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "net/connection.h"
#include "net/server.h"
#include "runtime/code_signing.h"

namespace aiac::daemon {

struct TaskHostOptions {
  std::string id;
  net::NetOptions net;
  std::chrono::milliseconds progress{250};
  std::string plugin_dir;  // where received plugins are stored
  // Which plugins run: by default none; those signed by one of trust.keys, or any when
  // trust.allow_unsigned.
  runtime::PluginTrust trust;
  net::ServerLimits limits;
  // An emulated node's iteration times (emulation/emulated_node.h); unset: real times.
  std::function<std::chrono::nanoseconds(std::chrono::nanoseconds cpu)> iteration_time;
  // The jobs competing with this daemon's task that it knows of (an emulated node's background,
  // --background): its run-queue samples are then 1 + that. Unset: sampled from /proc/stat
  // (monitor/run_queue.h), once per progress report.
  std::function<double()> competing_jobs;
  // Where a task's app runs: in a child process (app_child_executable, aiac-app-child) whose
  // standard error goes to task_dir/JOB.TASK.INCARNATION.stderr, or (false) in the daemon.
  bool isolate_apps = true;
  std::string app_child_executable{};
  // OMP_THREAD_LIMIT in each app's child process (AppChildSpec::threads); 0: inherited.
  int app_threads = 1;
  std::string task_dir{};
  // The most the stored plugins may take on disk (runtime::PluginStore); 0: no bound.
  uint64_t plugin_cache_bytes = 0;
  // How often a running job's connections carry a LinkProbe (link_monitors.h).
  std::chrono::milliseconds probe{1000};
};

}  // namespace aiac::daemon
