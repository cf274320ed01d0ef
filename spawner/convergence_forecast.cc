#include "spawner/convergence_forecast.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace aiac::spawner {

ConvergenceForecast::ConvergenceForecast(double threshold, double timeout_s, Options options)
    : threshold_(threshold), timeout_s_(timeout_s), options_(options) {}

void ConvergenceForecast::Add(double seconds, double change) {
  if (!std::isfinite(change) || change <= 0 || !std::isfinite(seconds)) return;
  samples_.push_back({seconds, std::log(change)});
}

void ConvergenceForecast::Tighten(double factor) {
  if (factor > 0 && std::isfinite(factor)) threshold_ /= factor;
  samples_.clear();
}

void ConvergenceForecast::Restart() { samples_.clear(); }

std::optional<double> ConvergenceForecast::SecondsToGo() const {
  if (samples_.empty() || !(threshold_ > 0)) return std::nullopt;
  const double first = samples_.front().t, last = samples_.back().t;
  if (last - first < options_.min_window_s) return std::nullopt;
  const double from = last - std::max(options_.min_window_s, (last - first) / 2);
  // Least squares of log(change) = a + s t over the window.
  double n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  for (const auto& x : samples_) {
    if (x.t < from) continue;
    n += 1;
    st += x.t;
    sy += x.log_change;
    stt += x.t * x.t;
    sty += x.t * x.log_change;
  }
  if (n < 5) return std::nullopt;
  const double var = stt - st * st / n;
  if (!(var > 0)) return std::nullopt;
  const double slope = (sty - st * sy / n) / var;
  const double now = (sy + slope * (n * last - st)) / n;  // the fit at the newest sample
  const double gap = now - std::log(threshold_);
  if (gap <= 0) return 0.0;
  if (slope >= 0) return std::numeric_limits<double>::infinity();
  return gap / -slope;
}

std::string ConvergenceForecast::Verdict() const {
  const auto to_go = SecondsToGo();
  if (!to_go || samples_.back().t + *to_go <= options_.limit_factor * timeout_s_) return "";
  const double last = samples_.back().t, first = samples_.front().t;
  const double from = last - std::max(options_.min_window_s, (last - first) / 2);
  double change_then = 0;
  for (const auto& x : samples_) {
    if (x.t >= from) {
      change_then = std::exp(x.log_change);
      break;
    }
  }
  char buf[320];
  if (std::isinf(*to_go)) {
    std::snprintf(buf, sizeof buf,
                  "the largest local change stopped falling over the last %.0f s (%.2e -> %.2e, the local "
                  "test wants %.1e)",
                  last - from, change_then, std::exp(samples_.back().log_change), threshold_);
  } else {
    std::snprintf(buf, sizeof buf,
                  "at the rate of the last %.0f s (largest local change %.2e -> %.2e) the local tests would need "
                  "about %.2g s more to reach %.1e; timeout_s is %.0f",
                  last - from, change_then, std::exp(samples_.back().log_change), *to_go, threshold_, timeout_s_);
  }
  return buf;
}

}  // namespace aiac::spawner
