#include "runtime/convergence.h"

#include <gtest/gtest.h>

namespace aiac::runtime {
namespace {

TEST(ConvergenceDetectorTest, DeclaresAfterAConfirmedRound) {
  ConvergenceDetector d(3);
  d.OnLocal(0, true);
  d.OnLocal(1, true);
  EXPECT_FALSE(d.RoundToOpen().has_value()) << "task 2 has not converged";
  d.OnLocal(2, true);
  auto round = d.RoundToOpen();
  ASSERT_TRUE(round.has_value());
  EXPECT_FALSE(d.RoundToOpen().has_value()) << "one round at a time";
  d.OnAnswer(0, *round, true);
  d.OnAnswer(1, *round, true);
  EXPECT_FALSE(d.converged());
  d.OnAnswer(2, *round, true);
  EXPECT_TRUE(d.converged());
}

TEST(ConvergenceDetectorTest, ResetForgetsADeclaredConvergenceAndStaleAnswers) {
  ConvergenceDetector d(2);
  d.OnLocal(0, true);
  d.OnLocal(1, true);
  auto r1 = d.RoundToOpen();
  ASSERT_TRUE(r1);
  d.OnAnswer(0, *r1, true);
  d.OnAnswer(1, *r1, true);
  ASSERT_TRUE(d.converged());
  d.Reset();
  EXPECT_FALSE(d.converged());
  EXPECT_EQ(d.converged_count(), 0u);
  EXPECT_FALSE(d.RoundToOpen().has_value()) << "no task has converged since the reset";
  d.OnLocal(0, true);
  d.OnLocal(1, true);
  auto r2 = d.RoundToOpen();
  ASSERT_TRUE(r2);
  EXPECT_GT(*r2, *r1);
  d.OnAnswer(0, *r1, true);  // an answer to the round before the reset
  d.OnAnswer(1, *r1, true);
  EXPECT_FALSE(d.converged());
  d.OnAnswer(0, *r2, true);
  d.OnAnswer(1, *r2, true);
  EXPECT_TRUE(d.converged());
}

TEST(ConvergenceDetectorTest, WithdrawnTaskUndoesADeclarationUntilItConvergesAgain) {
  ConvergenceDetector d(2);
  d.OnLocal(0, true);
  d.OnLocal(1, true);
  auto r1 = d.RoundToOpen();
  d.OnAnswer(0, *r1, true);
  d.OnAnswer(1, *r1, true);
  ASSERT_TRUE(d.converged());
  d.Withdraw(1);
  EXPECT_FALSE(d.converged());
  EXPECT_EQ(d.converged_count(), 1u) << "task 0 still counts";
  EXPECT_FALSE(d.RoundToOpen().has_value());
  d.OnLocal(1, true);
  auto r2 = d.RoundToOpen();
  ASSERT_TRUE(r2);
  d.OnAnswer(0, *r2, true);
  d.OnAnswer(1, *r2, true);
  EXPECT_TRUE(d.converged());
}

TEST(ConvergenceDetectorTest, TaskLosingConvergenceDuringConfirmationCancelsTheRound) {
  ConvergenceDetector d(2);
  d.OnLocal(0, true);
  d.OnLocal(1, true);
  auto r1 = d.RoundToOpen();
  ASSERT_TRUE(r1);
  d.OnAnswer(0, *r1, true);
  d.OnLocal(1, false);       // new data arrived at task 1 before it answered
  d.OnAnswer(1, *r1, true);  // an answer of the cancelled round no longer counts
  EXPECT_FALSE(d.converged());
  EXPECT_EQ(d.rounds_cancelled(), 1u);
  EXPECT_FALSE(d.RoundToOpen().has_value());
  d.OnLocal(1, true);
  auto r2 = d.RoundToOpen();
  ASSERT_TRUE(r2);
  EXPECT_GT(*r2, *r1);
  d.OnAnswer(0, *r1, true);  // stale round: ignored
  d.OnAnswer(1, *r2, true);
  EXPECT_FALSE(d.converged());
  d.OnAnswer(0, *r2, true);
  EXPECT_TRUE(d.converged());
}

TEST(ConvergenceDetectorTest, NegativeAnswerCancels) {
  ConvergenceDetector d(2);
  d.OnLocal(0, true);
  d.OnLocal(1, true);
  auto r = d.RoundToOpen();
  d.OnAnswer(0, *r, false);
  d.OnAnswer(1, *r, true);
  EXPECT_FALSE(d.converged());
  EXPECT_EQ(d.converged_count(), 1u);
  EXPECT_FALSE(d.RoundToOpen().has_value());
}

TEST(ConvergenceDetectorTest, UnknownTasksIgnored) {
  ConvergenceDetector d(1);
  d.OnLocal(7, true);
  EXPECT_FALSE(d.RoundToOpen().has_value());
  d.OnLocal(0, true);
  auto r = d.RoundToOpen();
  d.OnAnswer(9, *r, true);
  EXPECT_FALSE(d.converged());
  d.OnAnswer(0, *r, true);
  EXPECT_TRUE(d.converged());
}

// A task answers each round number once (TaskRunner), so a spawner that takes a job over must not
// open a round an earlier incarnation opened: a resumed spawner whose predecessor was killed while
// it gathered the result asked round 1 again, which the tasks had answered, and waited for the
// job's timeout. Each incarnation's rounds lie above every round the one before could open.
TEST(ConvergenceDetectorTest, AResumedSpawnersRoundsLieAboveEveryEarlierIncarnations) {
  EXPECT_EQ(ConvergenceDetector::RoundBase(1), 0u);  // a job never resumed: 1, 2, ...
  ConvergenceDetector first(1, ConvergenceDetector::RoundBase(1));
  ConvergenceDetector second(1, ConvergenceDetector::RoundBase(2));
  ConvergenceDetector third(1, ConvergenceDetector::RoundBase(3));
  for (auto* d : {&first, &second, &third}) d->OnLocal(0, true);
  EXPECT_EQ(first.RoundToOpen(), 1u);
  const auto r2 = second.RoundToOpen();
  ASSERT_TRUE(r2);
  EXPECT_EQ(*r2, ConvergenceDetector::RoundBase(2) + 1);
  // However many rounds the first incarnation opened (each cancelled one opens another).
  EXPECT_GT(*r2, uint64_t{1} << 31);
  // An answer to an earlier incarnation's round number is stale here.
  second.OnAnswer(0, 1, true);
  EXPECT_FALSE(second.converged());
  second.OnAnswer(0, *r2, true);
  EXPECT_TRUE(second.converged());
  const auto r3 = third.RoundToOpen();
  ASSERT_TRUE(r3);
  EXPECT_GT(*r3, *r2 + (uint64_t{1} << 31));
}

}  // namespace
}  // namespace aiac::runtime
