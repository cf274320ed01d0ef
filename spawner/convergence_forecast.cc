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
  // Every point of the envelope looks back over a whole trailing span of samples (Envelope).
  // Right after a restart the first samples come from before the perturbation (a task restored
  // from its checkpoint, items moved) reached the others' changes: tiny, they would make the
  // envelope start low and a curve that falls after its jump look like a rise.
  if (samples_[static_cast<size_t>(start)].t - Span(start) < first) return -1;
  return start;
}

void ConvergenceForecast::Tighten(double factor) {
  if (factor > 0 && std::isfinite(factor)) threshold_ /= factor;
  samples_.clear();
}

void ConvergenceForecast::Restart() { samples_.clear(); }

double ConvergenceForecast::Span(long start) const {
  return std::max(3.0, (samples_.back().t - samples_[static_cast<size_t>(start)].t) / 4);
}

std::vector<size_t> ConvergenceForecast::Envelope(long start) const {
  // The sample of largest log(change) among those of the trailing quarter of the window (3 s
  // at least) up to each sample of the window: a sliding maximum over time (indexes of falling
  // values in `maxes`), linear in the samples, which grow by one a second for the whole run.
  // The trailing samples precede the window.
  const auto first = static_cast<size_t>(start);
  const double span = Span(start);
  std::vector<size_t> high(samples_.size() - first);
  std::deque<size_t> maxes;
  size_t from = first;
  while (from > 0 && samples_[from - 1].t > samples_[first].t - span) --from;
  for (size_t j = from; j < samples_.size(); ++j) {
    while (!maxes.empty() && samples_[maxes.back()].log_change <= samples_[j].log_change)
      maxes.pop_back();
    maxes.push_back(j);
    while (samples_[maxes.front()].t <= samples_[j].t - span) maxes.pop_front();
    if (j >= first) high[j - first] = maxes.front();
  }
  return high;
}

std::optional<double> ConvergenceForecast::SecondsToGo() const {
  if (!(threshold_ > 0)) return std::nullopt;
  const long start = WindowStart();
  if (start < 0) return std::nullopt;
  const size_t count = samples_.size() - static_cast<size_t>(start);
  if (count < 5) return std::nullopt;
  // Least squares of y = a + s t over the window's upper envelope of log(change), each point at
  // the time of the sample that gives it: an asynchronous task's change is 0 or tiny whenever no
  // new input came since its last iteration, and large when one did, so the lowest samples are
  // noise and the highest ones say how far the iterate still moves.
  const std::vector<size_t> high = Envelope(start);
  double n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  for (size_t k : high) {
    const double t = samples_[k].t, y = samples_[k].log_change;
    n += 1;
    st += t;
    sy += y;
    stt += t * t;
    sty += t * y;
  }
  const double var = stt - st * st / n;
  const double last = samples_.back().t;
  const Sample& then = samples_[high.front()];
  const Sample& lately = samples_[high.back()];
  // The envelope's own fall over the window: a late spike can tilt the fit where the spikes
  // still fall, so a fall sets the rate when the fit sees none.
  const double fall = then.log_change - lately.log_change;
  double slope = var > 0 ? (sty - st * sy / n) / var : 0;
  if (slope >= 0 && fall > 0 && lately.t > then.t) slope = -fall / (lately.t - then.t);
  const double now = var > 0 ? (sy + slope * (n * last - st)) / n : lately.log_change;
  const double gap = std::min(now, lately.log_change) - std::log(threshold_);
  if (gap <= 0) return 0.0;
  if (slope >= 0) return std::numeric_limits<double>::infinity();
  return gap / -slope;
}

std::string ConvergenceForecast::Verdict() const {
  const auto to_go = SecondsToGo();
  if (!to_go || samples_.back().t + *to_go <= options_.limit_factor * timeout_s_) return "";
  const long start = WindowStart();
  const std::vector<size_t> high = Envelope(start);
  const double last = samples_.back().t, from = samples_[static_cast<size_t>(start)].t;
  const double change_then = std::exp(samples_[high.front()].log_change);
  const double change_now = std::exp(samples_[high.back()].log_change);
  char buf[320];
  if (std::isinf(*to_go)) {
    std::snprintf(
        buf, sizeof buf,
        "the largest local change stopped falling over the last %.0f s (%.2e -> %.2e, the local "
        "test wants %.1e)",
        last - from, change_then, change_now, threshold_);
  } else {
    std::snprintf(buf, sizeof buf,
                  "at the rate of the last %.0f s (largest local change %.2e -> %.2e) the local "
                  "tests would need "
                  "about %.2g s more to reach %.1e; timeout_s is %.0f",
                  last - from, change_then, change_now, *to_go, threshold_, timeout_s_);
  }
  return buf;
}

}  // namespace aiac::spawner
