// The jobs a super-node shows (supernode/job_board.h): a job whose spawner's connection closes
// stays, as spawner-lost, until no daemon runs its tasks; the others' jobs are untouched.
#include "supernode/job_board.h"

#include <gtest/gtest.h>

#include <set>

namespace aiac::supernode {
namespace {

net::JobStatus Job(const std::string& id) {
  net::JobStatus j;
  j.id = id;
  j.app = "cg";
  j.phase = "running";
  j.eta_seconds = 12;
  j.max_iteration = 40;
  j.task_list = {{0, "d1", 40, 1e-3, 1, 3, 150}, {1, "d2", 38, 2e-3, 1, 3, 90}};
  return j;
}

TEST(JobBoardTest, ALostSpawnersJobStaysWhileItsTasksRun) {
  net::asio::io_context io;
  auto lost = net::Connection::Create(net::tcp::socket(io), net::NetOptions{}, net::Side::kServer);
  auto other = net::Connection::Create(net::tcp::socket(io), net::NetOptions{}, net::Side::kServer);
  JobBoard board;
  ASSERT_EQ(board.Put(Job("a-1"), lost), JobBoard::Update::kRegistered);
  ASSERT_EQ(board.Put(Job("a-2"), lost), JobBoard::Update::kRegistered);
  ASSERT_EQ(board.Put(Job("b-1"), other), JobBoard::Update::kRegistered);
  EXPECT_FALSE(board.any_lost());

  EXPECT_EQ(board.DropSpawner(lost.get()), (std::vector<std::string>{"a-1", "a-2"}));
  EXPECT_TRUE(board.any_lost());
  EXPECT_TRUE(board.IsLost("a-1"));
  EXPECT_FALSE(board.IsLost("b-1"));
  EXPECT_FALSE(board.IsLost("nope"));
  EXPECT_TRUE(board.DropSpawner(lost.get()).empty()) << "marked once";
  for (const auto& j : board.Jobs()) {
    if (j.id == "b-1") {
      EXPECT_EQ(j, Job("b-1"));
      continue;
    }
    // The figures stay the last reported; what nobody can know now is unknown.
    EXPECT_EQ(j.phase, net::kSpawnerLostPhase);
    EXPECT_EQ(j.max_iteration, 40u);
    EXPECT_EQ(j.eta_seconds, -1);
    for (const auto& t : j.task_list) EXPECT_EQ(t.report_age_ms, -1);
  }

  // Forgotten once no daemon runs its tasks; a running job of a live spawner never is.
  std::set<std::string> running{"a-2"};
  auto runs = [&](const std::string& id) { return running.count(id) > 0; };
  EXPECT_EQ(board.ForgetLost(runs), std::vector<std::string>{"a-1"});
  EXPECT_EQ(board.size(), 2u);
  running.clear();
  EXPECT_EQ(board.ForgetLost(runs), std::vector<std::string>{"a-2"});
  EXPECT_FALSE(board.any_lost());
  EXPECT_EQ(board.size(), 1u);
  EXPECT_EQ(board.Jobs()[0].id, "b-1");
}

}  // namespace
}  // namespace aiac::supernode
