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

}  // namespace
}  // namespace aiac
