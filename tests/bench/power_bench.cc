// The spread of a daemon's power measurement on one host: `count` measurements as a daemon made
// them before (one 200 ms run of the kernel) against as it makes them now (the median of five
// 40 ms runs, the same time in all), alternately, in the same run. Prints min / median / max of
// each and their spread max/min (1.00x = every measurement equal): what identical daemons on
// identical hosts would report to the mapping.
// Run: build/bin/power_bench [count]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "monitor/power_benchmark.h"

namespace {

void Report(const char* what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("  %-26s min %6.2f  median %6.2f  max %6.2f GFlop/s   spread max/min %.2fx\n", what,
              v.front(), v[v.size() / 2], v.back(), v.back() / v.front());
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::max(2, std::atoi(argv[1])) : 10;
  std::vector<double> single, median;
  for (int i = 0; i < count; ++i) {
    single.push_back(aiac::monitor::MeasurePower(std::chrono::milliseconds(200)));
    median.push_back(aiac::monitor::MeasurePowerMedian(5, std::chrono::milliseconds(40)));
  }
  std::printf("%d measurements each, alternately:\n", count);
  Report("one 200 ms run (before)", single);
  Report("median of 5 x 40 ms (now)", median);
  return 0;
}
