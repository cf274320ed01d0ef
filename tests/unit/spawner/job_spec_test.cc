// Job files (spawner/job_spec.h): a job read from its file keeps the file's text, and the same text
// read as that file's copy (a resumed run's, from its state) gives the same job, its folder that of
// the path, whether or not the file is still there.
#include "spawner/job_spec.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"

namespace aiac::spawner {
namespace {

using aiac::testing::TempDir;
using aiac::testing::WriteFile;

constexpr const char* kJob =
    "name = \"j\"\napp = \"cg\"\ntasks = 3\nplugin = \"lib/app.so\"\n[params]\nn = 500\n";

TEST(JobSpecTest, AJobReadFromItsCopyIsTheJobItsFileWas) {
  TempDir dir;
  const std::string folder = dir / "jobs";
  const std::string path = folder + "/j.toml";
  std::filesystem::create_directories(folder);
  WriteFile(path, kJob);
  auto read = LoadJobSpec(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->text, kJob);
  std::filesystem::remove(path);
  auto copy = LoadJobSpecText(path, read->text);
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  EXPECT_EQ(copy->name, "j");
  EXPECT_EQ(copy->tasks, 3u);
  EXPECT_EQ(copy->plugin, folder + "/lib/app.so");  // from the path's folder, the file gone
  EXPECT_EQ(copy->base_dir, read->base_dir);
  EXPECT_EQ(copy->base_dir, folder);
  EXPECT_EQ(copy->params.at("n"), "500");
  EXPECT_EQ(LoadJobSpec(path).status().message(), "job file " + path + " does not exist");
}

TEST(JobSpecTest, ACopyIsCheckedLikeTheFileAndNamedByItsPath) {
  auto bad = LoadJobSpecText("/nowhere/j.toml", "name = \"j\"\napp = \"cg\"\ntasks = -1\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/nowhere/j.toml: option 'tasks'"), std::string::npos)
      << bad.status().message();
  auto broken = LoadJobSpecText("/nowhere/j.toml", "name = \n");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message().rfind("/nowhere/j.toml:1: ", 0), 0u)
      << broken.status().message();
}

}  // namespace
}  // namespace aiac::spawner
