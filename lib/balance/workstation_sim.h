// A discrete-time simulator of Lee & Cho's workstation model (section 2): time goes in
// intervals; in each, the processor gives mu / n to each of the n jobs sharing it (round
// robin); background jobs arrive in random numbers with random sizes (truncated Gaussian, given
// mean and standard deviation) and start in the next interval. Used to check that splitting a
// target job with the standard deviations (S_P) beats splitting with the means only (S_M).
// Pure: deterministic for a seed.
#pragma once

#include <cstdint>
#include <vector>

#include "balance/lee_cho.h"

namespace aiac::balance {

struct BackgroundLoad {
  double mu = 1;
  double arrival_mean = 0.5, arrival_std = 0;  // jobs per interval
  double size_mean = 1, size_std = 0;          // work per job
};

// Mean and standard deviation of the run-queue length n (the target job counted) over
// `intervals` intervals after `warmup`: what a daemon's monitor would measure.
Workstation MeasureRunQueue(const BackgroundLoad& load, uint64_t seed, int warmup = 200,
                            int intervals = 5000);

// Intervals until every workstation has processed its part of the target job (split[i] on
// workstation i), each starting after `warmup` intervals of background load.
double SimulateTargetJob(const std::vector<BackgroundLoad>& loads, const std::vector<double>& split,
                         uint64_t seed, int warmup = 200);

}  // namespace aiac::balance
