// aiac-emulate on the real kernel (docs/emulation.md, "OS-level emulation"): a platform of two
// sites is brought up as network namespaces and CPU cgroups; a ping across the 20 ms link takes
// 40 ms +-20 %, one inside a site far less; a node of half the power gets half the CPU of a busy
// loop, and a node's background load half of a node it competes with; aiac's spawner runs its
// daemons as the platform's nodes (`run --emulation os`), and mpirun its ranks (where Open MPI
// is installed); `down` removes every namespace, cgroup and process, also after the switch was
// killed, and says so again when nothing is left; bad input gets one line and a non-zero exit.
//
// Needs root, `ip netns`, TUN devices and a CPU controller; skipped with the reason otherwise.
// Timing-sensitive (CPU shares, round trips), so ctest runs it alone (RUN_SERIAL).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "support/test_support.h"

namespace aiac::testing {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int code;
  std::string output;
};

// Runs a shell command; its exit code and its stdout and stderr together.
Ran Shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

// Processes whose command line is exactly `words`.
int CountProcesses(const std::vector<std::string>& words) {
  int count = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::vector<std::string> got;
    for (std::string w; std::getline(in, w, '\0');) got.push_back(w);
    if (got == words) ++count;
  }
  return count;
}

class OsEmulationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "aiac-emulate needs root (namespaces, cgroups, TUN)";
    if (!fs::exists("/dev/net/tun")) GTEST_SKIP() << "no /dev/net/tun here";
    const std::string probe = "aiacprobe" + std::to_string(getpid());
    if (Shell("ip netns add " + probe).code != 0)
      GTEST_SKIP() << "`ip netns add` is not allowed here";
    const bool tun = Shell("ip netns exec " + probe + " ip tuntap add dev t0 mode tun").code == 0;
    Shell("ip netns del " + probe);
    if (!tun) GTEST_SKIP() << "TUN devices cannot be made here";
    if (!fs::exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") &&
        Shell("grep -qw cpu /sys/fs/cgroup/cgroup.controllers").code != 0) {
      GTEST_SKIP() << "no CPU controller (cgroup v1 cpu or v2 cpu.max) here";
    }
    name_ = "t" + std::to_string(getpid());
    platform_ = dir_.path() + "/two-sites.toml";
    WriteFile(platform_, "name = \"" + name_ + R"("
[[clusters]]
name = "a"
powers = [1.0, 0.5]
latency_ms = 0.1
bandwidth_mbps = 1000
[[clusters]]
name = "b"
powers = [1.0]
latency_ms = 0.1
bandwidth_mbps = 1000
[[links]]
a = "a"
b = "b"
latency_ms = 20
bandwidth_mbps = 100
)");
  }
  void TearDown() override {
    if (!name_.empty()) Shell(Emulate() + " down " + name_);
  }

  static std::string Emulate() { return BinPath("aiac-emulate"); }
  std::string As(const std::string& node) const {
    return Emulate() + " exec --platform " + name_ + " " + node + " -- ";
  }
  // The average round trip `ping` reports, in ms; -1 when it printed none.
  double PingMs(const std::string& from, const std::string& to) const {
    const Ran ping = Shell(As(from) + "ping -q -c 5 -i 0.2 " + to);
    std::smatch m;
    if (!std::regex_search(ping.output, m, std::regex(R"(= [0-9.]+/([0-9.]+)/)"))) {
      ADD_FAILURE() << "ping printed no round trip:\n" << ping.output;
      return -1;
    }
    return std::stod(m[1]);
  }

  TempDir dir_;
  std::string name_, platform_;
};

