// How long `aiac-spawner status` takes against a super-node holding many daemons, against the
// same question to an empty one, measured in the same run: a super-node built in this process
// from the service class the binary uses (registry in memory, every daemon registered as a
// Register would), asked over TLS on loopback by the code `status` runs (spawner/supernode_query),
// reading the whole answer (federation_status). Repeated; medians and their ratio. Never fails
// on a time.
// Run: build/bin/status_bench [daemons repeats]
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench_support.h"
#include "net/tls.h"
#include "spawner/federation_status.h"
#include "spawner/supernode_query.h"
#include "supernode/supernode_service.h"
#include "support/identities.h"

using namespace aiac;
namespace asio = net::asio;

namespace {

// Seconds per `status`, median of `repeats`, against a super-node holding `daemons`; -1 on error.
double TimeStatus(size_t daemons, int repeats, const testing::TestAuthority& authority) {
  net::NetOptions net;
  net.cluster_key = "status-bench-key-0123456789";
  net.tls = *net::TlsContext::Make(net.cluster_key);
  Logger log = MakeLogger("status-bench", spdlog::level::warn);
  supernode::SupernodeOptions options;
  options.id = "sn-bench";
  options.net = net;
  options.net.identity = authority.Identity(options.id, proto::Role::SUPERNODE);
  supernode::Registry registry(options.id, nullptr);
  const auto now = supernode::Registry::Clock::now();
  for (size_t i = 0; i < daemons; ++i) {
    supernode::DaemonRecord r;
    r.id = "d" + std::to_string(i);
    r.address = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ":7500";
    r.cluster = "c" + std::to_string(i % 8);
    r.power = 1 + static_cast<double>(i % 13);
    r.cores = 8;
    r.version = "0.1.0";
    if (!registry.Register(r, now).ok()) return -1;
  }
  asio::io_context io;
  supernode::SupernodeService service(io, options, registry, log);
  auto bound = service.Start(Endpoint{"127.0.0.1", 0});
  if (!bound.ok()) return -1;
  std::thread serving([&] { io.run(); });
  net::NetOptions asker = net;
  asker.identity = authority.Identity("operator", proto::Role::SPAWNER);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto answer = spawner::AskSupernode(
        {*bound}, asker, "operator",
        [](proto::Envelope::Builder e) { e.initStatusQuery().setRequestId(1); },
        [](proto::Envelope::Reader e) { return e.isStatusReport(); }, std::chrono::seconds(30));
    if (!answer.ok()) {
      std::fprintf(stderr, "status_bench: %s\n", answer.status().message().c_str());
      times.push_back(-1);
      continue;
    }
    const auto status = spawner::ReadStatusReport(answer->message->root().getStatusReport());
    const double seconds = bench::SecondsSince(start);
    if (r == 0) {
      std::printf("answer for %zu daemons: %zu bytes\n", daemons, answer->message->size_bytes());
    }
    times.push_back(status.daemons.size() == daemons ? seconds : -1);
  }
  asio::co_spawn(io, service.Stop(), asio::detached);
  serving.join();
  return bench::Median(times);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t daemons = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 9;
  const testing::TestAuthority authority;
  const double empty = TimeStatus(0, repeats, authority);
  const double full = TimeStatus(daemons, repeats, authority);
  std::printf("status against an empty registry: %.4f s (median of %d)\n", empty, repeats);
  std::printf("status against %zu daemons: %.4f s (median of %d)\n", daemons, full, repeats);
  if (empty > 0 && full > 0)
    std::printf("ratio %zu daemons / empty: %.2fx\n", daemons, full / empty);
  return empty > 0 && full > 0 ? 0 : 1;
}
