// Super-node persistence, daemon fail-over, and peers sharing their daemons.
#include <csignal>

#include "integration/cluster_fixture.h"
#include "support/http_client.h"

namespace aiac::testing {
namespace {

using SupernodeTest = ClusterFixture;

TEST_F(SupernodeTest, RestartKeepsTheRegistry) {
  const std::string sn = StartSupernode("sn1");
  StartDaemon("d1", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
  // Killed (a stopped daemon deregisters): only the stored record can bring it back.
  procs_.at("d1").Signal(SIGKILL);
  procs_.at("d1").WaitFor(std::chrono::seconds(30));
  procs_.erase("d1");
  procs_.erase("sn1");
  StartSupernode("sn1", {}, sn);
  EXPECT_TRUE(LogHas("sn1", "(1 daemons in registry")) << Log("sn1");
}

// A daemon told to stop (SIGTERM, as systemd does) deregisters on its way out: the super-node
// forgets it at once, not after its failure timeout, and grants it to no one.
TEST_F(SupernodeTest, AStoppingDaemonDeregistersAndIsNotGrantedAfter) {
  const std::string sn = StartSupernode("sn1", {"--failure-timeout-ms", "600000"});
  StartDaemon("d1", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
  procs_.at("d1").Signal(SIGTERM);
  EXPECT_EQ(procs_.at("d1").WaitFor(std::chrono::seconds(60)), std::optional<int>(0)) << Log("d1");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 deregistered: it is stopping"); }))
      << Log("sn1");
  EXPECT_FALSE(LogHas("sn1", "daemon d1 expired"));
  // Nothing left to grant: a job finds no daemon (it fails after its short wait).
  EXPECT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 5),
                        "--wait-daemons-ms", "1000"},
                       "spawner"),
            1)
      << Log("spawner");
}

// A daemon listening on every interface registers the address it is told to advertise, and
// warns when it has none to give.
TEST_F(SupernodeTest, ADaemonOnAWildcardAddressAdvertisesARoutableOne) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) {
    StartDaemon(d, {sn}, "key.toml", "1", {"--listen", "0.0.0.0:0", "--advertise", "127.0.0.1"});
  }
  StartDaemon("d3", {sn}, "key.toml", "1", {"--listen", "0.0.0.0:0"});
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("sn1", "daemon d1 registered at 127.0.0.1:") &&
           LogHas("sn1", "daemon d2 registered at 127.0.0.1:") &&
           LogHas("sn1", "daemon d3 registered at ");
  })) << Log("sn1");
  EXPECT_TRUE(LogHas("d3", "which no other host can connect to")) << Log("d3");
  EXPECT_FALSE(LogHas("d1", "which no other host can connect to")) << Log("d1");
  // (Waited for its registration, not for d3 listening: on a loaded machine the registration
  // may come a moment after.)
  EXPECT_TRUE(LogHas("sn1", "daemon d3 registered at 0.0.0.0:")) << Log("sn1");
}

// A daemon given no power measures it once and keeps it in DATA/power: restarted, it
// registers with the kept value at once; --measure-power measures again.
TEST_F(SupernodeTest, ADaemonMeasuresItsPowerOnceAndKeepsIt) {
  const std::string sn = StartSupernode("sn1");
  auto start = [&](const std::string& log, std::vector<std::string> extra) {
    std::vector<std::string> args{"--config", dir_ / "key.toml", "--id",        "d1",
                                  "--data",   dir_ / "d1",       "--supernode", sn};
    args.insert(args.end(), extra.begin(), extra.end());
    procs_.insert_or_assign("d1", Start("aiac-daemon", args, dir_ / (log + ".log")));
    return WaitUntil(
        [&] { return LogHas("sn1", "daemon d1 registered") && LogHas(log, "listening"); });
  };
  ASSERT_TRUE(start("first", {})) << Log("first");
  procs_.erase("d1");
  const std::string kept = ReadFile(dir_ / "d1/power");
  ASSERT_EQ(kept.rfind("power ", 0), 0u) << kept;
  // Another value in the file shows it is read, not measured again.
  WriteFile(dir_ / "d1/power", "power 3.25" + kept.substr(kept.find('\n')));
  ASSERT_TRUE(start("second", {})) << Log("second");
  EXPECT_TRUE(LogHas("second", "power 3.25,")) << Log("second");
  procs_.erase("d1");
  ASSERT_TRUE(start("third", {"--measure-power"})) << Log("third");
  EXPECT_FALSE(LogHas("third", "power 3.25,")) << Log("third");
  EXPECT_EQ(ReadFile(dir_ / "d1/power").find("power 3.25"), std::string::npos);
}

