// A real multi-host run on one machine (docs/operations.md): five hosts are network namespaces,
// each with its own address on one Ethernet segment (a veth pair per host into a bridge that
// lives in a sixth namespace), so nothing can reach anything through 127.0.0.1. A super-node,
// three daemons and the spawner each run in a host of their own; the CG job runs on two of the
// daemons, one of them is SIGKILLed mid-run, and the spare takes its task over. The run must
// converge to the right answer: proof that nothing assumes loopback.
//
// Needs root and `ip netns` (iproute2); skipped with the reason otherwise. Everything is made
// inside namespaces named for this process, and deleted (processes first) even when the test
// fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <regex>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

constexpr const char* kSubnet = "10.77.0.";

// Runs a shell command quietly; its exit status.
int Sh(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

class MultiHostTest : public ClusterFixture {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "network namespaces need root (run as root to test a multi-host run)";
    if (Sh("ip netns add " + Ns("sw")) != 0) {
      GTEST_SKIP()
          << "`ip netns add` is not allowed here (no iproute2, or no namespaces in this sandbox)";
    }
    made_.push_back(Ns("sw"));
    // Namespaces allowed but no bridge or veth (a kernel without them): the network cannot be
    // built here, which is not a failure of aiac.
    for (const std::string& command :
         {In("sw") + "ip link add br0 type bridge", In("sw") + "ip link set br0 up"}) {
      if (Sh(command) != 0)
        GTEST_SKIP() << "cannot build the test network here: `" << command << "` failed";
    }
    for (int h = 1; h <= 5; ++h) {
      if (std::string failed = AddHost(h); !failed.empty()) {
        GTEST_SKIP() << "cannot build the test network here: `" << failed << "` failed";
      }
    }
  }

  ~MultiHostTest() override {
    procs_.clear();  // the processes first: a namespace goes when its last process does
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) Sh("ip netns del " + *it);
  }

  std::string Ns(const std::string& name) const {
    return "aiac" + std::to_string(getpid()) + "-" + name;
  }
  std::string In(const std::string& name) const { return "ip netns exec " + Ns(name) + " "; }
  static std::string Address(int h) { return kSubnet + std::to_string(h); }

  // Host h: namespace "hH" with eth0 = 10.77.0.H/24, its peer in the bridge. The command that
  // failed, or "".
  std::string AddHost(int h) {
    const std::string host = "h" + std::to_string(h), port = "p" + std::to_string(h);
    if (Sh("ip netns add " + Ns(host)) != 0) return "ip netns add " + Ns(host);
    made_.push_back(Ns(host));
    for (const std::string& command : {"ip link add eth0 netns " + Ns(host) +
                                           " type veth peer name " + port + " netns " + Ns("sw"),
                                       In("sw") + "ip link set " + port + " master br0",
                                       In("sw") + "ip link set " + port + " up",
                                       In(host) + "ip addr add " + Address(h) + "/24 dev eth0",
                                       In(host) + "ip link set eth0 up"}) {
      if (Sh(command) != 0) return command;
    }
    return "";
  }

  // Starts `binary` inside host h (ip netns exec replaces itself with the binary).
  void StartIn(int h, const std::string& name, const std::string& binary,
               const std::vector<std::string>& args) {
    std::vector<std::string> argv{"netns", "exec", Ns("h" + std::to_string(h)), BinPath(binary)};
    const std::vector<std::string> signed_args = Signed(binary, args);
    argv.insert(argv.end(), signed_args.begin(), signed_args.end());
    auto child = spawner::ChildProcess::Spawn(
        [&] {
          std::vector<std::string> full{"/usr/sbin/ip"};
          full.insert(full.end(), argv.begin(), argv.end());
          return full;
        }(),
        dir_ / (name + ".log"));
    ASSERT_TRUE(child.ok()) << child.status().message();
    procs_.insert_or_assign(name, std::move(*child));
  }

  std::vector<std::string> made_;
};

TEST_F(MultiHostTest, ACgRunAcrossFiveHostsSurvivesADaemonKill) {
  const std::string sn = Address(1) + ":7400";
  StartIn(
      1, "sn1", "aiac-supernode",
      {"--config", dir_ / "key.toml", "--listen", sn, "--id", "sn1", "--data", dir_ / "sn1.db"});
  for (int d = 1; d <= 3; ++d) {
    const std::string id = "d" + std::to_string(d);
    StartIn(d + 1, id, "aiac-daemon",
            {"--config", dir_ / "key.toml", "--listen", Address(d + 1) + ":0", "--id", id, "--data",
             dir_ / id, "--power", "1", "--supernode", sn});
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        return LogHas("d1", "registered") && LogHas("d2", "registered") &&
               LogHas("d3", "registered");
      },
      std::chrono::seconds(30)))
      << Log("d1") << Log("sn1");
  // Slow enough (an inner CG per iteration) to be killed half-way.
  WriteJob("cg.toml",
           "name = \"netns\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 300\ncheckpoint_seconds = 0.2\n"
           "[params]\ninner = \"cg\"\nn = 300000\nbandwidth = 12\ntolerance = 1e-10\n");
  StartIn(5, "spawner", "aiac-spawner",
          {"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "cg.toml", "--json",
           dir_ / "cg.json"});
  // Once the tasks iterate and a checkpoint is kept: SIGKILL the daemon of task 0.
  std::string victim;
  const std::regex task0("task 0 on daemon (d[0-9])"), kept("iterations .*checkpoints [1-9]");
  ASSERT_TRUE(WaitUntil(
      [&] {
        const std::string log = Log("spawner");
        std::smatch m;
        if (!std::regex_search(log, m, task0) || !std::regex_search(log, kept)) return false;
        victim = m[1];
        return true;
      },
      std::chrono::seconds(120)))
      << Log("spawner");
  procs_.at(victim).Signal(SIGKILL);
  auto code = procs_.at("spawner").WaitFor(std::chrono::seconds(280));
  ASSERT_EQ(code.value_or(-1), 0) << Log("spawner");
  auto j = Json("cg.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  EXPECT_LT(j["result"]["error_inf"].get<double>(), 1e-8);
  EXPECT_GE(j["failures"].get<int>(), 1) << j.dump();
  ASSERT_GE(j["replacements"].size(), 1u) << j.dump();
  EXPECT_EQ(j["replacements"][0]["failed"], victim);
  // Every task ran at a host's own address, never on loopback.
  for (const auto& t : j["per_task"]) {
    EXPECT_EQ(t["address"].get<std::string>().rfind(kSubnet, 0), 0u) << t.dump();
  }
}

}  // namespace
}  // namespace aiac::testing
