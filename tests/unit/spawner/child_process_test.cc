#include "spawner/child_process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>

#include "support/test_support.h"

namespace aiac::spawner {
namespace {

// A child that counts the SIGTERMs it gets, one line each, and does not exit on them.
ChildProcess CountingChild(const std::string& file) {
  auto child = ChildProcess::Spawn({"/bin/sh", "-c",
                                    "trap 'echo TERM >> " + file + "' TERM; echo up > " + file +
                                        ".up; " + "while :; do sleep 0.01; done"});
  EXPECT_TRUE(child.ok()) << child.status().message();
  return std::move(*child);
}

size_t Lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// aiac's programs take a second SIGTERM as "stop without waiting": Stop() after a SIGTERM
// must not send another one (a local cluster signals every daemon, then stops each).
TEST(ChildProcessTest, StopAfterASigtermSendsNoSecondOne) {
  testing::TempDir dir;
  const std::string file = dir / "terms";
  ChildProcess child = CountingChild(file);
  ASSERT_FALSE(testing::WaitForFile(file + ".up").empty());
  child.Signal(SIGTERM);
  ASSERT_TRUE(testing::WaitUntil([&] { return Lines(testing::ReadFile(file)) == 1; }));
  EXPECT_EQ(child.Stop(std::chrono::milliseconds(300)), 128 + SIGKILL);
  EXPECT_EQ(Lines(testing::ReadFile(file)), 1u);
}

TEST(ChildProcessTest, StopSendsASigtermThenKills) {
  testing::TempDir dir;
  const std::string file = dir / "terms";
  ChildProcess child = CountingChild(file);
  ASSERT_FALSE(testing::WaitForFile(file + ".up").empty());
  EXPECT_EQ(child.Stop(std::chrono::milliseconds(1000)), 128 + SIGKILL);
  EXPECT_EQ(Lines(testing::ReadFile(file)), 1u);
}

}  // namespace
}  // namespace aiac::spawner