// A request that cannot be met at once is held by the super-node and answered as soon as the
// daemons register, instead of being refused and asked again every 200 ms.
TEST_F(SupernodeTest, ARequestIsHeldUntilTheDaemonsRegister) {
  const std::string sn = StartSupernode("sn1", {"--log-level", "debug"});
  WriteJob("cg.toml",
           "name = \"held\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\nn = 2000\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "cg.toml"},
                       dir_ / "spawner.log");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "holding the request of job held-"); }))
      << Log("sn1");
  StartDaemon("d1", {sn});
  StartDaemon("d2", {sn});
  auto code = spawner.WaitFor(std::chrono::seconds(120));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << Log("spawner");
  EXPECT_TRUE(LogHas("sn1", "granted 2 daemons to job held-")) << Log("sn1");
  // Every unmet answer came after a hold, none at once.
  const std::string log = Log("sn1");
  for (size_t at = log.find("not met"); at != std::string::npos; at = log.find("not met", at + 1)) {
    EXPECT_EQ(log.compare(at, 13, "not met after"), 0) << log;
  }
}

TEST_F(SupernodeTest, DaemonMovesToTheNextSupernodeWhenItsOwnDies) {
  const std::string a = StartSupernode("sna");
  const std::string b = StartSupernode("snb");
  StartDaemon("d1", {a, b});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sna", "daemon d1 registered"); })) << Log("sna");
  procs_.erase("sna");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("snb", "daemon d1 registered"); })) << Log("d1");
  EXPECT_TRUE(LogHas("d1", "lost super-node")) << Log("d1");
}

// A super-node that stops answering without closing its connections (its host hung, or cut off
// by the network: the daemon's heartbeats then wait in TCP's buffers and nothing fails for many
// minutes; SIGSTOP plays it here) is left after supernode_timeout_ms of silence for the next one.
TEST_F(SupernodeTest, DaemonMovesToTheNextSupernodeWhenItsOwnFallsSilent) {
  const std::string a = StartSupernode("sna");
  const std::string b = StartSupernode("snb");
  StartDaemon("d1", {a, b}, "key.toml", "1",
              {"--heartbeat-ms", "200", "--supernode-timeout-ms", "1500"});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sna", "daemon d1 registered"); })) << Log("sna");
  procs_.at("sna").Signal(SIGSTOP);
  EXPECT_TRUE(
      WaitUntil([&] { return LogHas("snb", "daemon d1 registered"); }, std::chrono::seconds(60)))
      << Log("d1");
  EXPECT_TRUE(LogHas("d1", "no answer for 1500 ms")) << Log("d1");
  procs_.at("sna").Signal(SIGCONT);
  // The next loss is told for what it is: the silenced connection's mark was kept, and the next
  // connection, often made at the freed one's address, was said to be silent when it closed.
  procs_.erase("snb");
  const std::string lost = "lost super-node " + b + ": ";
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", lost); }, std::chrono::seconds(60))) << Log("d1");
  const std::string log = Log("d1");
  const size_t at = log.find(lost);
  EXPECT_EQ(log.substr(at, log.find('\n', at) - at).find("no answer"), std::string::npos) << log;
}

