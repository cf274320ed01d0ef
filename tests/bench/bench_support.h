// What the benchmarks of tests/bench share (header only: each is one executable).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace aiac::bench {

// Seconds from `start` until now, on the steady clock the benchmarks time with.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The median of the non-negative values (failed runs are recorded as -1), the upper one of an
// even count; -1 when there is none.
inline double Median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return x < 0; });
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace aiac::bench