TEST_F(OsEmulationTest, LinksShowTheirLatencyAndNodesTheirShareOfTheCpu) {
  // One core shared out (0.4, 0.2 and 0.4 of it): the nodes get their quotas even on a loaded
  // 2-core machine, where a quota is a cap, not a promise.
  const Ran up = Shell(Emulate() + " up --cores 1 " + platform_);
  ASSERT_EQ(up.code, 0) << up.output;
  EXPECT_NE(up.output.find("links: user-space switch"), std::string::npos) << up.output;

  // One way 20 ms: a round trip of 40 ms +-20 %.
  const double across = PingMs("a-1", "10.200.2.1");
  EXPECT_GE(across, 32) << "ping a-1 -> b-1";
  EXPECT_LE(across, 48) << "ping a-1 -> b-1";
  const double inside = PingMs("a-1", "10.200.1.2");
  EXPECT_GE(inside, 0);
  EXPECT_LT(inside, 10) << "ping a-1 -> a-2, one site";

  // Both busy at once.
  Ran fast, slow;
  std::thread t([&] { fast = Shell(As("a-1") + Emulate() + " burn 3"); });
  slow = Shell(As("a-2") + Emulate() + " burn 3");
  t.join();
  std::smatch f, s;
  ASSERT_TRUE(std::regex_search(fast.output, f, std::regex(R"(cores ([0-9.]+))"))) << fast.output;
  ASSERT_TRUE(std::regex_search(slow.output, s, std::regex(R"(cores ([0-9.]+))"))) << slow.output;
  const double ratio = std::stod(s[1]) / std::stod(f[1]);
  EXPECT_GE(ratio, 0.4) << fast.output << slow.output;
  EXPECT_LE(ratio, 0.6) << fast.output << slow.output;

  const Ran status = Shell(Emulate() + " status " + name_);
  EXPECT_EQ(status.code, 0);
  EXPECT_NE(status.output.find("switch pid"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("10.200.1.2"), std::string::npos) << status.output;
}

TEST_F(OsEmulationTest, ABackgroundLoadCompetesForItsNodesQuota) {
  // Two nodes of half a core each (of one core shared out, as above); two competing jobs on
  // every node, all the time: a busy loop gets a third of its node (0.17 of a core), not all of
  // it. (CFS shares a throttled quota unevenly over a few seconds: 0.15 to 0.34 were seen with
  // one competing job, where a half was due; hence the wide bounds.)
  WriteFile(platform_, "name = \"" + name_ + R"("
[[clusters]]
name = "a"
powers = [1.0, 1.0]
latency_ms = 0.1
bandwidth_mbps = 1000
background = {mean_jobs = 2.0, std_jobs = 0.0, mean_size = 1.0}
)");
  const Ran up = Shell(Emulate() + " up --cores 1 " + platform_);
  ASSERT_EQ(up.code, 0) << up.output;
  const Ran burn = Shell(As("a-1") + Emulate() + " burn 4");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(burn.output, m, std::regex(R"(cores ([0-9.]+))"))) << burn.output;
  EXPECT_GE(std::stod(m[1]), 0.08) << burn.output;
  EXPECT_LE(std::stod(m[1]), 0.3) << burn.output;
}

