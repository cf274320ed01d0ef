// A daemon's view of the load on its host (docs/balancing.md): the run-queue length sampled every
// `sample_ms`, with its mean N and standard deviation sigma_n over a sliding window, which are
// Lee & Cho's measures of a workstation's background load (lee-cho-load-balancing.md, section
// 2: the number of jobs sharing the processor under round robin).
//
// The sample is what the daemon's tasks compete with. On a host of its own that is the kernel's
// count of runnable threads (procs_running in /proc/stat) divided by the cores, the task being
// one of them; a daemon that plays a share of a host (an emulated node, or a background load
// given on the command line, several daemons on one test machine) counts 1 (its task) plus the
// competing jobs it knows of instead, since the host's count mixes every daemon's load.
//
// RunQueueMonitor is pure (samples are passed in); ReadRunnable reads the file.
#pragma once

#include <cstddef>
#include <string>

#include "core/sliding_window.h"
#include "core/status.h"

namespace aiac::monitor {

// The runnable threads on this host now: procs_running in `proc_stat` (the kernel counts the
// reading thread itself). Errors name the file.
Result<int> ReadRunnable(const std::string& proc_stat = "/proc/stat");

class RunQueueMonitor {
 public:
  // `window`: samples kept (>= 1). Default 40 (10 s at 250 ms).
  explicit RunQueueMonitor(size_t window = 40) : samples_(window) {}
  // One sample of the jobs sharing a core, the task counted; clamped to at least 1.
  void Add(double jobs);
  // From a host-wide count: `runnable` threads (ReadRunnable, the reader excluded) over `cores`.
  void AddHostSample(int runnable, unsigned cores);
  double mean() const { return samples_.size() == 0 ? 1 : samples_.Mean(); }  // N, at least 1
  double stddev() const { return samples_.StdDev(); }                         // sigma_n
  size_t samples() const { return samples_.size(); }

 private:
  SlidingWindowMean samples_;
};

}  // namespace aiac::monitor
