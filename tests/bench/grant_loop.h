// A spawner session (the code `aiac-spawner run` asks with) that asks a super-node for daemons
// again and again, as job after job starts and ends: shared by grant_latency_bench, which times
// each ask, and federation_exchange_bench, which makes the registry change with it. Header only:
// each benchmark is one executable.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_support.h"
#include "net/tls.h"
#include "spawner/supernode_session.h"
#include "support/identities.h"

namespace aiac::bench {

struct GrantLoop {
  uint32_t count = 100;  // daemons per request
  int requests = 200;
  std::chrono::milliseconds hold{0};    // from a grant to its release
  std::chrono::milliseconds pause{20};  // after each release, before the next ask
};

// `loop.requests` requests of `loop.count` daemons for jobs bench-0, bench-1, ..., each held for
// `loop.hold`, released and its job ended before the next; the times in ms of the ones answered
// with all of them.
inline std::vector<double> AskRepeatedly(const Endpoint& supernode,
                                         const aiac::testing::TestAuthority& authority,
                                         const std::string& cluster_key, const GrantLoop& loop,
                                         const char* program) {
  namespace asio = net::asio;
  net::NetOptions net = authority.Member(cluster_key, "bench-spawner", proto::Role::SPAWNER);
  net.tls = *net::TlsContext::Make(net.cluster_key);
  asio::io_context io;
  spawner::SupernodeSession session({supernode}, net, "bench-spawner",
                                    MakeLogger(program, spdlog::level::warn));
  session.Start(io.get_executor());
  std::vector<double> times;
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        if (Status s = co_await session.WaitConnected(10); !s.ok()) {
          std::fprintf(stderr, "%s: %s\n", program, s.message().c_str());
          session.Stop();
          co_return;
        }
        asio::steady_timer pause(io);
        for (int r = 0; r < loop.requests; ++r) {
          const std::string job = "bench-" + std::to_string(r);
          const auto start = std::chrono::steady_clock::now();
          auto answer =
              co_await session.Request(job, loop.count, 0, start + std::chrono::seconds(3));
          const double ms = 1e3 * SecondsSince(start);
          if (answer.ok() && answer->daemons.size() == loop.count) {
            times.push_back(ms);
            std::vector<std::string> ids;
            for (const auto& d : answer->daemons) ids.push_back(d.id);
            if (loop.hold.count() > 0) {
              pause.expires_after(loop.hold);
              co_await pause.async_wait(net::use_nothrow);
            }
            session.Release(job, ids);
          } else {
            std::fprintf(stderr, "%s: request %d: %s\n", program, r,
                         answer.ok() ? answer->error.c_str() : answer.status().message().c_str());
          }
          session.EndJob(job);
          // The release reaches the super-node before the next ask, as a next job's would.
          pause.expires_after(loop.pause);
          co_await pause.async_wait(net::use_nothrow);
        }
        co_await session.Finish(std::chrono::seconds(2));
      },
      asio::detached);
  io.run();
  return times;
}

}  // namespace aiac::bench
