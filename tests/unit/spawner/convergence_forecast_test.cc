// The forecast of a run's convergence from its largest local change: no verdict on a short
// history, a run converging fast enough goes on, a flat or too slow one is stopped with the
// numbers, tightening lowers the target and forgets the old rate, and noise does not fool it.
#include "spawner/convergence_forecast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "support/test_support.h"

namespace aiac::spawner {
namespace {

// change(t) = c0 * 10^(-t / decade_s), sampled every second up to `until`, the tasks doing 100
// iterations a second.
void Feed(ConvergenceForecast& f, double c0, double decade_s, double until, double from = 0,
          double noise = 0) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  for (double t = from; t <= until; t += 1)
    f.Add(t, c0 * std::pow(10.0, -t / decade_s + jitter(rng)), 100 * t);
}

TEST(ConvergenceForecastTest, NoVerdictBeforeTheWindowIsLongEnough) {
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 1, 1e9, 15);  // flat, but only 15 s
  EXPECT_FALSE(f.SecondsToGo());
  EXPECT_EQ(f.Verdict(), "");
}

TEST(ConvergenceForecastTest, ARunOnCourseGoesOn) {
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 1, 20, 60);  // a decade every 20 s: 1e-8 at 160 s
  ASSERT_TRUE(f.SecondsToGo());
  EXPECT_NEAR(*f.SecondsToGo(), 100, 1);
  EXPECT_EQ(f.Verdict(), "");
}

TEST(ConvergenceForecastTest, ASlowRunIsStoppedWithItsNumbers) {
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 1e-2, 200, 30);  // a decade every 200 s: 1e-8 after 1200 s, past 2 x 300
  ASSERT_TRUE(f.SecondsToGo());
  EXPECT_NEAR(*f.SecondsToGo(), 1170, 5);
  const std::string why = f.Verdict();
  EXPECT_NE(why.find("would need about 1.2e+03 s more to reach 1.0e-08; timeout_s is 300"),
            std::string::npos)
      << why;
  // Within the limit (2 x timeout) it would have gone on.
  ConvergenceForecast patient(1e-8, 700);
  Feed(patient, 1e-2, 200, 30);
  EXPECT_EQ(patient.Verdict(), "");
}

TEST(ConvergenceForecastTest, AFlatOrRisingChangeIsStagnation) {
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 3e-3, -500, 40);  // rising slowly
  EXPECT_TRUE(std::isinf(*f.SecondsToGo()));
  EXPECT_NE(f.Verdict().find("stopped falling over the last 20 s"), std::string::npos)
      << f.Verdict();
}

TEST(ConvergenceForecastTest, TheNewerHalfOfTheRunCounts) {
  // Flat for 60 s, then a decade every 5 s for 60 s: judged on the fall, it goes on.
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 1, 1e9, 60);
  for (double t = 61; t <= 120; t += 1) f.Add(t, std::pow(10.0, -(t - 60) / 30), 100 * t);
  EXPECT_EQ(f.Verdict(), "") << f.Verdict();
  EXPECT_LT(*f.SecondsToGo(), 300);
}

TEST(ConvergenceForecastTest, NoiseAroundAGoodRateDoesNotStopTheRun) {
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 1, 20, 80, 0, 0.8);  // the change jumps up and down by up to 6x around its trend
  EXPECT_EQ(f.Verdict(), "") << f.Verdict();
}

TEST(ConvergenceForecastTest, AFewSlowIterationsGiveNoVerdict) {
  // Flat for 60 s, but the slowest task did only 30 iterations (a sanitizer build, say).
  ConvergenceForecast f(1e-8, 300);
  for (double t = 0; t <= 60; t += 1) f.Add(t, 0.1, t / 2);
  EXPECT_FALSE(f.SecondsToGo());
  EXPECT_EQ(f.Verdict(), "");
}

TEST(ConvergenceForecastTest, SpikesOnAFallingTrendAreNotStagnation) {
  // A decade every 10 s, with a spike of 40x every 7 s (a task that just got new values): the
  // least squares of the raw changes would see little fall; their upper envelope falls as the
  // trend does.
  ConvergenceForecast f(1e-8, 100);
  for (double t = 0; t <= 40; t += 1) {
    const double trend = 0.1 * std::pow(10.0, -t / 10);
    f.Add(t, static_cast<int>(t) % 7 == 6 ? 40 * trend : trend, 100 * t);
  }
  ASSERT_TRUE(f.SecondsToGo());
  EXPECT_NEAR(*f.SecondsToGo(), 30, 3);
  EXPECT_EQ(f.Verdict(), "");
}

