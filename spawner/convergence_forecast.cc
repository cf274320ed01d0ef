#include "spawner/convergence_forecast.h"

#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>

namespace aiac::spawner {

ConvergenceForecast::ConvergenceForecast(double threshold, double timeout_s, Options options)
    : threshold_(threshold), timeout_s_(timeout_s), options_(options) {}

void ConvergenceForecast::Add(double seconds, double change, double iteration) {
  if (!std::isfinite(change) || change <= 0 || !std::isfinite(seconds)) return;
  samples_.push_back({seconds, std::log(change), iteration});
}

long ConvergenceForecast::WindowStart() const {
  if (samples_.empty()) return -1;
  const double first = samples_.front().t, last = samples_.back().t;
  if (last - first < options_.min_window_s) return -1;
  const double from = last - std::max(options_.min_window_s, (last - first) / 2);
  long start = 0;
  while (samples_[static_cast<size_t>(start)].t < from) ++start;
  if (samples_.back().iteration - samples_[static_cast<size_t>(start)].iteration <
      options_.min_iterations)
    return -1;
  return start;
}

void ConvergenceForecast::Tighten(double factor) {
  if (factor > 0 && std::isfinite(factor)) threshold_ /= factor;
  samples_.clear();
}

void ConvergenceForecast::Restart() { samples_.clear(); }

std::optional<double> ConvergenceForecast::SecondsToGo() const {
  if (!(threshold_ > 0)) return std::nullopt;
  const long start = WindowStart();
  if (start < 0) return std::nullopt;
  // Least squares of y = a + s t over the window, y the lowest log(change) of the samples of
  // the last quarter of the window up to each one: spikes a few samples wide are ignored, and a
  // dip is forgotten a quarter of the window later.
  const size_t count = samples_.size() - static_cast<size_t>(start);
  if (count < 5) return std::nullopt;
  const size_t span = std::max<size_t>(3, count / 4);
  // A sliding minimum (indexes of rising values in `mins`): linear in the samples, which grow by
  // one a second for the whole run. The trailing samples may precede the window.
  std::vector<double> low(count);
  std::deque<size_t> mins;
  const auto first =
      static_cast<size_t>(start) + 1 > span ? static_cast<size_t>(start) + 1 - span : 0;
  for (size_t j = first; j < samples_.size(); ++j) {
    while (!mins.empty() && samples_[mins.back()].log_change >= samples_[j].log_change)
      mins.pop_back();
    mins.push_back(j);
    if (mins.front() + span <= j) mins.pop_front();
    if (j >= static_cast<size_t>(start))
      low[j - static_cast<size_t>(start)] = samples_[mins.front()].log_change;
  }
  double n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  for (size_t k = 0; k < count; ++k) {
    const double t = samples_[static_cast<size_t>(start) + k].t;
    n += 1;
    st += t;
    sy += low[k];
    stt += t * t;
    sty += t * low[k];
  }
  const double var = stt - st * st / n;
  if (!(var > 0)) return std::nullopt;
  const double slope = (sty - st * sy / n) / var;
  const double last = samples_.back().t;
  const double now = (sy + slope * (n * last - st)) / n;  // the fit at the newest sample
  const double gap = std::min(now, low.back()) - std::log(threshold_);
  if (gap <= 0) return 0.0;
  if (slope >= 0) return std::numeric_limits<double>::infinity();
  return gap / -slope;
}

std::string ConvergenceForecast::Verdict() const {
  const auto to_go = SecondsToGo();
  if (!to_go || samples_.back().t + *to_go <= options_.limit_factor * timeout_s_) return "";
  const Sample& then = samples_[static_cast<size_t>(WindowStart())];
  const double last = samples_.back().t, from = then.t;
  const double change_then = std::exp(then.log_change);
  char buf[320];
  if (std::isinf(*to_go)) {
    std::snprintf(
        buf, sizeof buf,
        "the largest local change stopped falling over the last %.0f s (%.2e -> %.2e, the local "
        "test wants %.1e)",
        last - from, change_then, std::exp(samples_.back().log_change), threshold_);
  } else {
    std::snprintf(buf, sizeof buf,
                  "at the rate of the last %.0f s (largest local change %.2e -> %.2e) the local "
                  "tests would need "
                  "about %.2g s more to reach %.1e; timeout_s is %.0f",
                  last - from, change_then, std::exp(samples_.back().log_change), *to_go,
                  threshold_, timeout_s_);
  }
  return buf;
}

}  // namespace aiac::spawner
