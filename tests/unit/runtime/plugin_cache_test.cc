// A daemon's store of received plugins is a bounded cache: past its bound the files least
// recently used go, never one the process has loaded.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/read_file.h"
#include "core/sha256.h"
#include "runtime/plugin.h"
#include "support/test_support.h"

namespace aiac::runtime {
namespace {

namespace fs = std::filesystem;

TEST(PluginCacheTest, TheLeastRecentlyUsedGoFirstAndLoadedOnesStay) {
  testing::TempDir dir;
  const std::string store_dir = dir.path() + "/plugins";
  auto ring = ReadWholeFile(AIAC_RING_PLUGIN);
  auto synthetic = ReadWholeFile(AIAC_SYNTHETIC_PLUGIN);
  ASSERT_TRUE(ring.ok() && synthetic.ok());
  const std::string ring_hash = Sha256(*ring), synthetic_hash = Sha256(*synthetic);
  {
    PluginStore unbounded(store_dir);
    ASSERT_TRUE(unbounded.Add(ring_hash, *ring).ok());
    ASSERT_TRUE(unbounded.Add(synthetic_hash, *synthetic).ok());
    EXPECT_TRUE(unbounded.Evict().empty());
  }
  EXPECT_EQ(PluginStore(store_dir).StoredBytes(), ring->size() + synthetic->size());
  // The ring plugin was used an hour ago, the synthetic one now.
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(store_dir + "/" + Hex(ring_hash) + ".so", now - std::chrono::hours(1));
  fs::last_write_time(store_dir + "/" + Hex(synthetic_hash) + ".so", now);

  // A daemon restarted with room for one of them: the older goes.
  PluginStore one(store_dir, std::max(ring->size(), synthetic->size()));
  const auto removed = one.Evict();
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], Hex(ring_hash) + ".so");
  EXPECT_TRUE(one.Find(synthetic_hash).ok());
  EXPECT_EQ(one.Find(ring_hash).status().code(), StatusCode::kNotFound);  // to be sent again

  // With no room at all, the one this process loaded stays; another process removes it.
  PluginStore none(store_dir, 1);
  ASSERT_TRUE(none.Find(synthetic_hash).ok());
  EXPECT_TRUE(none.Evict().empty());
  EXPECT_EQ(PluginStore(store_dir, 1).Evict().size(), 1u);
  EXPECT_EQ(PluginStore(store_dir).StoredBytes(), 0u);
}

}  // namespace
}  // namespace aiac::runtime
