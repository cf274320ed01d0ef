// A daemon's computing power, measured by a short floating-point kernel.
//
// Power is expressed in GFlop/s of a dense multiply-add kernel; only ratios between nodes matter
// to the mapping (MAHEVE's wn_i), so any fixed kernel does. Blocks the calling thread for about
// `budget`; call it once at start-up, before the event loop serves anyone.
#pragma once

#include <chrono>

namespace aiac::monitor {

// Runs the kernel for about `budget` and returns GFlop/s (always > 0).
double MeasurePower(std::chrono::milliseconds budget = std::chrono::milliseconds(200));
// The median of `repeats` runs of `each`: one run caught by a burst of other work (the OS,
// another daemon starting) does not decide the result.
double MeasurePowerMedian(int repeats = 5,
                          std::chrono::milliseconds each = std::chrono::milliseconds(40));

}  // namespace aiac::monitor
