#include "net/group_commit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace aiac::net {
namespace {

// What a test's commits wrote: each commit takes everything staged so far.
struct Journal {
  std::vector<int> staged;
  std::vector<std::vector<int>> commits;
  bool Written(int item) const {
    return std::any_of(commits.begin(), commits.end(), [&](const std::vector<int>& c) {
      return std::find(c.begin(), c.end(), item) != c.end();
    });
  }
};

awaitable<void> StageAndWait(Journal& j, GroupCommit& gc, int item, std::vector<int>& resumed) {
  j.staged.push_back(item);
  co_await gc.Wait();
  // Resumed only once what it staged was written.
  EXPECT_TRUE(j.Written(item)) << item;
  resumed.push_back(item);
}

TEST(GroupCommitTest, ChangesStagedTogetherShareOneCommitAndLaterOnesTakeTheNext) {
  asio::io_context io;
  Journal j;
  GroupCommit gc(io.get_executor(), [&] {
    j.commits.push_back(j.staged);
    j.staged.clear();
  });
  std::vector<int> resumed;
  for (int i = 0; i < 5; ++i) asio::co_spawn(io, StageAndWait(j, gc, i, resumed), asio::detached);
  io.run();
  ASSERT_EQ(j.commits.size(), 1u);
  EXPECT_EQ(j.commits[0], (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(resumed.size(), 5u);
  EXPECT_EQ(gc.commits(), 1u);

  // A waiter that stages again once resumed is not carried by the commit that resumed it.
  io.restart();
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        co_await StageAndWait(j, gc, 10, resumed);
        co_await StageAndWait(j, gc, 11, resumed);
      },
      asio::detached);
  asio::co_spawn(io, StageAndWait(j, gc, 12, resumed), asio::detached);
  io.run();
  ASSERT_EQ(j.commits.size(), 3u);
  EXPECT_EQ(j.commits[1], (std::vector<int>{10, 12}));
  EXPECT_EQ(j.commits[2], (std::vector<int>{11}));
  EXPECT_EQ(resumed.size(), 8u);
}

TEST(GroupCommitTest, NoWaiterNoCommit) {
  asio::io_context io;
  int commits = 0;
  GroupCommit gc(io.get_executor(), [&] { ++commits; });
  io.run();
  EXPECT_EQ(commits, 0);
}

}  // namespace
}  // namespace aiac::net
