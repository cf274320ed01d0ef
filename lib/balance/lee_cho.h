// Load balancing of a target job over workstations with random background load, using the means
// AND standard deviations of each workstation's run-queue length (lee-cho-load-balancing.md).
// Pure: functions of their inputs.
#pragma once

#include <vector>

#include "core/status.h"

namespace aiac::balance {

struct Workstation {
  double mu = 1;       // service rate (computing power), > 0
  double n = 1;        // N_i: mean number of jobs sharing the processor, > 0
  double sigma_n = 0;  // sigma_n_i: its standard deviation, >= 0
};

Status CheckWorkstations(const std::vector<Workstation>& ws);

// Eq. (6)/(8): mean time for W_i to process `x` alone: N x / (mu (1 + sigma_n^2 / N^2)).
double ExpectedTime(const Workstation& w, double x);
// Eq. (7): standard deviation of that time, from the mean time t:
// sqrt(t) (sigma_n / N) / sqrt(1 + sigma_n^2 / N^2).
double TimeStdDev(const Workstation& w, double t);

// Static splits of x: S_E evenly; S_P eq. (9), X_i proportional to 1 / T_i; S_M the same with
// sigma_n taken as 0 (means only).
std::vector<double> SplitEven(const std::vector<Workstation>& ws, double x);
std::vector<double> SplitProposed(const std::vector<Workstation>& ws, double x);
std::vector<double> SplitMeans(const std::vector<Workstation>& ws, double x);

struct DynamicStep {
  std::vector<double> t_rem;          // eq. (10): T_i.rem on the current remaining sizes
  std::vector<double> new_remaining;  // X'_i.rem when redistributing, else the remaining sizes
  double t_after = 0;                 // T' after redistribution (equal on every W_i)
  double gain = 0;                    // eq. (11): max_i T_i.rem - T' - overhead
  bool redistribute = false;          // gain >= threshold
  double t_check = 0;                 // eq. (12): min_i (T*_i - h sigma_t(T*_i))
};

// One checking point of the dynamic scheme (D_P). Requires remaining.size() == ws.size().
DynamicStep CheckingPoint(const std::vector<Workstation>& ws, const std::vector<double>& remaining,
                          double h, double overhead, double threshold);

}  // namespace aiac::balance
