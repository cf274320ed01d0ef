// A competing load on this daemon's host (docs/balancing.md), so that a daemon can be slowed on
// purpose, in tests and experiments, with Lee & Cho's workstation model: every mean_size
// seconds the number of competing jobs is drawn again, normal(mean_jobs, std_jobs) clamped at 0
// and rounded (emulation::DrawCompetingJobs, as emulated nodes draw it), and that many threads
// spin on arithmetic until the next draw. The tasks of the daemon then share the cores with
// them, as with other users' jobs on a desktop.
//
// Thread-safe: jobs() may be read from any thread. The destructor stops and joins every thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "emulation/platform_file.h"

namespace aiac::daemon {

// "MEAN,STD,SIZE" (mean and standard deviation of the competing jobs, seconds between draws):
// MEAN and STD at least 0, SIZE above 0.
Result<emulation::BackgroundSpec> ParseBackgroundSpec(const std::string& text);

class BackgroundLoad {
 public:
  // At most `max_jobs` spinning threads whatever the draw. Starts at once.
  BackgroundLoad(emulation::BackgroundSpec spec, uint64_t seed, int max_jobs = 64);
  ~BackgroundLoad();
  BackgroundLoad(const BackgroundLoad&) = delete;
  BackgroundLoad& operator=(const BackgroundLoad&) = delete;

  // Competing jobs running now.
  int jobs() const { return active_.load(); }
  // Draws made so far (the first at start).
  uint64_t draws() const { return draws_.load(); }
  const emulation::BackgroundSpec& spec() const { return spec_; }

 private:
  void Control(uint64_t seed);
  void Spin(int index);

  emulation::BackgroundSpec spec_;
  int max_jobs_;
  std::atomic<int> active_{0};
  std::atomic<uint64_t> draws_{0};
  std::mutex mu_;
  std::condition_variable changed_;
  bool stop_ = false;  // guarded by mu_
  std::vector<std::thread> spinners_;
  std::thread control_;
};

}  // namespace aiac::daemon
