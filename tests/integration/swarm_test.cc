// `swarm`, the load generator of docs/scale.md, against real super-nodes: the daemons it plays
// register, heartbeat, move to the next super-node when theirs is killed, and deregister when
// it stops; its bad input is one line and a non-zero exit.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "cluster_fixture.h"
#include "support/http_client.h"

namespace aiac::testing {
namespace {

class SwarmTest : public ClusterFixture {
 protected:
  // A super-node that admits many handshakes from one address (the swarm's), with its metrics.
  std::string StartBigSupernode(const std::string& name) {
    WriteFile(dir_ / "big.toml",
              ReadFile(dir_ / "key.toml") + "max_handshakes_per_address = 1024\n");
    return StartSupernode(name, {"--metrics", "127.0.0.1:0"}, "127.0.0.1:0", "big.toml");
  }
  double Free(const std::string& metrics) {
    const HttpReply r = HttpGet(metrics, "/metrics");
    return r.status == 200 ? MetricValue(r.body, "aiac_daemons{state=\"free\"}") : -1;
  }
  spawner::ChildProcess StartSwarm(const std::vector<std::string>& supernodes, int daemons,
                                   std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--config",         dir_ / "key.toml",  "--authority-private-key",
                                  AuthorityKeyFile(), "--daemons",        std::to_string(daemons),
                                  "--json",           dir_ / "swarm.json"};
    for (const auto& s : supernodes) args.insert(args.end(), {"--supernode", s});
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::Start("swarm", args, dir_ / "swarm.log");
  }
};

// 300 daemons from one process: the super-node counts them free while they heartbeat, and none
// once the swarm stopped (each deregistered); the summary says what they did.
TEST_F(SwarmTest, PlayedDaemonsRegisterHeartbeatAndDeregister) {
  const std::string sn = StartBigSupernode("sn-a");
  const std::string metrics = MetricsAddress("sn-a");
  auto swarm = StartSwarm({sn}, 300, {"--heartbeat-ms", "200", "--ramp-s", "0.5"});
  ASSERT_TRUE(WaitUntil([&] { return Free(metrics) == 300; }, std::chrono::seconds(120)))
      << Log("swarm") << Log("sn-a");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("swarm", "all 300 daemons registered"); },
                        std::chrono::seconds(60)))
      << Log("swarm");
  swarm.Signal(SIGTERM);
  const auto code = swarm.WaitFor(std::chrono::seconds(120));
  ASSERT_TRUE(code.has_value()) << Log("swarm");
  EXPECT_EQ(*code, 0) << Log("swarm");
  const nlohmann::json summary = Json("swarm.json");
  EXPECT_EQ(summary["daemons"], 300);
  EXPECT_EQ(summary["registered_at_stop"], 300) << summary.dump(2);
  EXPECT_TRUE(summary["all_registered_seconds"].is_number()) << summary.dump(2);
  EXPECT_GE(summary["registrations"].get<int>(), 300);
  // (Answered every 3 s: a run this short may see none; the next test counts them.)
  EXPECT_LE(summary["acked"].get<int>(), summary["heartbeats"].get<int>());
  EXPECT_EQ(summary["lost"], 0) << summary.dump(2);
  EXPECT_TRUE(WaitUntil([&] { return Free(metrics) == 0; })) << Log("sn-a");
}

// A daemon asks to be answered only as often as its silence limit needs (here every 933 ms, its
// heartbeats every 200 ms): far fewer answers than heartbeats, and still none of them taken for
// a silent super-node.
TEST_F(SwarmTest, HeartbeatsAreAnsweredAsOftenAsTheDaemonsAskAndNoneFallsSilent) {
  const std::string sn = StartBigSupernode("sn-a");
  auto swarm = StartSwarm({sn}, 200,
                          {"--heartbeat-ms", "200", "--supernode-timeout-ms", "3000", "--ramp-s",
                           "0.5", "--duration-s", "8"});
  const auto code = swarm.WaitFor(std::chrono::seconds(180));
  ASSERT_TRUE(code.has_value()) << Log("swarm");
  EXPECT_EQ(*code, 0) << Log("swarm");
  const nlohmann::json summary = Json("swarm.json");
  EXPECT_EQ(summary["registered_at_stop"], 200) << summary.dump(2);
  EXPECT_EQ(summary["lost"], 0) << summary.dump(2);
  EXPECT_GT(summary["acked"].get<int>(), 0) << summary.dump(2);
  EXPECT_LT(summary["acked"].get<int>() * 2, summary["heartbeats"].get<int>()) << summary.dump(2);
}

