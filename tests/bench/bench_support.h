// What the benchmarks of tests/bench share (header only: each is one executable).
#pragma once

#include <algorithm>
#include <vector>

namespace aiac::bench {

// The median of the non-negative values (failed runs are recorded as -1), the upper one of an
// even count; -1 when there is none.
inline double Median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return x < 0; });
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace aiac::bench
