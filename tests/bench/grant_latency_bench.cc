// How long a super-node takes to grant 100 daemons while the others heartbeat (issue 37,
// docs/scale.md): a real aiac-supernode, `swarm` playing K free daemons that heartbeat once a
// second; once all are registered, a spawner session (the code `aiac-spawner run` asks with)
// asks for 100 daemons for a job, releases them and ends the job, R times in a row. Measured:
// each request's time from the ask to the grant read, p50 and p99. K = 1,000 is the baseline,
// measured in the same run; the others are printed as ratios against it (1.0: granting does not
// slow as the platform grows). Past one swarm's descriptor limit, several swarms play the K
// daemons. Requests start 2 s after the last registration. With --own-core the super-node runs
// alone on core 0 and the swarms and this process on the others, as a super-node has its own
// host (sharing two cores with the swarms that play 20,000 daemons, its tail is theirs). Never
// fails on a time.
// Run: build/bin/grant_latency_bench [--own-core] [K ...]   (default: 4000)
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "grant_loop.h"
#include "support/identities.h"
#include "support/processes.h"
#include "support/test_support.h"
#include "swarm_bench.h"

using namespace aiac;
namespace {

constexpr int kBaseline = 1000;
constexpr int kRequests = 200;
constexpr uint32_t kGrant = 100;
const std::string kClusterKey = "grant-latency-bench-key-0123456789";

struct Figures {
  double p50_ms = -1, p99_ms = -1;
  int granted = 0;  // requests answered with all 100
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

Figures Measure(const std::string& dir, const aiac::testing::TestAuthority& authority, int daemons,
                bool own_core) {
  Figures out;
  const std::string tag = "k" + std::to_string(daemons);
  auto supernode = bench::StartBenchSupernode(dir, "sn1", tag, daemons);
  const std::string addr = bench::SupernodeAddress(dir, "sn1", tag);
  auto endpoint = ParseEndpoint(addr);
  if (!endpoint.ok()) return out;
  if (own_core && !bench::PinToCoreZero(supernode.pid())) {
    std::fprintf(stderr, "grant_latency_bench: cannot move the super-node to core 0\n");
    return out;
  }
  auto swarms = bench::StartSwarms(dir, {addr}, daemons, dir + "/" + tag + "-swarm");
  if (bench::WaitAllSwarmsRegistered("grant_latency_bench", swarms) < 0) return out;
  // The steady state, as supernode_load_bench measures it: the first grants right after 19,900
  // registrations took up to 175 ms while the last handshakes and the store's flush settled.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::vector<double> times = bench::AskRepeatedly(
      *endpoint, authority, kClusterKey, {kGrant, kRequests, std::chrono::milliseconds(0)},
      "grant_latency_bench");
  out.granted = static_cast<int>(times.size());
  out.p50_ms = Quantile(times, 0.50);
  out.p99_ms = Quantile(times, 0.99);
  swarms.Stop();
  supernode.Signal(SIGTERM);
  supernode.WaitFor(std::chrono::seconds(60));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool own_core = argc > 1 && std::string(argv[1]) == "--own-core";
  if (own_core) {
    --argc;
    ++argv;
    if (!bench::LeaveCoreZero()) {
      std::fprintf(stderr, "grant_latency_bench: --own-core needs two cores or more\n");
      return 2;
    }
  }
  const auto sizes =
      bench::SwarmSizes(argc, argv, "grant_latency_bench", static_cast<int>(kGrant), {4000});
  if (!sizes) return 2;
  aiac::testing::TempDir dir;
  const std::string d = dir.path();
  const aiac::testing::TestAuthority authority;
  if (Status s = bench::WriteSwarmKeys(d, kClusterKey, {"sn1"}, authority.key()); !s.ok()) {
    std::fprintf(stderr, "grant_latency_bench: %s\n", s.message().c_str());
    return 1;
  }
  const Figures base = Measure(d, authority, kBaseline, own_core);
  std::printf("# the super-node %s\n", own_core ? "alone on core 0, the swarms on the other cores"
                                                : "sharing every core with the swarms");
  std::printf("%8s %10s %10s %10s %12s\n", "daemons", "granted", "p50_ms", "p99_ms", "p99_ratio");
  const auto row = [&](int k, const Figures& f) {
    std::printf("%8d %6d/%-3d %10.2f %10.2f %12.2f\n", k, f.granted, kRequests, f.p50_ms, f.p99_ms,
                f.p99_ms / base.p99_ms);
  };
  row(kBaseline, base);
  for (int k : *sizes) row(k, Measure(d, authority, k, own_core));
  return 0;
}
