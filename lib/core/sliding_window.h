// Sliding-window mean and standard deviation of the newest samples: how DistPM predicts a
// channel's latency alpha and per-item transfer time beta from measurements
// (distpm-workload-migration.md section 4.2, "sliding-window mean-based method"), and how a
// daemon's monitor gives Lee & Cho's N and sigma_n of its run queue (lib/monitor/run_queue.h).
// Pure.
#pragma once

#include <cstddef>
#include <deque>

namespace aiac {

class SlidingWindowMean {
 public:
  // Requires window >= 1.
  explicit SlidingWindowMean(size_t window);
  void Add(double sample);
  // Mean of the last min(count, window) samples; 0 before any sample.
  double Mean() const { return samples_.empty() ? 0 : sum_ / static_cast<double>(samples_.size()); }
  // Population standard deviation of the same samples; 0 before two.
  double StdDev() const;
  size_t size() const { return samples_.size(); }

 private:
  size_t window_;
  std::deque<double> samples_;
  double sum_ = 0;
};

}  // namespace aiac
