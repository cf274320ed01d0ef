// A platform in the middle of an upgrade: processes of the previous protocol version (pinned
// with max_protocol_version = 4, which makes a current build offer what a version 4 build
// offers) beside current ones. Each pair speaks the newest version both know; jobs run across
// them; what the old version lacks (replacing a lost daemon of a synchronous run, whose daemons
// must keep the values they send) is said, not failed.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "cluster_fixture.h"

namespace aiac::testing {
namespace {

class MixedVersionTest : public ClusterFixture {};

TEST_F(MixedVersionTest, OldAndNewProcessesRunAJobTogether) {
  WriteFile(dir_ / "sn.toml", ReadFile(dir_ / "key.toml") + "digest_interval_ms = 200\n");
  const std::vector<std::string> old{"--max-protocol-version", "4"};
  std::vector<std::string> old_sn = old;
  const std::string sn_old = StartSupernode("sn-old", old_sn, "127.0.0.1:0", "sn.toml");
  const std::string sn_new = StartSupernode("sn-new", {"--peer", sn_old}, "127.0.0.1:0", "sn.toml");
  StartDaemon("d1", {sn_old}, "key.toml", "1", old);
  StartDaemon("d2", {sn_old});
  StartDaemon("d3", {sn_new});

  // The new super-node lists every daemon, the old one's from its (version 4) digest.
  std::string out;
  ASSERT_TRUE(WaitUntil(
      [&] {
        if (Ask({"status", "--supernode", sn_new, "--json"}, out) != 0) return false;
        auto seen = nlohmann::json::parse(out, nullptr, false);
        return seen.is_object() && seen["daemons"].size() == 3;
      },
      std::chrono::seconds(60)))
      << out << Log("sn-new");
  // The old one answers too: version 4 has status.
  EXPECT_EQ(Ask({"status", "--supernode", sn_old}, out, "old-status"), 0) << out;

  // A job on the old super-node's daemons, one old and one new, from a new spawner.
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn_old,
                        RingJob(2, 200), "--json", dir_ / "ring.json"},
                       "spawner", std::chrono::seconds(120)),
            0)
      << Log("spawner") << Log("sn-old");
  const nlohmann::json summary = Json("ring.json");
  EXPECT_EQ(summary["status"], "converged") << summary.dump(2);
  std::set<std::string> used;
  for (const auto& t : summary["per_task"]) used.insert(t["daemon"].get<std::string>());
  EXPECT_EQ(used, (std::set<std::string>{"d1", "d2"}));

  // A synchronous job on the same two daemons: the new one keeps its values and is told when
  // it may drop them, the old one is never sent that; a loss ends the run saying why (a job of
  // minutes, so that the kill ends it).
  WriteJob("sync.toml",
           "name = \"sync\"\napp = \"synthetic\"\ntasks = 2\ntimeout_s = 120\nbackups = 1\n"
           "checkpoint_seconds = 0.1\n[params]\nitems = 2000\niterations = 1000000\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "key.toml", "--supernode", sn_old,
                        dir_ / "sync.toml", "--sync", "--balance", "off"},
                       dir_ / "sync.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sync", "iterations"); }, std::chrono::seconds(60)))
      << Log("sync");
  // The new daemon dies: the old one keeps no values for its replacement.
  const auto d2 = ProcessesMatching(dir_.path(), "--id d2 ");
  ASSERT_EQ(d2.size(), 1u);
  kill(d2[0], SIGKILL);
  auto code = spawner.WaitFor(std::chrono::seconds(60));
  ASSERT_TRUE(code.has_value()) << Log("sync");
  EXPECT_EQ(*code, 1) << Log("sync");
  EXPECT_TRUE(LogHas("sync",
                     "daemon d1 speaks protocol 4, and a synchronous run replaces a "
                     "daemon only when all of its daemons speak 5"))
      << Log("sync");
  // Nobody sent anyone a message its version does not know.
  for (const char* p : {"sn-old", "sn-new", "d1", "d2", "d3"}) {
    EXPECT_FALSE(LogHas(p, "unexpected message")) << p << "\n" << Log(p);
    EXPECT_FALSE(LogHas(p, "a message of protocol")) << p << "\n" << Log(p);
  }
}

}  // namespace
}  // namespace aiac::testing
