// Files written atomically: the whole new content or the old, with the mode asked for, and never
// through a symlink planted where a temporary file could be expected.
#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/temp_dir.h"
#include "support/test_support.h"

namespace aiac {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

TEST(AtomicFileTest, WritesThePartsWithTheModeAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::string path = dir / "f";
  ASSERT_TRUE(WriteFileAtomically(path, {"one ", "two"}, 0600).ok());
  EXPECT_EQ(ReadFile(path), "one two");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(WriteFileAtomically(path, "three").ok());
  EXPECT_EQ(ReadFile(path), "three");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
}

// The old writer used PATH.tmp: a symlink planted there sent the content to its target.
TEST(AtomicFileTest, APlantedSymlinkIsNeverFollowed) {
  TempDir dir;
  const std::string victim = dir / "victim", path = dir / "f";
  WriteFile(victim, "precious");
  std::filesystem::create_symlink(victim, path + ".tmp");
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(ReadFile(victim), "precious");
  EXPECT_EQ(ReadFile(path), "new");
  // A symlink at the path itself is replaced, not written through.
  std::filesystem::remove(path);
  std::filesystem::create_symlink(victim, path);
  ASSERT_TRUE(WriteFileAtomically(path, "newer").ok());
  EXPECT_EQ(ReadFile(victim), "precious");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
}

TEST(AtomicFileTest, AFailureNamesThePath) {
  auto s = WriteFileAtomically("/nonexistent-dir/f", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot write /nonexistent-dir/f"), std::string::npos) << s.message();
}

// The user's own temporary directory is used only when it is private and the user's.
TEST(AtomicFileTest, TheUsersTempDirMustBePrivate) {
  TempDir root;
  const char* old = getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", root.path().c_str(), 1);
  auto dir = UserTempDir();
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  struct stat st {};
  ASSERT_EQ(::lstat(dir->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ::chmod(dir->c_str(), 0755);
  EXPECT_FALSE(UserTempDir().ok());
  std::filesystem::remove(*dir);
  std::filesystem::create_symlink(root / "elsewhere", *dir);
  auto planted = UserTempDir();
  ASSERT_FALSE(planted.ok());
  EXPECT_NE(planted.status().message().find("not a directory"), std::string::npos);
  if (old) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
}

}  // namespace
}  // namespace aiac