// A super-node stopped while its daemons run a job (a hung host, SIGSTOP here) and let run again:
// the daemons left it after their silence limit and register again as busy, or were expired by
// it first. Either way the job's end frees them at once (before, their record named no job for
// the release to match, and they waited out their grant lease ungrantable: 30 s by default,
// 600 s here).
TEST_F(SupernodeTest, DaemonsThatRegisterAgainWhileTheyRunAreFreedByTheirJobsEnd) {
  const std::string sn =
      StartSupernode("sn1", {"--failure-timeout-ms", "1000", "--grant-lease-ms", "600000"});
  for (auto d : {"d1", "d2"}) {
    StartDaemon(d, {sn}, "key.toml", "1",
                {"--heartbeat-ms", "200", "--supernode-timeout-ms", "1500"});
  }
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("sn1", "daemon d1 registered") && LogHas("sn1", "daemon d2 registered");
  })) << Log("sn1");
  WriteJob("cg.toml",
           "name = \"held\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 300\n[params]\nn = 400000\n"
           "tolerance = 1e-12\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "cg.toml"},
                       dir_ / "spawner.log");
  // Task 0's app stopped, the job cannot end until it goes on.
  ASSERT_TRUE(
      WaitUntil([&] { return LogHas("d1", "running task") && LogHas("d2", "running task"); },
                std::chrono::seconds(120)))
      << Log("spawner");
  const std::string held = LogHas("d1", "running task 0 of") ? "d1" : "d2";
  const auto app = ProcessesMatching("aiac-app-child",
                                     "--parent " + std::to_string(procs_.at(held).pid()) + " ");
  ASSERT_EQ(app.size(), 1u) << Log(held);
  ::kill(app[0], SIGSTOP);
  procs_.at("sn1").Signal(SIGSTOP);
  const bool left = WaitUntil(
      [&] {
        return LogHas("d1", "no answer for 1500 ms") && LogHas("d2", "no answer for 1500 ms");
      },
      std::chrono::seconds(60));
  procs_.at("sn1").Signal(SIGCONT);
  auto again = [&](const std::string& d) {
    const std::string log = Log("sn1");
    const std::string line = "daemon " + d + " ";
    size_t count = 0;
    for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) {
      if (log.compare(at + line.size(), 10, "registered") == 0 ||
          log.compare(at + line.size(), 13, "re-registered") == 0) {
        ++count;
      }
    }
    return count >= 2;
  };
  const bool registered =
      left && WaitUntil([&] { return again("d1") && again("d2"); }, std::chrono::seconds(60));
  ::kill(app[0], SIGCONT);
  ASSERT_TRUE(left) << Log("d1") << Log("d2");
  ASSERT_TRUE(registered) << Log("sn1");
  auto code = spawner.WaitFor(std::chrono::seconds(300));
  ASSERT_TRUE(code.has_value());
  ASSERT_EQ(*code, 0) << Log("spawner");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "released 2 daemons of job held-"); }))
      << Log("sn1");
  EXPECT_FALSE(LogHas("sn1", "reclaimed")) << Log("sn1");
}

// A super-node answers a daemon's heartbeats only as often as the daemon asks (a third of what
// its silence limit leaves: here every 200 s), but a daemon it forgot (expired while the
// connection stayed open: the daemon did not run) at once, so the daemon registers again
// without waiting for its next answer.
TEST_F(SupernodeTest, ADaemonForgottenWhileItsLinkStaysOpenIsToldAtOnceAndRegistersAgain) {
  const std::string sn = StartSupernode("sn1", {"--failure-timeout-ms", "1500"});
  StartDaemon("d1", {sn}, "key.toml", "1",
              {"--heartbeat-ms", "200", "--supernode-timeout-ms", "600000"});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
  procs_.at("d1").Signal(SIGSTOP);
  const bool expired = WaitUntil([&] { return LogHas("sn1", "daemon d1 expired"); });
  procs_.at("d1").Signal(SIGCONT);
  ASSERT_TRUE(expired) << Log("sn1");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("d1", "forgot this daemon: registering again"); },
                        std::chrono::seconds(60)))
      << Log("d1");
  EXPECT_TRUE(WaitUntil([&] {
    const std::string log = Log("sn1");
    const std::string line = "daemon d1 registered";
    return log.find(line) != log.rfind(line);
  })) << Log("sn1");
}

