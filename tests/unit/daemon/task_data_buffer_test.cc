#include "daemon/task_data_buffer.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include "core/sha256.h"
#include "net/capnp_bytes.h"
#include "runtime/plugin.h"

namespace aiac::daemon {
namespace {

// Feeds `buffer` one TaskData chunk.
Status Feed(TaskDataBuffer& buffer, const std::string& job, uint32_t task, uint64_t offset,
            uint64_t total, const std::string& bytes) {
  capnp::MallocMessageBuilder message;
  auto d = message.initRoot<proto::TaskData>();
  d.setJob(job);
  d.setTask(task);
  d.setOffset(offset);
  d.setTotal(total);
  d.setBytes(net::AsBytes(bytes));
  return buffer.Add(d.asReader());
}

TEST(TaskDataBufferTest, ReassemblesChunksAndChecksSizeAndHash) {
  const std::string whole = std::string(5000, 'a') + std::string(5000, 'b') + "tail";
  TaskDataBuffer buffer;
  for (size_t off = 0; off < whole.size(); off += 4096) {
    ASSERT_TRUE(Feed(buffer, "job-1", 3, off, whole.size(), whole.substr(off, 4096)).ok());
  }
  auto got = buffer.Take("job-1", 3, whole.size(), Sha256(whole));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, whole);
}

TEST(TaskDataBufferTest, RefusesChunksOutOfOrderOrPastTheTotal) {
  TaskDataBuffer buffer;
  ASSERT_TRUE(Feed(buffer, "j", 0, 0, 10, "01234").ok());
  EXPECT_FALSE(Feed(buffer, "j", 0, 7, 10, "789").ok()) << "a gap";
  TaskDataBuffer other;
  ASSERT_TRUE(Feed(other, "j", 0, 0, 10, "01234").ok());
  EXPECT_FALSE(Feed(other, "j", 1, 5, 10, "56789").ok()) << "another task's chunk mid-way";
  TaskDataBuffer over;
  ASSERT_TRUE(Feed(over, "j", 0, 0, 6, "01234").ok());
  EXPECT_FALSE(Feed(over, "j", 0, 5, 6, "56").ok()) << "past the declared total";
}

TEST(TaskDataBufferTest, RefusesATotalThatCannotFitInMemory) {
  TaskDataBuffer buffer;
  Status s = Feed(buffer, "j", 0, 0, uint64_t{1} << 60, "x");
  EXPECT_FALSE(s.ok());
}

TEST(TaskDataBufferTest, TakeChecksTheTaskTheSizeAndTheHash) {
  const std::string whole = "0123456789";
  {
    TaskDataBuffer b;
    ASSERT_TRUE(Feed(b, "j", 0, 0, 10, whole).ok());
    EXPECT_FALSE(b.Take("j", 1, 10, Sha256(whole)).ok()) << "another task";
  }
  {
    TaskDataBuffer b;
    ASSERT_TRUE(Feed(b, "j", 0, 0, 10, "01234").ok());
    auto got = b.Take("j", 0, 10, Sha256(whole));
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find("5 of 10 bytes"), std::string::npos)
        << got.status().message();
  }
  {
    TaskDataBuffer b;
    ASSERT_TRUE(Feed(b, "j", 0, 0, 10, "0123456788").ok());
    auto got = b.Take("j", 0, 10, Sha256(whole));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
  }
  TaskDataBuffer empty;
  EXPECT_FALSE(empty.Take("j", 0, 10, Sha256(whole)).ok()) << "nothing received";
}

// Chunks of a plugin: the same rules under another key, and the task data of a job is not
// mistaken for it.
TEST(TaskDataBufferTest, PluginChunksAreKeptApartAndChecked) {
  const std::string whole = "plugin-bytes";
  TaskDataBuffer b;
  ASSERT_TRUE(b.Add("plugin", 0, 12, "plugin").ok());
  EXPECT_EQ(b.received(), 6u);
  EXPECT_EQ(b.total(), 12u);
  EXPECT_FALSE(b.Add("plugin", 7, 12, "bytes").ok()) << "a gap";
  b = TaskDataBuffer();
  ASSERT_TRUE(b.Add("plugin", 0, 12, "plugin").ok());
  EXPECT_FALSE(b.Add("plugin", 6, 12, "-bytes and more").ok()) << "past the total";
  b = TaskDataBuffer();
  ASSERT_TRUE(b.Add("plugin", 0, 12, "plugin").ok());
  ASSERT_TRUE(b.Add("plugin", 6, 12, "-bytes").ok());
  auto got = b.Take("plugin", 12, Sha256(whole));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, whole);
  ASSERT_TRUE(b.Add("plugin", 0, 12, "plugin-bytez").ok());
  EXPECT_EQ(b.Take("plugin", 12, Sha256(whole)).status().code(), StatusCode::kCorruption);
  ASSERT_TRUE(Feed(b, "j", 0, 0, 12, whole).ok());
  EXPECT_FALSE(b.Take("plugin", 12, Sha256(whole)).ok()) << "task data is not a plugin";
}

}  // namespace
}  // namespace aiac::daemon