TEST_F(OsEmulationTest, ANodesCpuCanBeCutAndRestoredWhileItRuns) {
  // One core shared out: a-1 has 0.4 of it. Cut to a quarter while a busy loop runs there, the
  // loop's share falls; `status` shows the quota now; 1 gives the node its share back.
  const Ran up = Shell(Emulate() + " up --cores 1 " + platform_);
  ASSERT_EQ(up.code, 0) << up.output;
  const Ran cut = Shell(Emulate() + " cpu --platform " + name_ + " a-1 0.25");
  ASSERT_EQ(cut.code, 0) << cut.output;
  EXPECT_NE(cut.output.find("a-1: 0.100 cores (0.25 x its 0.400)"), std::string::npos)
      << cut.output;
  const Ran status = Shell(Emulate() + " status " + name_);
  EXPECT_NE(status.output.find("0.100   yes       0  (set by cpu; planned 0.400)"),
            std::string::npos)
      << status.output;
  const Ran slowed = Shell(As("a-1") + Emulate() + " burn 3");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(slowed.output, m, std::regex(R"(cores ([0-9.]+))")))
      << slowed.output;
  EXPECT_GE(std::stod(m[1]), 0.06) << slowed.output;
  EXPECT_LE(std::stod(m[1]), 0.14) << slowed.output;

  ASSERT_EQ(Shell(Emulate() + " cpu --platform " + name_ + " a-1 1").code, 0);
  const Ran back = Shell(Emulate() + " status " + name_);
  EXPECT_EQ(back.output.find("set by cpu"), std::string::npos) << back.output;
  const Ran restored = Shell(As("a-1") + Emulate() + " burn 3");
  ASSERT_TRUE(std::regex_search(restored.output, m, std::regex(R"(cores ([0-9.]+))")))
      << restored.output;
  EXPECT_GE(std::stod(m[1]), 0.25) << restored.output;

  const Ran zero = Shell(Emulate() + " cpu --platform " + name_ + " a-1 0");
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.output.find("above 0"), std::string::npos) << zero.output;
  const Ran unknown = Shell(Emulate() + " cpu --platform " + name_ + " c-9 0.5");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.output.find("no node 'c-9'"), std::string::npos) << unknown.output;
}

TEST_F(OsEmulationTest, AiacRunsItsDaemonsAsThePlatformsNodes) {
  const std::string job = dir_.path() + "/cg.toml";
  WriteFile(job,
            "name = \"cg\"\napp = \"cg\"\ntimeout_s = 200\n[params]\nn = 60000\n"
            "bandwidth = 12\ntolerance = 1e-9\noutput = \"cg-solution.mtx\"\n");
  const std::string run = BinPath("aiac-spawner") + " run " + job + " --platform " + platform_ +
                          " --emulation os --local --quiet --json " + dir_.path() + "/run.json";
  const Ran not_up = Shell(run);
  EXPECT_EQ(not_up.code, 2);
  EXPECT_NE(not_up.output.find("platform '" + name_ + "' is not up"), std::string::npos)
      << not_up.output;

  const Ran up = Shell(Emulate() + " up " + platform_);
  ASSERT_EQ(up.code, 0) << up.output;
  std::smatch subnet;
  ASSERT_TRUE(std::regex_search(up.output, subnet, std::regex(R"((10\.2[0-9][0-9]\.)1\.1 )")))
      << up.output;
  const Ran ran = Shell(run);
  ASSERT_EQ(ran.code, 0) << ran.output;
  const std::string summary = ReadFile(dir_.path() + "/run.json");
  EXPECT_NE(summary.find("\"status\": \"converged\""), std::string::npos) << summary;
  // Every task ran at its node's address, inside the platform, never on loopback.
  std::smatch address;
  std::string rest = summary;
  int tasks = 0;
  while (std::regex_search(rest, address, std::regex(R"("address": "([0-9.]+):[0-9]+")"))) {
    EXPECT_EQ(address[1].str().rfind(subnet[1].str(), 0), 0u) << address[1];
    ++tasks;
    rest = address.suffix();
  }
  EXPECT_EQ(tasks, 3) << summary;
}

TEST_F(OsEmulationTest, MpiRanksRunAsThePlatformsNodes) {
  if (Shell("command -v mpirun").code != 0)
    GTEST_SKIP() << "no mpirun here (conf/bootstrap.sh --with-petsc installs Open MPI)";
  ASSERT_EQ(Shell(Emulate() + " up " + platform_).code, 0);
  const Ran hostfile = Shell(Emulate() + " hostfile " + name_ + " > " + dir_.path() + "/hosts");
  ASSERT_EQ(hostfile.code, 0) << hostfile.output;
  const std::string subnet = ReadFile(dir_.path() + "/hosts").substr(0, 7) + "0.0/16";
  // Each rank prints the address of the device it sees: its node's.
  const Ran mpi = Shell("timeout 120 mpirun --allow-run-as-root -np 3 --hostfile " + dir_.path() +
                        "/hosts --mca plm_rsh_agent '" + Emulate() +
                        " rsh' --mca oob_tcp_if_include " + subnet + " --mca btl_tcp_if_include " +
                        subnet + " sh -c 'ip -4 -o addr show dev aiac0'");
  ASSERT_EQ(mpi.code, 0) << mpi.output;
  const std::string prefix = subnet.substr(0, 7);
  for (const std::string node : {"1.1/16", "1.2/16", "2.1/16"})
    EXPECT_NE(mpi.output.find("inet " + prefix + node), std::string::npos) << mpi.output;
}

