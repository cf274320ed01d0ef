#include "core/sliding_window.h"

#include <cmath>
#include <numeric>

#include "core/status.h"

namespace aiac {

SlidingWindowMean::SlidingWindowMean(size_t window) : window_(window) { AIAC_CHECK(window >= 1); }

void SlidingWindowMean::Add(double sample) {
  samples_.push_back(sample);
  sum_ += sample;
  if (samples_.size() > window_) {
    sum_ -= samples_.front();
    samples_.pop_front();
  }
  // Re-add from scratch now and then so rounding errors of the running sum never pile up.
  if (samples_.size() == window_) sum_ = std::accumulate(samples_.begin(), samples_.end(), 0.0);
}

double SlidingWindowMean::StdDev() const {
  if (samples_.size() < 2) return 0;
  const double mean = Mean();
  double sum = 0;
  for (double x : samples_) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / static_cast<double>(samples_.size()));
}

}  // namespace aiac
