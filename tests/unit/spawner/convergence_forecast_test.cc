// The forecast of a run's convergence from its largest local change: no verdict on a short
// history, a run converging fast enough goes on, a flat or too slow one is stopped with the
// numbers, tightening lowers the target and forgets the old rate, and noise does not fool it.
#include "spawner/convergence_forecast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

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
  // least squares of the raw changes would see little fall; the lowest changes do.
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

}  // namespace
}  // namespace aiac::spawner