TEST(ConvergenceForecastTest, TighteningLowersTheTargetAndForgetsTheOldRate) {
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 1e-2, 200, 30);
  EXPECT_NE(f.Verdict(), "");
  f.Tighten(100);
  EXPECT_FALSE(f.SecondsToGo()) << "the samples before the tightening no longer count";
  Feed(f, 1e-3, 10, 60, 31);
  ASSERT_TRUE(f.SecondsToGo());
  // 1e-9 at 60 s, a decade every 10 s, the target now 1e-10: 10 s to go.
  EXPECT_NEAR(*f.SecondsToGo(), 10, 0.5);
  EXPECT_EQ(f.Verdict(), "");
  f.Restart();
  EXPECT_FALSE(f.SecondsToGo());
}

TEST(ConvergenceForecastTest, AlreadyBelowTheThresholdNeedsNoTime) {
  ConvergenceForecast f(1e-8, 300);
  Feed(f, 1e-9, 1e9, 30);
  EXPECT_EQ(*f.SecondsToGo(), 0);
  f.Add(31, 0, 3100);  // a converged run reports 0: ignored, not a log of zero
  f.Add(32, std::nan(""), 3200);
  EXPECT_EQ(*f.SecondsToGo(), 0);
}

// Zeros between spikes (an asynchronous task iterated without new input), the spikes falling
// 14x over the window, tiny samples between: falling, never "stopped falling".
TEST(ConvergenceForecastTest, AFallOfMoreThanTwiceOverTheWindowIsNeverAStall) {
  ConvergenceForecast f(1e-8, 300);
  for (double t = 0; t <= 60; t += 1) {
    const int k = static_cast<int>(t);
    const double spike = 5e-5 * std::pow(14.0, -t / 60);
    f.Add(t, k % 3 == 0 ? spike : k % 3 == 1 ? 0 : 1e-12 * (1 + t), 100 * t);
    EXPECT_EQ(f.Verdict().find("stopped falling"), std::string::npos) << t << ": " << f.Verdict();
  }
  ASSERT_TRUE(f.SecondsToGo());
  EXPECT_FALSE(std::isinf(*f.SecondsToGo()));
}

// Recorded asynchronous runs (tests/data/forecast/*.trace), replayed as the job runner feeds the
// forecast (a window of a tenth of timeout_s, 2 to 20 s; a restart at every item move; the
// threshold divided at every tightening): the first verdict, "" when there is none.
std::string FirstVerdict(const std::string& trace, double timeout_s, double threshold,
                         int min_samples = 50) {
  ConvergenceForecast f(threshold, timeout_s,
                        ConvergenceForecast::Options{std::clamp(timeout_s / 10, 2.0, 20.0), 2});
  std::istringstream in(
      testing::ReadFile(std::string(AIAC_SOURCE_DIR) + "/tests/data/forecast/" + trace + ".trace"));
  std::string line;
  int samples = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "restart") {
      f.Restart();
    } else if (first == "tighten") {
      double factor = 0;
      words >> factor;
      f.Tighten(factor);
    } else {
      double iteration = 0, change = 0;
      words >> iteration >> change;
      f.Add(std::stod(first), change, iteration);
      ++samples;
      if (std::string why = f.Verdict(); !why.empty()) return "at " + first + " s: " + why;
    }
  }
  EXPECT_GE(samples, min_samples) << trace;
  return "";
}

TEST(ConvergenceForecastTest, RecordedAsyncRunsThatConvergeAreNotStopped) {
  // Two runs of the 1-D Poisson problem that converged after 56 and 58 s, and a stiffness-like
  // matrix the old forecast stopped after 96 s as "stopped falling" while its largest changes
  // fell 5x over the last 48 s (it needs a few minutes, well within 2 x timeout_s).
  for (const char* trace : {"tridiagonal_10000_a", "tridiagonal_10000_b", "stiffness_4900"}) {
    EXPECT_EQ(FirstVerdict(trace, 300, 1e-8), "") << trace;
  }
}

// The run ended there by the old forecast: after the restart (a task replaced) the first samples
// were tiny, before the restored task's values reached the others, and the window began on
// them. Its changes then fell 250x in 17 s.
TEST(ConvergenceForecastTest, ARunRestoredAfterALossIsNotStoppedForItsQuietStart) {
  EXPECT_EQ(FirstVerdict("restored_cg_90000", 240, 1e-12, 30), "");
}

}  // namespace
}  // namespace aiac::spawner
