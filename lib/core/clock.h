// The time code reads when a test must be able to set it. The decisions of a run (the
// spawner's supervisor, balancing and forecast, the super-node's registry) take the time as an
// argument; code that reads the time itself on a thread of its own (the task runner: time-based
// checkpoints, progress reports) reads it from a Clock, which a test replaces with a ManualClock.
#pragma once

#include <atomic>
#include <chrono>

namespace aiac {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;
  virtual ~Clock() = default;
  virtual time_point Now() const = 0;
  // The process's steady clock (std::chrono::steady_clock), for the life of the process.
  static const Clock& Steady();
};

// A clock that moves only when told to; thread-safe (a test advances it while a runner's
// thread reads it).
class ManualClock final : public Clock {
 public:
  ManualClock() = default;
  time_point Now() const override { return time_point(duration(now_.load())); }
  void Advance(duration by) { now_.fetch_add(by.count()); }

 private:
  // Starts an hour in, so that "now minus a period" never goes before the epoch.
  std::atomic<duration::rep> now_{
      std::chrono::duration_cast<duration>(std::chrono::hours(1)).count()};
};

// CPU time (user and system, every thread) this process has used since it started, in seconds.
double ProcessCpuSeconds();

}  // namespace aiac