TEST_F(OsEmulationTest, DownRemovesEverythingEvenAfterTheSwitchWasKilled) {
  ASSERT_EQ(Shell(Emulate() + " up " + platform_).code, 0);
  const std::string marker = std::to_string(600 + getpid() % 1000);
  ASSERT_EQ(Shell(As("b-1") + "sleep " + marker + " >/dev/null 2>&1 &").code, 0);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return CountProcesses({"sleep", marker}) == 1;
      },
      std::chrono::seconds(30)));
  // The switch dies (as if it crashed); down must still clean everything.
  std::smatch pid;
  const Ran status = Shell(Emulate() + " status " + name_);
  ASSERT_TRUE(std::regex_search(status.output, pid, std::regex(R"(switch pid ([0-9]+))")))
      << status.output;
  kill(std::stoi(pid[1]), SIGKILL);

  const Ran down = Shell(Emulate() + " down " + name_);
  EXPECT_EQ(down.code, 0) << down.output;
  EXPECT_NE(down.output.find("is down"), std::string::npos) << down.output;
  EXPECT_EQ(CountProcesses({"sleep", marker}), 0);
  EXPECT_EQ(Shell("ip netns list | grep -c 'aiacemu-" + name_ + "\\.'").output, "0\n");
  EXPECT_FALSE(fs::exists("/sys/fs/cgroup/cpu/aiac-emulate/" + name_));
  EXPECT_FALSE(fs::exists("/sys/fs/cgroup/aiac-emulate/" + name_));
  EXPECT_FALSE(fs::exists("/run/aiac-emulate/" + name_));

  const Ran again = Shell(Emulate() + " down " + platform_);
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("was not up"), std::string::npos) << again.output;
}

TEST_F(OsEmulationTest, BadInputGetsOneLineAndANonZeroExit) {
  const Ran missing = Shell(Emulate() + " up " + dir_.path() + "/none.toml");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.output.find("cannot read"), std::string::npos) << missing.output;

  WriteFile(dir_.path() + "/bad.toml",
            "name = \"bad.name\"\n[[clusters]]\nname = \"a\"\n"
            "powers = [1.0]\nlatency_ms = 1\nbandwidth_mbps = 10\n");
  const Ran bad = Shell(Emulate() + " up " + dir_.path() + "/bad.toml");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("platform name 'bad.name'"), std::string::npos) << bad.output;

  ASSERT_EQ(Shell(Emulate() + " up " + platform_).code, 0);
  const Ran twice = Shell(Emulate() + " up " + platform_);
  EXPECT_EQ(twice.code, 1);
  EXPECT_NE(twice.output.find("is up already"), std::string::npos) << twice.output;

  const Ran unknown = Shell(As("c-9") + "true");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.output.find("no node 'c-9' (nodes: a-1, a-2, b-1)"), std::string::npos)
      << unknown.output;
  const Ran no_command = Shell(Emulate() + " exec --platform " + name_ + " a-1");
  EXPECT_EQ(no_command.code, 2) << no_command.output;
  const Ran not_up = Shell(Emulate() + " exec --platform " + name_ + "x a-1 -- true");
  EXPECT_EQ(not_up.code, 1);
  EXPECT_NE(not_up.output.find("is not up"), std::string::npos) << not_up.output;
}

}  // namespace
}  // namespace aiac::testing
