#include "emulate/background_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

namespace aiac::emulate {

namespace {

constexpr int kMaxJobs = 16;
constexpr auto kSlice = std::chrono::milliseconds(10);

// Thread `k` is busy for min(1, jobs - k) of every slice.
void Compete(int k, const std::atomic<double>& jobs) {
  volatile uint64_t sink = 0;
  for (;;) {
    const double share = std::clamp(jobs.load() - k, 0.0, 1.0);
    const auto start = std::chrono::steady_clock::now();
    const auto busy_until =
        start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(kSlice * share);
    while (std::chrono::steady_clock::now() < busy_until) sink = sink + 1;
    std::this_thread::sleep_until(start + kSlice);
  }
}

}  // namespace

void RunBackgroundLoad(const emulation::BackgroundSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> draw(spec.mean_jobs, spec.std_jobs);
  std::atomic<double> jobs{0};
  std::vector<std::thread> threads;
  // Threads for what the draws can reach (three deviations above the mean), no idle crowd.
  const int count =
      std::clamp(static_cast<int>(std::ceil(spec.mean_jobs + 3 * spec.std_jobs)), 1, kMaxJobs);
  for (int k = 0; k < count; ++k) threads.emplace_back(Compete, k, std::cref(jobs));
  const auto period = std::chrono::duration<double>(std::max(spec.mean_size, 0.01));
  for (;;) {
    jobs = std::clamp(spec.std_jobs > 0 ? draw(rng) : spec.mean_jobs, 0.0, double(count));
    std::this_thread::sleep_for(period);
  }
}

}  // namespace aiac::emulate
