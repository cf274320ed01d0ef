// The fault injector with fake candidates and a fake kill: it waits for the tasks to run, kills
// exactly the planned count among the daemons running a task, skips a period with none, and a
// seed replays the same victims.
#include "spawner/fault_injector.h"

#include <gtest/gtest.h>

#include <set>

#include "core/logging.h"

namespace aiac::spawner {
namespace {

namespace asio = net::asio;

struct Campaign {
  std::vector<std::string> victims;
  int asked = 0;
};

// Runs a plan to its end: no candidates for the first `idle` asks, then d1..d4, of which
// `running` are offered (all when empty).
Campaign RunCampaign(FaultPlan plan, int idle,
                     std::function<std::vector<std::string>(int ask)> running = nullptr) {
  Campaign c;
  asio::io_context io;
  FaultInjector injector(
      plan,
      [&] {
        const int ask = c.asked++;
        if (ask < idle) return std::vector<std::string>{};
        return running ? running(ask) : std::vector<std::string>{"d1", "d2", "d3", "d4"};
      },
      [&](const std::string& id) {
        c.victims.push_back(id);
        return id != "d4";  // one the fake cannot kill: still counted, logged
      },
      MakeLogger("test", spdlog::level::off));
  asio::co_spawn(io, injector.Run(), asio::detached);
  io.run();
  EXPECT_EQ(injector.injected(), plan.count);
  return c;
}

TEST(FaultInjectorTest, KillsThePlannedCountAmongTheRunningDaemonsOnceTheyRun) {
  const Campaign c = RunCampaign({0.01, 5, 42}, /*idle=*/3);
  ASSERT_EQ(c.victims.size(), 5u);
  for (const auto& v : c.victims)
    EXPECT_TRUE(std::set<std::string>({"d1", "d2", "d3", "d4"}).count(v)) << v;
  EXPECT_GE(c.asked, 3 + 5) << "it waited for candidates, then asked before every kill";
}

TEST(FaultInjectorTest, TheSameSeedKillsTheSameDaemons) {
  EXPECT_EQ(RunCampaign({0.01, 6, 7}, 0).victims, RunCampaign({0.01, 6, 7}, 2).victims);
  EXPECT_NE(RunCampaign({0.01, 6, 7}, 0).victims, RunCampaign({0.01, 6, 8}, 0).victims);
}

TEST(FaultInjectorTest, APeriodWithNobodyRunningKillsNobody) {
  // After the first kill, every task is being replaced for two periods.
  const Campaign c = RunCampaign({0.01, 2, 3}, 0, [](int ask) {
    return ask == 2 || ask == 3 ? std::vector<std::string>{} : std::vector<std::string>{"d2"};
  });
  EXPECT_EQ(c.victims, (std::vector<std::string>{"d2", "d2"}));
  EXPECT_GE(c.asked, 5);
}

TEST(FaultInjectorTest, NoPlanNoKill) {
  const Campaign c = RunCampaign({0, 0, 1}, 0);
  EXPECT_TRUE(c.victims.empty());
  EXPECT_EQ(c.asked, 0);
}

}  // namespace
}  // namespace aiac::spawner