// A super-node that is stopped before anyone links to it (SIGSTOP: its host accepts the
// connection, it never answers) holds each daemon and spawner one handshake timeout, then they
// go to the next one: each dialed it once, where they tried it three times over 15 s before.
TEST_F(SupernodeTest, DaemonsAndSpawnersLeaveAStoppedSupernodeAfterOneHandshake) {
  const std::string a = StartSupernode("sna", {"--metrics", "127.0.0.1:0"});
  const std::string metrics = MetricsAddress("sna");
  const std::string b = StartSupernode("snb");
  procs_.at("sna").Signal(SIGSTOP);
  for (auto d : {"d1", "d2"}) StartDaemon(d, {a, b});
  const bool registered = WaitUntil(
      [&] {
        return LogHas("snb", "daemon d1 registered") && LogHas("snb", "daemon d2 registered");
      },
      std::chrono::seconds(60));
  const int code = registered
                       ? RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", a,
                                     "--supernode", b, RingJob(2, 20), "--json", dir_ / "s.json"})
                       : -1;
  procs_.at("sna").Signal(SIGCONT);
  ASSERT_TRUE(registered) << Log("d1") << Log("d2");
  ASSERT_EQ(code, 0) << Log("spawner");
  EXPECT_EQ(Json("s.json")["status"], "converged");
  EXPECT_TRUE(LogHas("d1", "unreachable: handshake with")) << Log("d1");
  // Running again, the super-node finds in its backlog the three connections closed during
  // their handshakes: one from each daemon and one from the spawner (nine before).
  const std::string failed_handshakes = "aiac_handshake_failures_total{reason=\"tls\"}";
  auto failed = [&] { return MetricValue(HttpGet(metrics, "/metrics").body, failed_handshakes); };
  ASSERT_TRUE(WaitUntil([&] { return failed() >= 3; }, std::chrono::seconds(60))) << Log("sna");
  EXPECT_EQ(failed(), 3) << Log("sna");
}

TEST_F(SupernodeTest, PeersLendTheirDaemonsToASpawner) {
  const std::string a = StartSupernode("sna");
  const std::string b = StartSupernode("snb", {"--peer", a});
  for (auto d : {"a1", "a2"}) StartDaemon(d, {a});
  for (auto d : {"b1", "b2"}) StartDaemon(d, {b});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sna", "linked with super-node"); })) << Log("sna");
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("sna", "daemon a2 registered") && LogHas("snb", "daemon b2 registered");
  }));
  // b knows only two daemons of its own: the other two come from a's digest, granted by a.
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", b, RingJob(4, 40),
                        "--json", dir_ / "p.json"}),
            0)
      << Log("spawner") << Log("snb") << Log("sna");
  auto j = Json("p.json");
  std::set<std::string> daemons;
  for (const auto& t : j["per_task"]) daemons.insert(t["daemon"].get<std::string>());
  EXPECT_EQ(daemons, (std::set<std::string>{"a1", "a2", "b1", "b2"}));
  EXPECT_TRUE(LogHas("sna", "granted 2 daemons to job")) << Log("sna");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sna", "released 2 daemons"); })) << Log("sna");
}

// The spawner tries its super-nodes in order: a dead first one costs a retry, not the run.
TEST_F(SupernodeTest, SpawnerSkipsASupernodeThatIsDown) {
  const std::string gone = StartSupernode("gone");
  procs_.erase("gone");  // its port is closed now
  const std::string b = StartSupernode("snb");
  for (auto d : {"b1", "b2"}) StartDaemon(d, {b});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("snb", "daemon b2 registered"); })) << Log("snb");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", gone, "--supernode", b,
                        RingJob(2, 20), "--json", dir_ / "s.json"}),
            0)
      << Log("spawner");
  EXPECT_EQ(Json("s.json")["status"], "converged");
  EXPECT_TRUE(LogHas("snb", "granted 2 daemons to job")) << Log("snb");
}

}  // namespace
}  // namespace aiac::testing
