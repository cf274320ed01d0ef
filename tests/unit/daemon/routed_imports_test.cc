#include "daemon/routed_imports.h"

#include <gtest/gtest.h>

#include "core/sha256.h"
#include "runtime/plugin.h"

namespace aiac::daemon {
namespace {

TEST(RoutedImportsTest, ItemsThatComeFirstWaitForTheSpawnersWord) {
  RoutedImports r;
  auto came = r.Arrive(3, "abc");
  ASSERT_TRUE(came.ok());
  EXPECT_FALSE(came->has_value());
  EXPECT_EQ(r.Expect(3, Sha256("abc")), std::optional<std::string>("abc"));
  EXPECT_EQ(r.waiting(), 0u);
  // Taken once: neither a late routed copy nor the spawner's own is imported again.
  EXPECT_FALSE(r.Arrive(3, "abc")->has_value());
  EXPECT_FALSE(r.Direct(3));
}

TEST(RoutedImportsTest, TheSpawnersWordThatComesFirstWaitsForTheItems) {
  RoutedImports r;
  EXPECT_FALSE(r.Expect(4, Sha256("xyz")).has_value());
  auto came = r.Arrive(4, "xyz");
  ASSERT_TRUE(came.ok());
  EXPECT_EQ(*came, std::optional<std::string>("xyz"));
  EXPECT_FALSE(r.Direct(4));
}

TEST(RoutedImportsTest, ItemsThatAreNotTheSpawnersAreNeverImported) {
  RoutedImports r;
  EXPECT_FALSE(r.Expect(5, Sha256("good")).has_value());
  EXPECT_FALSE(r.Arrive(5, "forged").ok());
  // Came first and wrong: dropped when the spawner names the right hash; the right ones still go.
  EXPECT_FALSE(r.Arrive(6, "forged")->has_value());
  EXPECT_FALSE(r.Expect(6, Sha256("good")).has_value());
  EXPECT_EQ(*r.Arrive(6, "good"), std::optional<std::string>("good"));
  EXPECT_EQ(*r.Arrive(5, "good"), std::optional<std::string>("good"));
}

TEST(RoutedImportsTest, TheSpawnersCopyAfterAFailedRouteIsImportedOnce) {
  RoutedImports r;
  EXPECT_FALSE(r.Expect(7, Sha256("items")).has_value());
  EXPECT_TRUE(r.Direct(7));
  EXPECT_FALSE(r.Arrive(7, "items")->has_value());  // the route delivered after all: ignored
  EXPECT_FALSE(r.Direct(7));
  EXPECT_EQ(r.waiting(), 0u);
}

TEST(RoutedImportsTest, UnclaimedItemsAreBounded) {
  RoutedImports r;
  for (uint64_t m = 1; m <= RoutedImports::kMaxWaiting + 5; ++m) ASSERT_TRUE(r.Arrive(m, "x").ok());
  EXPECT_EQ(r.waiting(), RoutedImports::kMaxWaiting);
  // The oldest went: the spawner will send those itself when their routes time out.
  EXPECT_FALSE(r.Expect(1, Sha256("x")).has_value());
  EXPECT_TRUE(r.Expect(RoutedImports::kMaxWaiting + 5, Sha256("x")).has_value());
}

}  // namespace
}  // namespace aiac::daemon
