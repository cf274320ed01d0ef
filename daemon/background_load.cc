#include "daemon/background_load.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>

#include "emulation/emulated_node.h"

namespace aiac::daemon {

Result<emulation::BackgroundSpec> ParseBackgroundSpec(const std::string& text) {
  const auto bad = InvalidArgument(
      "--background must be MEAN,STD,SIZE (competing jobs' mean and standard deviation, "
      "seconds between draws), not '" +
      text + "'");
  std::vector<double> v;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    char* end = nullptr;
    const double x = std::strtod(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size() || !std::isfinite(x)) return bad;
    v.push_back(x);
  }
  if (v.size() != 3 || v[0] < 0 || v[1] < 0 || !(v[2] > 0)) return bad;
  return emulation::BackgroundSpec{v[0], v[1], v[2]};
}

BackgroundLoad::BackgroundLoad(emulation::BackgroundSpec spec, uint64_t seed, int max_jobs)
    : spec_(spec), max_jobs_(std::max(0, max_jobs)) {
  for (int k = 0; k < max_jobs_; ++k) spinners_.emplace_back([this, k] { Spin(k); });
  control_ = std::thread([this, seed] { Control(seed); });
}

BackgroundLoad::~BackgroundLoad() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  control_.join();
  for (auto& t : spinners_) t.join();
}

void BackgroundLoad::Control(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(spec_.mean_size));
  std::unique_lock lock(mu_);
  while (!stop_) {
    const auto jobs = static_cast<int>(std::lround(emulation::DrawCompetingJobs(spec_, rng)));
    active_ = std::min(jobs, max_jobs_);
    ++draws_;
    changed_.notify_all();
    changed_.wait_for(lock, period, [this] { return stop_; });
  }
}

void BackgroundLoad::Spin(int index) {
  volatile uint64_t sink = 0;
  uint64_t x = 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(index);
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (index >= active_.load()) {
      changed_.wait(lock, [&] { return stop_ || index < active_.load(); });
      continue;
    }
    lock.unlock();
    // A slice of work, then a look at whether this job is still drawn.
    for (int i = 0; i < 200000 && index < active_.load(std::memory_order_relaxed); ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    sink = x;
    lock.lock();
  }
  (void)sink;
}

}  // namespace aiac::daemon
