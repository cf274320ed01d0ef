// Whether a run can still converge within its time, from how fast the tasks' largest local
// change falls: a run whose blocks converge too slowly for block methods (a block Jacobi
// spectral radius of 0.99999, say) ends early and says so, instead of running to timeout_s.
//
// The spawner samples the largest local change at every progress tick. Over the newer half of
// the samples (at least `min_window_s` of them, and `min_iterations` iterations of the slowest
// task: a few slow iterations say nothing of a rate) it fits log(change) against time by least
// squares; at that rate, reaching the app's local threshold takes
// log(change / threshold) / rate seconds more. When that time would end past `limit_factor`
// times the run's timeout, the run cannot make it. A change that does not fall at all, over a
// window, is the same verdict; one whose envelope fell over the window never is: its fall gives
// the rate then.
// Asynchronous iterations make the largest change spiky: a task's change is 0, or tiny, when
// no new input came since its last iteration (zeros are ignored), and jumps when one did; the
// spikes are what tells how far the iterate still moves. So the fit is made to the upper
// envelope, the largest change of the trailing quarter of the window (3 s at least) at each
// sample, placed at that change's own time, over many samples, a window of half the run so
// far (and no verdict until samples precede it by that quarter), with a generous factor. Checked on
// recorded asynchronous runs (tests/data/forecast).
//
// Pure: the caller passes the times in. Not thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace aiac::spawner {

class ConvergenceForecast {
 public:
  struct Options {
    double min_window_s = 20;     // no verdict before the window spans this much
    double limit_factor = 2;      // "cannot make it": the forecast ends past this x timeout_s
    double min_iterations = 100;  // no verdict before the slowest task iterated this much in it
  };
  // `threshold`: the local test's largest change (app::JobPlan::target_change); `timeout_s`
  // counts from time 0 of the samples.
  ConvergenceForecast(double threshold, double timeout_s, Options options);
  ConvergenceForecast(double threshold, double timeout_s)
      : ConvergenceForecast(threshold, timeout_s, Options{}) {}

  // The largest local change at `seconds`, when the slowest task was at `iteration`
  // (non-finite or non-positive changes are ignored).
  void Add(double seconds, double change, double iteration);
  // The local tests were made `factor` times finer: the threshold too, and the samples so far
  // no longer count (the rate before says nothing of the tighter test).
  void Tighten(double factor);
  // Forget the samples (a task moved: its restored change restarts the curve).
  void Restart();

  // Seconds from the newest sample until the change reaches the threshold at the fitted rate;
  // nullopt while the window is too short; infinity when the change does not fall.
  std::optional<double> SecondsToGo() const;
  // A reason to end the run now, or empty: "at the rate of the last 40 s (largest change
  // 3.1e-03 -> 2.9e-03) the local tests would need about 9.1e+03 s more; timeout_s is 300".
  std::string Verdict() const;

 private:
  struct Sample {
    double t, log_change, iteration;
  };
  // The window's first sample, or -1 when there is no window yet (nor the samples of a whole
  // trailing span before it).
  long WindowStart() const;
  // How far back the envelope looks from each sample of the window that starts at `start`.
  double Span(long start) const;
  // The upper envelope of log(change) at each sample of the window from `start` on: the index of
  // the sample that gives it.
  std::vector<size_t> Envelope(long start) const;
  double threshold_, timeout_s_;
  Options options_;
  std::vector<Sample> samples_;
};

}  // namespace aiac::spawner
