// WriteAll: a buffer larger than its 1 MiB pieces arrives whole, read back with ReadWholeFile; a
// descriptor that cannot be written gives the system's reason.
#include "core/write_all.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "core/read_file.h"
#include "support/test_support.h"

namespace aiac {
namespace {

TEST(WriteAllTest, WritesEveryPieceInOrder) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  std::string bytes(3 * (1 << 20) + 12345, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 + i / 4099);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(WriteAll(fd, bytes), 0);
  EXPECT_EQ(WriteAll(fd, ""), 0);
  ASSERT_EQ(::close(fd), 0);
  auto back = ReadWholeFile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(*back == bytes);
}

TEST(WriteAllTest, AFailedWriteGivesItsErrno) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  testing::WriteFile(path, "x");
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(WriteAll(fd, "abc"), EBADF);
  ::close(fd);
}

}  // namespace
}  // namespace aiac
