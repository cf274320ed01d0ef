#include "spawner/deployment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "unit/spawner/deployment_fixtures.h"

namespace aiac::spawner {
namespace {

using test::Daemons;
using test::Ring;

std::unique_ptr<Deployment> Make(uint32_t tasks, std::vector<GrantedDaemon> daemons,
                                 uint32_t backups = 2) {
  auto d = Deployment::Create({Ring(tasks), "maheve", backups}, std::move(daemons));
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? std::move(*d) : nullptr;
}

std::set<std::string> TaskDaemons(const Deployment& d) {
  std::set<std::string> out;
  for (size_t t = 0; t < d.tasks(); ++t) out.insert(d.task(t).daemon);
  return out;
}

TEST(DeploymentTest, EachTaskGetsADaemonOfItsOwnAndCheckpointsGoToOtherTasks) {
  auto d = Make(4, Daemons(6));
  ASSERT_TRUE(d);
  EXPECT_EQ(TaskDaemons(*d).size(), 4u);
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(d->task(t).incarnation, 1u);
    EXPECT_FALSE(d->task(t).waiting);
    EXPECT_EQ(d->senders(t).size(), 2u);
    ASSERT_EQ(d->backups(t).size(), 2u);
    for (uint32_t b : d->backups(t)) {
      EXPECT_NE(b, t) << "a task's checkpoints never stay on its own daemon";
      const auto& hosted = d->hosted(b);
      EXPECT_NE(std::find(hosted.begin(), hosted.end(), t), hosted.end())
          << "hosted mirrors backups";
    }
  }
}

TEST(DeploymentTest, NoBackupsWithoutCheckpoints) {
  auto d = Make(3, Daemons(3), 0);
  ASSERT_TRUE(d);
  for (size_t t = 0; t < 3; ++t) {
    EXPECT_TRUE(d->backups(t).empty());
    EXPECT_TRUE(d->hosted(t).empty());
  }
}

TEST(DeploymentTest, RefusesFewerDaemonsThanTasks) {
  EXPECT_FALSE(Deployment::Create({Ring(4), "maheve", 2}, Daemons(3)).ok());
  EXPECT_FALSE(Deployment::Create({Ring(2), "nope", 2}, Daemons(3)).ok());
}

TEST(DeploymentTest, ALostDaemonsTaskMovesToAFreeOneWithTheNextIncarnation) {
  auto d = Make(4, Daemons(6));
  ASSERT_TRUE(d);
  const auto before = TaskDaemons(*d);
  const std::string dead = d->task(2).daemon;
  const auto backups = d->backups(2);
  ASSERT_TRUE(d->Lose(2));
  EXPECT_TRUE(d->lost(dead));
  EXPECT_EQ(d->task(2).incarnation, 2u);
  EXPECT_FALSE(d->task(2).waiting);
  EXPECT_EQ(before.count(d->task(2).daemon), 0u) << "a free daemon, never one running a task";
  EXPECT_EQ(TaskDaemons(*d).size(), 4u);
  EXPECT_EQ(d->backups(2), backups) << "backups name tasks: they follow the task";
  // The next loss of the same task: again a daemon of its own, never a dead one.
  const std::string second = d->task(2).daemon;
  ASSERT_TRUE(d->Lose(2));
  EXPECT_EQ(d->task(2).incarnation, 3u);
  EXPECT_NE(d->task(2).daemon, dead);
  EXPECT_NE(d->task(2).daemon, second);
  EXPECT_EQ(TaskDaemons(*d).size(), 4u);
}

// A task graph reweighed before the start (App::Reweigh): the same daemons, the new neighbours,
// and a later replacement still works on the new graph.
TEST(DeploymentTest, ANewTaskGraphKeepsTheDaemonsAndTakesTheNewNeighbours) {
  auto d = Make(4, Daemons(5));
  ASSERT_TRUE(d);
  std::vector<std::string> daemons;
  for (size_t t = 0; t < 4; ++t) daemons.push_back(d->task(t).daemon);
  const auto backups = d->backups(1);
  // A chain 0 - 1 - 2 - 3 instead of the ring, with uneven costs.
  std::vector<app::TaskNode> chain(4);
  for (uint32_t t = 0; t < 4; ++t) {
    chain[t].cost = 10.0 * (t + 1);
    if (t > 0) chain[t].edges.push_back({t - 1, 1.0});
    if (t < 3) chain[t].edges.push_back({t + 1, 1.0});
  }
  ASSERT_TRUE(d->Regraph(chain).ok());
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(d->task(t).daemon, daemons[t]);
  EXPECT_EQ(d->senders(0), (std::vector<uint32_t>{1}));
  EXPECT_EQ(d->senders(3), (std::vector<uint32_t>{2}));
  EXPECT_EQ(d->backups(1), backups);
  ASSERT_TRUE(d->Lose(3));
  EXPECT_EQ(TaskDaemons(*d).size(), 4u);
  EXPECT_NE(d->task(3).daemon, daemons[3]);
  // A graph of another task count is refused.
  EXPECT_FALSE(d->Regraph(Ring(3)).ok());
}

TEST(DeploymentTest, WithNoFreeDaemonTheTaskWaitsForAGrant) {
  auto d = Make(3, Daemons(3));
  ASSERT_TRUE(d);
  const std::string dead = d->task(1).daemon;
  EXPECT_FALSE(d->Lose(1));
  EXPECT_TRUE(d->task(1).waiting);
  EXPECT_EQ(d->task(1).incarnation, 2u);
  EXPECT_FALSE(d->Place(1)) << "nothing granted yet";
  d->AddGranted(Daemons(1, "c", 9));
  ASSERT_TRUE(d->Place(1));
  EXPECT_EQ(d->task(1).daemon, "d9");
  EXPECT_EQ(d->task(1).address, "127.0.0.1:7009");
  EXPECT_FALSE(d->task(1).waiting);
  EXPECT_EQ(d->granted().size(), 4u);
  EXPECT_TRUE(d->lost(dead));
}

TEST(DeploymentTest, ADaemonRestartedUnderItsIdCountsAsAliveAgain) {
  auto d = Make(2, Daemons(2));
  ASSERT_TRUE(d);
  const std::string dead = d->task(0).daemon;
  EXPECT_FALSE(d->Lose(0));
  d->AddGranted({{dead, "127.0.0.1:9999", "c", 1.0}});
  EXPECT_FALSE(d->lost(dead));
  ASSERT_TRUE(d->Place(0));
  EXPECT_EQ(d->task(0).daemon, dead);
  EXPECT_EQ(d->task(0).address, "127.0.0.1:9999");
  EXPECT_EQ(d->granted().size(), 2u);
}

TEST(DeploymentTest, TwoTasksWaitingAreEachPlacedOnADaemonOfTheirOwn) {
  auto d = Make(3, Daemons(3));
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->Lose(0));
  EXPECT_FALSE(d->Lose(2));
  d->AddGranted(Daemons(1, "c", 20));
  ASSERT_TRUE(d->Place(2));
  EXPECT_FALSE(d->Place(0)) << "d20 runs task 2 now";
  d->AddGranted(Daemons(1, "c", 21));
  ASSERT_TRUE(d->Place(0));
  EXPECT_EQ(TaskDaemons(*d), (std::set<std::string>{d->task(1).daemon, "d20", "d21"}));
}

}  // namespace
}  // namespace aiac::spawner
