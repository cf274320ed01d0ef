// swarm: plays many daemons from one process against real super-nodes, to find their limits
// (docs/scale.md). Each played daemon is what aiac-daemon's link to the super-nodes is
// (daemon::SupernodeLink): its own Ed25519 key, certified in memory by the deployment's
// authority; its own TLS connection and Hello; registration, heartbeats at its period, the
// acknowledgements read, registering again when a super-node forgot it, and the next super-node
// of the list when one goes away. It takes no tasks: the address it registers has nothing behind
// it. One thread runs every connection; several swarm processes play more.
//
//   swarm --supernode HOST:PORT --daemons K --authority-private-key AUTHORITY.key
//         --cluster-key-file cluster.key [--heartbeat-ms MS] [--ramp-s S] [--duration-s S]
//         [--json F]
//
// Logs a progress line (registered, heartbeats sent and acknowledged, connections lost) and
// one when every daemon is registered; at the end every daemon deregisters, and the summary goes
// to --json. Errors: one line on stderr, exit 2 (bad options), 1 (every super-node refused).
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/atomic_file.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "core/usage_error.h"
#include "daemon/supernode_link.h"
#include "net/descriptors.h"
#include "net/identity.h"
#include "net/net_config.h"
#include "net/shutdown.h"
#include "net/version.h"
#include "tools/swarm_options.h"

namespace {

using namespace aiac;
namespace asio = net::asio;
using Clock = std::chrono::steady_clock;

int Fail(const Status& s, int code = 2) {
  std::fprintf(stderr, "swarm: %s\n", s.message().c_str());
  return code;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The played daemons' identities: each a fresh key certified as daemon `id_prefix` + its number
// by `authority`, for a day past the run, believing what `net` says to believe.
Result<std::vector<std::shared_ptr<const net::NodeIdentity>>> Identities(
    const tools::SwarmOptions& o, const Ed25519Key& authority, const net::NetOptions& net) {
  AIAC_ASSIGN_OR_RETURN(const net::Trust trust, net::LoadTrust(net));
  const int64_t expires =
      net::UnixNow() + 86400 + static_cast<int64_t>(o.duration.count() + o.ramp.count());
  std::vector<std::shared_ptr<const net::NodeIdentity>> out;
  out.reserve(static_cast<size_t>(o.daemons));
  for (int64_t i = 0; i < o.daemons; ++i) {
    AIAC_ASSIGN_OR_RETURN(Ed25519Key key, Ed25519Key::Generate());
    const std::string id = o.id_prefix + fmt::format("{:06}", i);
    AIAC_ASSIGN_OR_RETURN(net::Certificate cert, net::Certify(authority, id, proto::Role::DAEMON,
                                                              key.PublicKey(), expires));
    AIAC_ASSIGN_OR_RETURN(auto identity,
                          net::MakeNodeIdentity(std::move(key), std::move(cert), trust));
    out.push_back(std::move(identity));
  }
  return out;
}

// Once all were registered, the outages: from the first daemon's loss until all were registered
// again (a super-node killed: how long its daemons took to find the others).
struct Outages {
  std::optional<Clock::time_point> since;  // the current one began (a daemon unregistered)
  uint64_t lost_before = 0;                // connections lost before it (at the last look
                                           // that saw all registered)
  std::vector<double> seconds;             // each one's length, when it ended
};

nlohmann::json Summary(const tools::SwarmOptions& o, const daemon::LinkCounters& c,
                       uint64_t registered_at_stop, std::optional<double> all_registered,
                       const Outages& outages, double seconds) {
  nlohmann::json j;
  j["daemons"] = o.daemons;
  j["registered_at_stop"] = registered_at_stop;
  j["all_registered_seconds"] = all_registered ? nlohmann::json(*all_registered) : nullptr;
  j["reregistered_seconds"] = outages.seconds;
  j["registrations"] = c.registrations.load();
  j["heartbeats"] = c.heartbeats.load();
  j["acked"] = c.acked.load();
  j["forgotten"] = c.forgotten.load();
  j["lost"] = c.lost.load();
  j["dials"] = c.dials.load();
  j["seconds"] = seconds;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"swarm: plays many daemons from one process against super-nodes (docs/scale.md)"};
  app.set_version_flag("--version", net::VersionLine("swarm"));
  std::string config;
  app.add_option("--config", config, "TOML options file");
  tools::SwarmOptions o;
  OptionSet declared;
  tools::DeclareSwarmOptions(declared, o);
  declared.AddFlags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageError(app, e, argc, argv);
  }
  if (Status s = declared.Load(config); !s.ok()) return Fail(s);
  if (Status s = tools::CheckSwarmOptions(o); !s.ok()) return Fail(s);
  std::vector<Endpoint> supernodes;
  for (const auto& text : o.supernodes) {
    auto e = ParseEndpoint(text);
    if (!e.ok()) return Fail(e.status());
    supernodes.push_back(*e);
  }
  if (auto e = ParseEndpoint(o.advertise); !e.ok()) return Fail(e.status());
  // A connection each, and some to spare.
  const uint64_t needed = static_cast<uint64_t>(o.daemons) + net::kReservedDescriptors;
  if (const uint64_t files = net::RaiseDescriptorLimit(needed); files < needed) {
    return Fail(InvalidArgument(fmt::format(
        "{} daemons need {} file descriptors and this process may open {} (`ulimit -n`): "
        "play fewer, or raise the limit",
        o.daemons, needed, files)));
  }
  auto level = ParseLogLevel(o.log_level);
  if (!level.ok()) return Fail(level.status());
  auto format = ParseLogFormat(o.log_format);
  if (!format.ok()) return Fail(format.status());
  Logger log = MakeLogger("swarm", *level, *format);
  // Each played daemon's own lines (registered, lost super-node, ...) times K are noise, except
  // when debugging; what they did is in the counters.
  Logger daemons_log =
      *level <= spdlog::level::debug ? log : MakeLogger("swarm", spdlog::level::off, *format);

