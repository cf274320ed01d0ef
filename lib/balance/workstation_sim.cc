#include "balance/workstation_sim.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace aiac::balance {
namespace {

class Machine {
 public:
  Machine(const BackgroundLoad& load, uint64_t seed) : load_(load), rng_(seed) {}

  // One interval with `extra` target jobs present (0 or 1); returns the share each job got.
  double Step(int extra) {
    const double n = static_cast<double>(jobs_.size()) + extra;
    const double share = n > 0 ? load_.mu / n : 0;
    for (auto& j : jobs_) j -= share;
    jobs_.erase(std::remove_if(jobs_.begin(), jobs_.end(), [](double j) { return j <= 0; }),
                jobs_.end());
    // Arrivals of this interval start in the next one.
    const int arrivals =
        static_cast<int>(std::lround(std::max(0.0, Draw(load_.arrival_mean, load_.arrival_std))));
    for (int a = 0; a < arrivals; ++a)
      jobs_.push_back(std::max(1e-3, Draw(load_.size_mean, load_.size_std)));
    return share;
  }
  size_t jobs() const { return jobs_.size(); }

 private:
  double Draw(double mean, double sd) {
    if (sd <= 0) return mean;
    std::normal_distribution<double> d(mean, sd);
    return d(rng_);
  }

  BackgroundLoad load_;
  std::mt19937_64 rng_;
  std::vector<double> jobs_;
};

}  // namespace

Workstation MeasureRunQueue(const BackgroundLoad& load, uint64_t seed, int warmup, int intervals) {
  Machine m(load, seed);
  for (int k = 0; k < warmup; ++k) m.Step(1);
  double sum = 0, sum_sq = 0;
  for (int k = 0; k < intervals; ++k) {
    const double n = static_cast<double>(m.jobs()) + 1;  // the target job shares the processor
    sum += n;
    sum_sq += n * n;
    m.Step(1);
  }
  const double mean = sum / intervals;
  return {load.mu, mean, std::sqrt(std::max(0.0, sum_sq / intervals - mean * mean))};
}

double SimulateTargetJob(const std::vector<BackgroundLoad>& loads, const std::vector<double>& split,
                         uint64_t seed, int warmup) {
  double finish = 0;
  for (size_t i = 0; i < loads.size(); ++i) {
    Machine m(loads[i], seed * 1000003 + i);
    for (int k = 0; k < warmup; ++k) m.Step(0);
    double left = split[i];
    double t = 0;
    while (left > 0) {
      const double share = m.Step(1);
      if (share >= left) {
        t += left / share;  // the target finishes part-way through this interval
        left = 0;
      } else {
        left -= share;
        t += 1;
      }
    }
    finish = std::max(finish, t);
  }
  return finish;
}

}  // namespace aiac::balance