// 300 daemons at once: registrations that arrive together share one synced write (group commit),
// and each is stored before it is acknowledged: a super-node SIGKILLed once all were acknowledged
// knows all 300 when it starts again on its data (the swarm, SIGKILLed too, deregistered none).
TEST_F(SwarmTest, RegistrationsShareSyncedWritesAndAreStoredBeforeTheyAreAcknowledged) {
  const std::string sn = StartBigSupernode("sn-a");
  const std::string metrics = MetricsAddress("sn-a");
  auto swarm = StartSwarm({sn}, 300, {"--heartbeat-ms", "200"});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("swarm", "all 300 daemons registered"); },
                        std::chrono::seconds(120)))
      << Log("swarm");
  const std::string page = HttpGet(metrics, "/metrics").body;
  const double registrations = MetricValue(page, "aiac_daemon_registrations_total");
  const double writes = MetricValue(page, "aiac_registration_writes_total");
  EXPECT_GE(registrations, 300) << page;
  EXPECT_GE(writes, 1) << page;
  EXPECT_LT(writes, registrations) << page;
  swarm.Signal(SIGKILL);
  swarm.WaitFor(std::chrono::seconds(60));
  procs_.at("sn-a").Signal(SIGKILL);
  procs_.at("sn-a").WaitFor(std::chrono::seconds(60));
  StartBigSupernode("sn-a");
  const std::string again = MetricsAddress("sn-a");
  EXPECT_EQ(Free(again), 300) << Log("sn-a");
}

// Their super-node killed, every played daemon registers with the next one of its list.
TEST_F(SwarmTest, PlayedDaemonsMoveToTheNextSupernodeWhenTheirsIsKilled) {
  const std::string a = StartBigSupernode("sn-a");
  const std::string a_metrics = MetricsAddress("sn-a");
  const std::string b = StartBigSupernode("sn-b");
  const std::string b_metrics = MetricsAddress("sn-b");
  auto swarm = StartSwarm({a, b}, 200, {"--heartbeat-ms", "200"});
  // Registered as both sides count it: the super-node, and the swarm (the acknowledgements read).
  ASSERT_TRUE(WaitUntil([&] { return Free(a_metrics) == 200; }, std::chrono::seconds(120)))
      << Log("swarm");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("swarm", "all 200 daemons registered"); },
                        std::chrono::seconds(60)))
      << Log("swarm");
  procs_.at("sn-a").Signal(SIGKILL);
  const std::regex moved("registered 200/200, .*connections lost 200");
  ASSERT_TRUE(
      WaitUntil([&] { return Free(b_metrics) == 200 && std::regex_search(Log("swarm"), moved); },
                std::chrono::seconds(120)))
      << Log("swarm") << Log("sn-b");
  swarm.Signal(SIGINT);
  ASSERT_TRUE(swarm.WaitFor(std::chrono::seconds(120)).has_value()) << Log("swarm");
  const nlohmann::json summary = Json("swarm.json");
  EXPECT_EQ(summary["lost"], 200) << summary.dump(2);
  EXPECT_GE(summary["registrations"].get<int>(), 400) << summary.dump(2);
  EXPECT_EQ(summary["registered_at_stop"], 200) << summary.dump(2);
  // One outage, from the first loss until all were registered with sn-b; at least two dials
  // each (sn-a, then sn-b), and the log line that tells it.
  ASSERT_EQ(summary["reregistered_seconds"].size(), 1u) << summary.dump(2);
  EXPECT_GT(summary["reregistered_seconds"][0].get<double>(), 0) << summary.dump(2);
  EXPECT_GE(summary["dials"].get<int>(), 400) << summary.dump(2);
  EXPECT_TRUE(std::regex_search(
      Log("swarm"), std::regex("all 200 daemons registered again [0-9.]+ s after the first was "
                               "lost \\(200 connections lost\\)")))
      << Log("swarm");
}

// Options missing or wrong: one line, exit 2; a cluster key the super-node does not share: every
// played daemon is refused, one line, exit 1.
TEST_F(SwarmTest, BadInputIsOneLineAndANonZeroExit) {
  const std::string sn = StartSupernode("sn-a");
  const auto run = [&](const std::vector<std::string>& args) {
    auto child = testing::Start("swarm", args, dir_ / "bad.log");
    return child.WaitFor(std::chrono::seconds(60)).value_or(-1);
  };
  const std::string key = AuthorityKeyFile();
  const std::string config = dir_ / "key.toml";
  EXPECT_EQ(run({"--config", config, "--authority-private-key", key, "--supernode", sn}), 2);
  EXPECT_EQ(Log("bad"), "swarm: option 'daemons' is not set: give --daemons K\n");
  EXPECT_EQ(run({"--config", config, "--authority-private-key", key, "--daemons", "3"}), 2);
  EXPECT_NE(Log("bad").find("'supernodes' is empty"), std::string::npos) << Log("bad");
  EXPECT_EQ(run({"--config", config, "--daemons", "3", "--supernode", sn}), 2);
  EXPECT_NE(Log("bad").find("authority_private_key"), std::string::npos) << Log("bad");
  EXPECT_EQ(run({"--config", config, "--authority-private-key", dir_ / "none.key", "--daemons", "3",
                 "--supernode", sn}),
            2);
  EXPECT_NE(Log("bad").find("none.key"), std::string::npos) << Log("bad");
  EXPECT_EQ(run({"--config", config, "--authority-private-key", key, "--daemons", "3",
                 "--supernode", "not-an-endpoint"}),
            2);
  const std::string endpoint = Log("bad");
  EXPECT_EQ(std::count(endpoint.begin(), endpoint.end(), '\n'), 1) << endpoint;
  EXPECT_EQ(run({"--config", dir_ / "wrong.toml", "--authority-private-key", key, "--daemons", "3",
                 "--supernode", sn}),
            1);
  EXPECT_NE(Log("bad").find("every super-node refused this daemon"), std::string::npos)
      << Log("bad");
}

}  // namespace
}  // namespace aiac::testing
