#include "balance/lee_cho.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace aiac::balance {
namespace {

// 1 + sigma_n^2 / N^2: the speed-up a varying run queue gives over a steady one (eq. 6).
double VarianceFactor(const Workstation& w) { return 1 + (w.sigma_n * w.sigma_n) / (w.n * w.n); }

std::vector<double> ProportionalToInverse(const std::vector<double>& times, double x) {
  double inv_sum = 0;
  for (double t : times) inv_sum += 1 / t;
  std::vector<double> out;
  for (double t : times) out.push_back((x / t) / inv_sum);  // eq. (9)
  return out;
}

}  // namespace

Status CheckWorkstations(const std::vector<Workstation>& ws) {
  if (ws.empty()) return InvalidArgument("no workstations");
  for (size_t i = 0; i < ws.size(); ++i) {
    const auto& w = ws[i];
    const std::string at = "workstation " + std::to_string(i) + ": ";
    if (!std::isfinite(w.mu) || w.mu <= 0) return InvalidArgument(at + "mu must be positive");
    if (!std::isfinite(w.n) || w.n <= 0) return InvalidArgument(at + "N must be positive");
    if (!std::isfinite(w.sigma_n) || w.sigma_n < 0)
      return InvalidArgument(at + "sigma_n must not be negative");
  }
  return Status::Ok();
}

double ExpectedTime(const Workstation& w, double x) {
  return w.n * x / (w.mu * VarianceFactor(w));  // eq. (6), eq. (8)
}

double TimeStdDev(const Workstation& w, double t) {
  if (t <= 0) return 0;
  return std::sqrt(t) * (w.sigma_n / w.n) / std::sqrt(VarianceFactor(w));  // eq. (7)
}

std::vector<double> SplitEven(const std::vector<Workstation>& ws, double x) {
  return std::vector<double>(ws.size(), x / static_cast<double>(ws.size()));
}

std::vector<double> SplitProposed(const std::vector<Workstation>& ws, double x) {
  std::vector<double> t;
  for (const auto& w : ws) t.push_back(ExpectedTime(w, x));
  return ProportionalToInverse(t, x);
}

std::vector<double> SplitMeans(const std::vector<Workstation>& ws, double x) {
  std::vector<Workstation> means = ws;
  for (auto& w : means) w.sigma_n = 0;
  return SplitProposed(means, x);
}

DynamicStep CheckingPoint(const std::vector<Workstation>& ws, const std::vector<double>& remaining,
                          double h, double overhead, double threshold) {
  AIAC_CHECK(remaining.size() == ws.size());
  DynamicStep step;
  const double x_rem = std::accumulate(remaining.begin(), remaining.end(), 0.0);
  for (size_t i = 0; i < ws.size(); ++i)
    step.t_rem.push_back(ExpectedTime(ws[i], remaining[i]));  // eq. (10)
  // Redistribution per eq. (9) on X_rem: X'_i proportional to 1 / T_i(X_rem).
  const std::vector<double> balanced = SplitProposed(ws, x_rem);
  step.t_after = ws.empty() ? 0 : ExpectedTime(ws[0], balanced[0]);  // T'_i.rem, equal for all i
  const double worst = *std::max_element(step.t_rem.begin(), step.t_rem.end());
  step.gain = worst - step.t_after - overhead;  // eq. (11)
  step.redistribute = step.gain >= threshold;
  step.new_remaining = step.redistribute ? balanced : remaining;
  // Eq. (12): check again before the first W_i is likely to run out of work.
  step.t_check = INFINITY;
  for (size_t i = 0; i < ws.size(); ++i) {
    const double t_star = step.redistribute ? step.t_after : step.t_rem[i];
    step.t_check = std::min(step.t_check, t_star - h * TimeStdDev(ws[i], t_star));
  }
  return step;
}

}  // namespace aiac::balance
