// Storage faults on a real filesystem: a small tmpfs the test mounts (skipped with a message
// where mounting is not allowed). A full disk at start is one line and exit 2, not an abort
// inside RocksDB; a disk that fills while running costs nothing but persistence, which comes
// back when space does.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

class SmallDisk {
 public:
  SmallDisk(const std::string& path, const char* size) : path_(path) {
    std::filesystem::create_directories(path);
    if (::mount("tmpfs", path.c_str(), "tmpfs", 0, (std::string("size=") + size).c_str()) == 0) {
      mounted_ = true;
    } else {
      why_ = std::strerror(errno);
    }
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }
  // Fills the disk until `leave` bytes are free.
  void Fill(uint64_t leave) {
    struct statvfs fs {};
    ASSERT_EQ(::statvfs(path_.c_str(), &fs), 0);
    const uint64_t free_bytes = uint64_t{fs.f_bavail} * fs.f_frsize;
    ASSERT_GT(free_bytes, leave);
    const int fd = ::open((path_ + "/fill").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::posix_fallocate(fd, 0, static_cast<off_t>(free_bytes - leave)), 0);
    ::close(fd);
  }
  void Unfill() { std::filesystem::remove(path_ + "/fill"); }

 private:
  std::string path_, why_;
  bool mounted_ = false;
};

using StorageTest = ClusterFixture;

TEST_F(StorageTest, FullDiskIsAnErrorNotAnAbortAndPersistenceComesBack) {
  SmallDisk disk(dir_ / "disk", "32m");
  if (!disk.mounted())
    GTEST_SKIP() << "cannot mount a tmpfs here (" << disk.why() << "): this test needs root";
  const std::vector<std::string> args{
      "--config", dir_ / "key.toml", "--listen",       "127.0.0.1:0",  "--id",
      "sn1",      "--data",          dir_ / "disk/db", "--ready-file", dir_ / "sn1.addr"};
  // Full at start: one line, exit 2.
  disk.Fill(512 * 1024);
  procs_.insert_or_assign("sn1", Start("aiac-supernode", args, dir_ / "sn1.log"));
  auto code = procs_.at("sn1").WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value()) << Log("sn1");
  EXPECT_EQ(*code, 2) << Log("sn1");
  const std::string refusal = Log("sn1");
  EXPECT_NE(refusal.find("free on its filesystem"), std::string::npos) << refusal;
  EXPECT_EQ(std::count(refusal.begin(), refusal.end(), '\n'), 1) << refusal;

  // Room again: it starts; the disk fills while it runs: it keeps registering daemons.
  disk.Unfill();
  procs_.insert_or_assign("sn1", Start("aiac-supernode", args, dir_ / "sn1.log"));
  const std::string sn = WaitForFile(dir_ / "sn1.addr");
  ASSERT_FALSE(sn.empty()) << Log("sn1");
  StartDaemon("d1", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
  disk.Fill(512 * 1024);
  StartDaemon("d2", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d2 registered"); })) << Log("sn1");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "registry store unavailable"); })) << Log("sn1");
  disk.Unfill();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "registry store available again: 2 records"); }))
      << Log("sn1");
  const std::string log = Log("sn1");
  size_t unavailable = 0;
  for (size_t p = 0; (p = log.find("registry store unavailable", p)) != std::string::npos; ++p)
    ++unavailable;
  EXPECT_EQ(unavailable, 1u) << log;

  // What was registered while the disk was full survives a restart.
  EXPECT_EQ(procs_.at("sn1").Stop(), 0);
  std::remove((dir_ / "sn1.addr").c_str());
  procs_.insert_or_assign("sn1", Start("aiac-supernode", args, dir_ / "sn1-again.log"));
  ASSERT_FALSE(WaitForFile(dir_ / "sn1.addr").empty()) << Log("sn1-again");
  EXPECT_NE(Log("sn1-again").find("(2 daemons in registry"), std::string::npos) << Log("sn1-again");
}

}  // namespace
}  // namespace aiac::testing
