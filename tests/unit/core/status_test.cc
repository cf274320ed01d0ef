#include "core/status.h"

#include <gtest/gtest.h>

namespace aiac {
namespace {

TEST(StatusTest, OkByDefaultAndNamedOtherwise) {
  EXPECT_TRUE(Status().ok());
  Status s = Unavailable("peer down");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "unavailable: peer down");
}

TEST(StatusTest, RetryableOnlyForTransientCodes) {
  EXPECT_TRUE(Unavailable("x").Retryable());
  EXPECT_TRUE(Timeout("x").Retryable());
  EXPECT_FALSE(InvalidArgument("x").Retryable());
  EXPECT_FALSE(Unauthenticated("x").Retryable());
  EXPECT_FALSE(Corruption("x").Retryable());
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad = NotFound("nothing");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
}

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument(std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  AIAC_ASSIGN_OR_RETURN(const int half, Half(x));
  AIAC_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(ResultTest, AssignOrReturnPassesTheFirstErrorOn) {
  EXPECT_EQ(*Quarter(12), 3);
  auto odd = Quarter(6);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "3 is odd");
  EXPECT_EQ(Quarter(5).status().message(), "5 is odd");
}

TEST(StatusTest, DivergedIsItsOwnKindAndNoRetryHelps) {
  Status s = Diverged("block grew without bound");
  EXPECT_EQ(s.code(), StatusCode::kDiverged);
  EXPECT_EQ(s.ToString(), "diverged: block grew without bound");
  EXPECT_FALSE(s.Retryable());
}

TEST(CheckDeathTest, ComparisonsPrintBothValues) {
  const size_t rows = 3, cols = 4;
  EXPECT_DEATH(AIAC_CHECK_EQ(rows, cols), "check failed: rows == cols \\(3 vs 4\\)");
  EXPECT_DEATH(AIAC_CHECK_LT(cols, rows), "check failed: cols < rows \\(4 vs 3\\)");
  EXPECT_DEATH(AIAC_CHECK(rows > cols), "check failed: rows > cols");
  AIAC_CHECK_LE(rows, cols);  // holds: nothing happens
}

}  // namespace
}  // namespace aiac
