// How long a super-node takes to grant 100 daemons while the others heartbeat (issue 37,
// docs/scale.md): a real aiac-supernode, `swarm` playing K free daemons that heartbeat once a
// second; once all are registered, a spawner session (the code `aiac-spawner run` asks with)
// asks for 100 daemons for a job, releases them and ends the job, R times in a row. Measured:
// each request's time from the ask to the grant read, p50 and p99. K = 1,000 is the baseline,
// measured in the same run; the others are printed as ratios against it (1.0: granting does not
// slow as the platform grows). Never fails on a time.
// Run: build/bin/grant_latency_bench [K ...]   (default: 4000)
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.h"
#include "net/tls.h"
#include "spawner/supernode_session.h"
#include "support/identities.h"
#include "support/processes.h"
#include "support/test_support.h"
#include "swarm_bench.h"

using namespace aiac;
namespace asio = net::asio;

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

// R requests of 100 daemons, each released before the next; the times in ms of the answered ones.
std::vector<double> AskRepeatedly(const Endpoint& supernode,
                                  const aiac::testing::TestAuthority& authority, int& granted) {
  net::NetOptions net = authority.Member(kClusterKey, "bench-spawner", proto::Role::SPAWNER);
  net.tls = *net::TlsContext::Make(net.cluster_key);
  asio::io_context io;
  spawner::SupernodeSession session({supernode}, net, "bench-spawner",
                                    MakeLogger("grant-bench", spdlog::level::warn));
  session.Start(io.get_executor());
  std::vector<double> times;
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        if (Status s = co_await session.WaitConnected(10); !s.ok()) {
          std::fprintf(stderr, "grant_latency_bench: %s\n", s.message().c_str());
          session.Stop();
          co_return;
        }
        asio::steady_timer pause(io);
        for (int r = 0; r < kRequests; ++r) {
          const std::string job = "bench-" + std::to_string(r);
          const auto start = std::chrono::steady_clock::now();
          auto answer = co_await session.Request(job, kGrant, 0, start + std::chrono::seconds(3));
          const double ms = 1e3 * bench::SecondsSince(start);
          if (answer.ok() && answer->daemons.size() == kGrant) {
            times.push_back(ms);
            ++granted;
            std::vector<std::string> ids;
            for (const auto& d : answer->daemons) ids.push_back(d.id);
            session.Release(job, ids);
          } else {
            std::fprintf(stderr, "grant_latency_bench: request %d: %s\n", r,
                         answer.ok() ? answer->error.c_str() : answer.status().message().c_str());
          }
          session.EndJob(job);
          // The release reaches the super-node before the next ask, as a next job's would.
          pause.expires_after(std::chrono::milliseconds(20));
          co_await pause.async_wait(net::use_nothrow);
        }
        co_await session.Finish(std::chrono::seconds(2));
      },
      asio::detached);
  io.run();
  return times;
}

Figures Measure(const std::string& dir, const aiac::testing::TestAuthority& authority,
                int daemons) {
  Figures out;
  const std::string tag = "k" + std::to_string(daemons);
  auto supernode = bench::StartBenchSupernode(dir, "sn1", tag, daemons);
  const std::string addr = bench::SupernodeAddress(dir, "sn1", tag);
  auto endpoint = ParseEndpoint(addr);
  if (!endpoint.ok()) return out;
  const std::string log_file = dir + "/" + tag + "-swarm.log";
  auto swarm = aiac::testing::Start(
      "swarm",
      {"--cluster-key-file", dir + "/cluster.key", "--authority-private-key",
       dir + "/authority.key", "--supernode", addr, "--daemons", std::to_string(daemons),
       "--ramp-s", std::to_string(daemons / 1000.0), "--heartbeat-ms", "1000"},
      log_file);
  if (bench::WaitAllRegistered("grant_latency_bench", log_file, daemons).empty()) return out;
  const std::vector<double> times = AskRepeatedly(*endpoint, authority, out.granted);
  out.p50_ms = Quantile(times, 0.50);
  out.p99_ms = Quantile(times, 0.99);
  swarm.Signal(SIGTERM);
  swarm.WaitFor(std::chrono::seconds(120));
  supernode.Signal(SIGTERM);
  supernode.WaitFor(std::chrono::seconds(60));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const int k = std::atoi(argv[i]);
    if (k < static_cast<int>(kGrant) || k > 100000) {
      std::fprintf(stderr, "usage: grant_latency_bench [K ...] (100 <= K <= 100000)\n");
      return 2;
    }
    sizes.push_back(k);
  }
  if (sizes.empty()) sizes = {4000};
  aiac::testing::TempDir dir;
  const std::string d = dir.path();
  const aiac::testing::TestAuthority authority;
  if (Status s = bench::WriteSwarmKeys(d, kClusterKey, {"sn1"}, authority.key()); !s.ok()) {
    std::fprintf(stderr, "grant_latency_bench: %s\n", s.message().c_str());
    return 1;
  }
  const Figures base = Measure(d, authority, kBaseline);
  std::printf("%8s %10s %10s %10s %12s\n", "daemons", "granted", "p50_ms", "p99_ms", "p99_ratio");
  const auto row = [&](int k, const Figures& f) {
    std::printf("%8d %6d/%-3d %10.2f %10.2f %12.2f\n", k, f.granted, kRequests, f.p50_ms, f.p99_ms,
                f.p99_ms / base.p99_ms);
  };
  row(kBaseline, base);
  for (int k : sizes) row(k, Measure(d, authority, k));
  return 0;
}
