#include "monitor/power_benchmark.h"

#include <algorithm>
#include <vector>

namespace aiac::monitor {

double MeasurePower(std::chrono::milliseconds budget) {
  using Clock = std::chrono::steady_clock;
  constexpr int kN = 48;  // 3 x 48 x 48 doubles fit in L1/L2: measures the core, not memory
  std::vector<double> a(kN * kN), b(kN * kN), c(kN * kN, 0.0);
  for (int i = 0; i < kN * kN; ++i) {
    a[i] = 1.0 + (i % 7) * 1e-3;
    b[i] = 1.0 - (i % 5) * 1e-3;
  }
  const auto start = Clock::now();
  double flops = 0;
  auto elapsed = Clock::duration::zero();
  do {
    for (int i = 0; i < kN; ++i)
      for (int k = 0; k < kN; ++k) {
        const double aik = a[i * kN + k];
        for (int j = 0; j < kN; ++j) c[i * kN + j] += aik * b[k * kN + j];
      }
    flops += 2.0 * kN * kN * kN;
    elapsed = Clock::now() - start;
  } while (elapsed < budget);
  // Use the result so the compiler cannot drop the kernel.
  volatile double sink = c[kN + 1];
  (void)sink;
  const double seconds = std::max(1e-9, std::chrono::duration<double>(elapsed).count());
  return std::max(1e-6, flops / seconds / 1e9);
}

double MeasurePowerMedian(int repeats, std::chrono::milliseconds each) {
  std::vector<double> runs;
  for (int i = 0; i < std::max(1, repeats); ++i) runs.push_back(MeasurePower(each));
  std::nth_element(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2),
                   runs.end());
  return runs[runs.size() / 2];
}

}  // namespace aiac::monitor