  auto authority = Ed25519Key::Load(o.authority_private_key, "authority private key");
  if (!authority.ok()) return Fail(authority.status());
  // Believe the authority that certifies the played daemons, as their super-nodes do.
  if (o.net.authority_keys.empty()) o.net.authority_keys.push_back(authority->PublicHex());
  const auto made_at = Clock::now();
  auto identities = Identities(o, *authority, o.net);
  if (!identities.ok()) return Fail(identities.status());
  // The TLS context and the memory budget, once for all (an identity set is kept).
  o.net.identity = identities->front();
  if (Status s = net::FinishNetOptions(o.net, proto::Role::DAEMON); !s.ok()) return Fail(s);
  log->info("swarm: {} daemons certified in {:.2f} s, registering with {}", o.daemons,
            Seconds(Clock::now() - made_at), fmt::join(o.supernodes, ", "));

  asio::io_context io;
  daemon::LinkCounters counters;
  std::deque<daemon::SupernodeLink> links;
  Status fatal;
  std::optional<net::Shutdown> shutdown;
  const auto start = Clock::now();
  std::optional<double> all_registered;
  Outages outages;
  uint64_t registered_at_stop = 0;
  asio::steady_timer progress(io), ramp(io), end(io);
  shutdown.emplace(
      io, log,
      [&]() -> net::awaitable<void> {
        progress.cancel();
        ramp.cancel();
        end.cancel();
        registered_at_stop = counters.registered.load();
        // Every daemon deregisters at once; each Stop ends within seconds.
        size_t stopping = links.size();
        asio::steady_timer done(io, asio::steady_timer::time_point::max());
        for (auto& link : links) {
          asio::co_spawn(io, link.Stop(), [&](std::exception_ptr) {
            if (--stopping == 0) done.cancel();
          });
        }
        if (stopping > 0) co_await done.async_wait(net::use_nothrow);
      },
      std::chrono::seconds(60));
  for (int64_t i = 0; i < o.daemons; ++i) {
    daemon::SelfDescription self;
    net::NetOptions net = o.net;
    net.identity = (*identities)[static_cast<size_t>(i)];
    self.id = net.identity->certificate.id;
    self.address = o.advertise;
    self.cluster = o.cluster;
    self.power = o.power;
    self.cores = static_cast<uint32_t>(o.cores);
    links.emplace_back(
        io.get_executor(), supernodes, self, std::move(net), o.heartbeat, daemons_log,
        [busy = o.busy] { return busy; },
        [&](Status why) {
          // Every super-node refused this daemon (a wrong cluster key or authority): so they
          // do all the others.
          if (!fatal.ok()) return;
          fatal = why;
          shutdown->Begin();
        },
        [](const net::RevocationList&) {});
    links.back().set_counters(&counters);
    links.back().set_backoff(daemon::ReconnectBackoff::WithSpread(o.reconnect_spread));
    links.back().set_silence_limit(o.supernode_timeout);
  }
  identities->clear();

