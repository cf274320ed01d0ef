// What the registry exchange between peer super-nodes costs (issue 37, docs/scale.md "The
// registry exchange"): a federation of three real super-nodes sn-a, sn-b, sn-c, each peered
// with the others, `swarm` playing K daemons registered with sn-a, heartbeating once a second;
// a fourth, sn-old, peered with sn-a but held at protocol 6 (`--max-protocol-version 6`), takes
// sn-a's whole registry every period, as every peer did before protocol 7. Read from sn-a's
// metrics over 20 periods: the bytes of one message to a protocol 7 peer (what changed) against
// one to sn-old (the whole registry) in the same run, while nothing happens, then while a
// spawner takes 100 daemons each second and gives them back a second later.
// sn-b's status must list all K daemons of sn-a. Never fails on a size or a time.
// Run: build/bin/federation_exchange_bench [K ...]   (default: 1000 5000)
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "grant_loop.h"
#include "support/http_client.h"
#include "support/identities.h"
#include "support/processes.h"
#include "support/test_support.h"
#include "swarm_bench.h"

using namespace aiac;

namespace {

const std::string kClusterKey = "federation-exchange-bench-key-0123";
constexpr int kDigestMs = 500;
constexpr int kPeriods = 20;

// sn-a's exchange counters: bytes and messages sent, by form.
struct Sent {
  double full_bytes = NAN, full_messages = NAN, delta_bytes = NAN, delta_messages = NAN;
};

Sent Scrape(const std::string& metrics) {
  const auto page = aiac::testing::HttpGet(metrics, "/metrics").body;
  const auto value = [&](const char* name, const char* form) {
    return aiac::testing::MetricValue(page, std::string(name) + "{form=\"" + form + "\"}");
  };
  return {value("aiac_registry_exchange_bytes_sent_total", "full"),
          value("aiac_registry_exchange_messages_sent_total", "full"),
          value("aiac_registry_exchange_bytes_sent_total", "delta"),
          value("aiac_registry_exchange_messages_sent_total", "delta")};
}

// Bytes of one message of each form between two scrapes.
struct PerMessage {
  double full = NAN, delta = NAN;
};

PerMessage Between(const Sent& a, const Sent& b) {
  return {(b.full_bytes - a.full_bytes) / (b.full_messages - a.full_messages),
          (b.delta_bytes - a.delta_bytes) / (b.delta_messages - a.delta_messages)};
}

// How many daemons of sn-a sn-b's status lists.
int ListedAt(const std::string& metrics) {
  auto j =
      nlohmann::json::parse(aiac::testing::HttpGet(metrics, "/api/status").body, nullptr, false);
  if (!j.is_object() || !j["daemons"].is_array()) return -1;
  int n = 0;
  for (const auto& d : j["daemons"]) n += d.value("supernode", "") == "sn-a";
  return n;
}

struct Figures {
  PerMessage quiet, churn;
  int listed = -1;  // sn-a's daemons in sn-b's status
  int grants = 0;
};

Figures Measure(const std::string& dir, const aiac::testing::TestAuthority& authority,
                int daemons) {
  Figures out;
  const std::string tag = "k" + std::to_string(daemons);
  const std::string period = std::to_string(kDigestMs);
  const std::string a_metrics = bench::FreeLoopbackAddress();
  auto a = bench::StartBenchSupernode(dir, "sn-a", tag, daemons,
                                      {"--metrics", a_metrics, "--digest-interval-ms", period});
  const std::string a_addr = bench::SupernodeAddress(dir, "sn-a", tag);
  if (a_addr.empty()) return out;
  const std::string b_metrics = bench::FreeLoopbackAddress();
  auto b = bench::StartBenchSupernode(
      dir, "sn-b", tag, 0,
      {"--peer", a_addr, "--metrics", b_metrics, "--digest-interval-ms", period});
  const std::string b_addr = bench::SupernodeAddress(dir, "sn-b", tag);
  auto c = bench::StartBenchSupernode(
      dir, "sn-c", tag, 0, {"--peer", a_addr, "--peer", b_addr, "--digest-interval-ms", period});
  auto old = bench::StartBenchSupernode(
      dir, "sn-old", tag, 0,
      {"--peer", a_addr, "--max-protocol-version", "6", "--digest-interval-ms", period});
  const std::string log_file = dir + "/" + tag + "-swarm.log";
  auto swarm = bench::StartSwarm(dir, {a_addr}, daemons, log_file);
  if (!bench::WaitAllRegistered("federation_exchange_bench", log_file, daemons).empty()) {
    // sn-b lists them all: the exchange is complete, not only small.
    aiac::testing::WaitUntil([&] { return ListedAt(b_metrics) == daemons; },
                             std::chrono::seconds(60));
    out.listed = ListedAt(b_metrics);
    const auto window = std::chrono::milliseconds(kPeriods * kDigestMs);
    const Sent s0 = Scrape(a_metrics);
    std::this_thread::sleep_for(window);
    const Sent s1 = Scrape(a_metrics);
    out.quiet = Between(s0, s1);
    // A job of 100 daemons starting every second and ending a second later, for as many
    // periods: 100 daemons change state each second, 200 records.
    auto endpoint = ParseEndpoint(a_addr);
    const int asks = kPeriods * kDigestMs / 1000;
    out.grants = static_cast<int>(bench::AskRepeatedly(*endpoint, authority, kClusterKey,
                                                       {100, asks, std::chrono::milliseconds(1000),
                                                        std::chrono::milliseconds(0)},
                                                       "federation_exchange_bench")
                                      .size());
    out.churn = Between(s1, Scrape(a_metrics));
  }
  for (auto* p : {&swarm, &old, &c, &b, &a}) p->Signal(SIGTERM);
  for (auto* p : {&swarm, &old, &c, &b, &a}) p->WaitFor(std::chrono::seconds(120));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const auto sizes = bench::SwarmSizes(argc, argv, "federation_exchange_bench", 100, {1000, 5000});
  if (!sizes) return 2;
  aiac::testing::TempDir dir;
  const std::string d = dir.path();
  const aiac::testing::TestAuthority authority;
  if (Status s = bench::WriteSwarmKeys(d, kClusterKey, {"sn-a", "sn-b", "sn-c", "sn-old"},
                                       authority.key());
      !s.ok()) {
    std::fprintf(stderr, "federation_exchange_bench: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("%8s %8s %12s %12s %8s %12s %8s %7s\n", "daemons", "listed", "full_B/msg",
              "quiet_B/msg", "ratio", "churn_B/msg", "ratio", "grants");
  for (int k : *sizes) {
    const Figures f = Measure(d, authority, k);
    std::printf("%8d %8d %12.0f %12.0f %8.4f %12.0f %8.4f %7d\n", k, f.listed, f.quiet.full,
                f.quiet.delta, f.quiet.delta / f.quiet.full, f.churn.delta,
                f.churn.delta / f.churn.full, f.grants);
  }
  return 0;
}
