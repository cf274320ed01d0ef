// A registration storm (issue 37, docs/scale.md): two real super-nodes, `swarm` playing K
// daemons that list both; once all are registered with the first, it is SIGKILLed, and every
// daemon must register with the second. Measured: from the first loss until all are registered
// again (the swarm's own count, looked at every 100 ms), and how many dials it took (a dial the
// second super-node closed, its handshake caps full, is dialled again). Two ways in the same
// run: the daemons dialing the next super-node at once (`--reconnect-spread-ms 0`, the
// thundering herd and the baseline) and with the daemon's default jittered backoff (1 s spread,
// doubling at each setback); the second is printed as a ratio of the first. Never fails on a
// time.
// Run: build/bin/registration_storm_bench [K]   (default: 2000)
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "support/processes.h"
#include "support/test_support.h"
#include "swarm_bench.h"

using namespace aiac;

namespace {

struct Storm {
  double reregister_s = -1;  // the first loss to all registered again
  double dials_per_daemon = -1;
  uint64_t lost = 0;
};

Storm Measure(const std::string& dir, int daemons, int spread_ms) {
  Storm out;
  const std::string tag = "s" + std::to_string(spread_ms) + "-";
  auto first = bench::StartBenchSupernode(dir, "sn1", tag, daemons);
  auto second = bench::StartBenchSupernode(dir, "sn2", tag, daemons);
  const std::string a = bench::SupernodeAddress(dir, "sn1", tag);
  const std::string b = bench::SupernodeAddress(dir, "sn2", tag);
  if (a.empty() || b.empty()) return out;
  const std::string json = dir + "/" + tag + "swarm.json", log_file = dir + "/" + tag + "swarm.log";
  auto swarm =
      bench::StartSwarm(dir, {a, b}, daemons, log_file,
                        {"--reconnect-spread-ms", std::to_string(spread_ms), "--json", json});
  if (bench::WaitAllRegistered("registration_storm_bench", log_file, daemons).empty()) return out;
  first.Signal(SIGKILL);
  first.WaitFor(std::chrono::seconds(10));
  const std::regex again("registered again ([0-9.]+) s after");
  std::smatch m;
  std::string log;
  if (!aiac::testing::WaitUntil(
          [&] {
            log = aiac::testing::ReadFile(log_file);
            return std::regex_search(log, m, again);
          },
          std::chrono::seconds(120 + daemons / 20))) {
    std::fprintf(stderr, "registration_storm_bench: not all registered again:\n%s\n", log.c_str());
    return out;
  }
  out.reregister_s = std::stod(m[1]);
  swarm.Signal(SIGTERM);
  swarm.WaitFor(std::chrono::seconds(120));
  second.Signal(SIGTERM);
  second.WaitFor(std::chrono::seconds(60));
  auto summary = nlohmann::json::parse(aiac::testing::ReadFile(json), nullptr, false);
  if (summary.is_object()) {
    out.dials_per_daemon = summary.value("dials", 0.0) / daemons;
    out.lost = summary.value("lost", uint64_t{0});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int daemons = 2000;
  if (argc > 1) daemons = std::atoi(argv[1]);
  if (argc > 2 || daemons < 1 || daemons > 100000) {
    std::fprintf(stderr, "usage: registration_storm_bench [K] (1 <= K <= 100000)\n");
    return 2;
  }
  aiac::testing::TempDir dir;
  const std::string d = dir.path();
  if (Status s =
          bench::WriteSwarmKeys(d, "registration-storm-bench-key-0123456789", {"sn1", "sn2"});
      !s.ok()) {
    std::fprintf(stderr, "registration_storm_bench: %s\n", s.message().c_str());
    return 1;
  }
  const Storm herd = Measure(d, daemons, 0);
  const Storm jittered = Measure(d, daemons, 1000);
  std::printf("%8s %10s %14s %16s %8s\n", "daemons", "spread_ms", "reregister_s",
              "dials_per_daemon", "lost");
  std::printf("%8d %10d %14.2f %16.2f %8llu\n", daemons, 0, herd.reregister_s,
              herd.dials_per_daemon, static_cast<unsigned long long>(herd.lost));
  std::printf("%8d %10d %14.2f %16.2f %8llu\n", daemons, 1000, jittered.reregister_s,
              jittered.dials_per_daemon, static_cast<unsigned long long>(jittered.lost));
  std::printf("jittered / at once: time %.2f, dials %.2f\n",
              jittered.reregister_s / herd.reregister_s,
              jittered.dials_per_daemon / herd.dials_per_daemon);
  return 0;
}