  // The daemons start spread over the ramp, and no faster than max_registering allows.
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        const uint64_t cap = static_cast<uint64_t>(o.max_registering);
        for (size_t i = 0; i < links.size(); ++i) {
          const auto at = start + std::chrono::duration_cast<Clock::duration>(
                                      o.ramp * (static_cast<double>(i) / links.size()));
          if (at > Clock::now()) {
            ramp.expires_at(at);
            co_await ramp.async_wait(net::use_nothrow);
            if (shutdown->begun()) co_return;
          }
          // The registrations the links report come back on this thread's other handlers: a
          // millisecond's wait lets them run.
          while (cap > 0 && i >= counters.registrations.load() + cap) {
            ramp.expires_after(std::chrono::milliseconds(1));
            co_await ramp.async_wait(net::use_nothrow);
            if (shutdown->begun()) co_return;
          }
          links[i].Start();
        }
      },
      asio::detached);
  // Every 100 ms: whether all are registered (one line when they are). A progress line a second
  // while the count of registered daemons moves or connections are lost, else every ten seconds.
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        uint64_t last_registered = ~0ull, last_lost = 0;
        auto last_line = Clock::now();
        while (!shutdown->begun()) {
          progress.expires_after(std::chrono::milliseconds(100));
          co_await progress.async_wait(net::use_nothrow);
          if (shutdown->begun()) co_return;
          const uint64_t registered = counters.registered.load();
          const uint64_t lost = counters.lost.load();
          const bool all = registered == static_cast<uint64_t>(o.daemons);
          if (!all_registered && all) {
            all_registered = Seconds(Clock::now() - start);
            log->info("swarm: all {} daemons registered in {:.1f} s", o.daemons, *all_registered);
          } else if (all_registered && !all && !outages.since) {
            outages.since = Clock::now();
          } else if (all && outages.since) {
            outages.seconds.push_back(Seconds(Clock::now() - *outages.since));
            log->info(
                "swarm: all {} daemons registered again {:.1f} s after the first was lost ({} "
                "connections lost)",
                o.daemons, outages.seconds.back(), lost - outages.lost_before);
            outages.since.reset();
          }
          // The losses counted while all were registered came before the next outage.
          if (all) outages.lost_before = lost;
          const auto since = Clock::now() - last_line;
          const bool moved = registered != last_registered || lost != last_lost;
          if (since < std::chrono::seconds(moved ? 1 : 10)) continue;
          log->info(
              "swarm: [{:6.1f}s] registered {}/{}, heartbeats {} sent / {} acknowledged, "
              "forgotten {}, connections lost {}",
              Seconds(Clock::now() - start), registered, o.daemons, counters.heartbeats.load(),
              counters.acked.load(), counters.forgotten.load(), lost);
          last_registered = registered;
          last_lost = lost;
          last_line = Clock::now();
        }
      },
      asio::detached);
  if (o.duration.count() > 0) {
    end.expires_after(std::chrono::duration_cast<Clock::duration>(o.duration));
    end.async_wait([&](std::error_code ec) {
      if (!ec) shutdown->Begin();
    });
  }
  io.run();
  const double seconds = Seconds(Clock::now() - start);
  const nlohmann::json summary =
      Summary(o, counters, registered_at_stop, all_registered, outages, seconds);
  log->info("swarm: stopped after {:.1f} s: {}", seconds, summary.dump());
  if (!o.json.empty()) {
    if (Status s = WriteFileAtomically(o.json, summary.dump(2) + "\n"); !s.ok()) return Fail(s);
  }
  if (!fatal.ok()) return Fail(fatal, 1);
  return 0;
}
