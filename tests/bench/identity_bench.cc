// What identities cost (docs/security.md): a connection's handshake with certificates and their
// channel binding against the same handshake without (TLS with the cluster key alone), over
// loopback in this process; and a checkpoint's proof (the daemon's signature over the state's
// SHA-256, then a backup's check of it) against what a checkpoint cost before (its CRC32C), for
// states of 100 KB, 1 MB and 10 MB. Both measured in the same run; prints the ratios.
// Run: build/bin/identity_bench [handshakes]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "checkpoint/proof.h"
#include "net/tls.h"
#include "support/identities.h"
#include "support/loopback.h"

using namespace aiac;
using Clock = std::chrono::steady_clock;

namespace {

// Seconds for `count` handshakes between a daemon and a super-node with these options.
double Handshakes(const net::NetOptions& client, const net::NetOptions& server, int count) {
  net::asio::io_context io;
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    auto [a, b] = testing::ConnectLoopback(io);
    auto x = net::Connection::Create(std::move(a), client, net::Side::kClient);
    auto y = net::Connection::Create(std::move(b), server, net::Side::kServer);
    auto [s1, s2] = testing::HandshakeBoth(io, {x, proto::Role::DAEMON, "d1"},
                                           {y, proto::Role::SUPERNODE, "sn1"});
    if (!s1.ok() || !s2.ok()) {
      std::fprintf(stderr, "identity_bench: handshake failed: %s / %s\n", s1.ToString().c_str(),
                   s2.ToString().c_str());
      std::exit(1);
    }
    x->Close();
    y->Close();
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename F>
double BestOf(int reps, F f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) best = std::min(best, f());
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 200;
  net::NetOptions plain;
  plain.cluster_key = "identity-bench-cluster-key-0123456789";
  plain.tls = *net::TlsContext::Make(plain.cluster_key);
  const testing::TestAuthority authority;
  net::NetOptions daemon = plain, supernode = plain;
  daemon.identity = authority.Identity("d1", proto::Role::DAEMON);
  supernode.identity = authority.Identity("sn1", proto::Role::SUPERNODE);
  double key_only = 1e30, certified = 1e30;
  for (int rep = 0; rep < 3; ++rep) {  // alternated, best of three each
    key_only = std::min(key_only, Handshakes(plain, plain, count));
    certified = std::min(certified, Handshakes(daemon, supernode, count));
  }
  std::printf(
      "identity_bench: %d handshakes over loopback: cluster key alone %.3f ms each, "
      "with certificates %.3f ms each, certified/key-only %.2fx\n",
      count, key_only * 1e3 / count, certified * 1e3 / count, certified / key_only);

  const Ed25519Key spawner = *Ed25519Key::Generate();
  const Ed25519Key signer = *Ed25519Key::Generate();
  const auto capability =
      checkpoint::GrantCapability(spawner, "job", 0, 1, "d1", signer.PublicKey());
  for (size_t bytes : {size_t{100} << 10, size_t{1} << 20, size_t{10} << 20}) {
    std::string state(bytes, '\0');
    for (size_t i = 0; i < bytes; ++i) state[i] = static_cast<char>((i * 2654435761u) >> 13);
    const int n = static_cast<int>(std::max<size_t>(20, (200u << 20) / bytes));
    const double crc = BestOf(3, [&] {
      const auto start = Clock::now();
      for (int i = 0; i < n; ++i) {
        auto c = checkpoint::MakeCheckpoint("job", 0, 1, i, state);
        if (!checkpoint::Verifies(c)) std::exit(1);
      }
      return std::chrono::duration<double>(Clock::now() - start).count();
    });
    const double proved = BestOf(3, [&] {
      const auto start = Clock::now();
      for (int i = 0; i < n; ++i) {
        auto c = checkpoint::MakeCheckpoint("job", 0, 1, i, state);
        auto proof = checkpoint::ProveCheckpoint(signer, capability, c);
        if (!checkpoint::Verifies(c) ||
            !checkpoint::VerifyCheckpoint(c, proof, spawner.PublicKey()).ok())
          std::exit(1);
      }
      return std::chrono::duration<double>(Clock::now() - start).count();
    });
    std::printf(
        "  %6zu KB checkpoints (%d): CRC32C %.3f ms each, with proof made and checked "
        "%.3f ms each, proved/CRC %.2fx\n",
        bytes >> 10, n, crc * 1e3 / n, proved * 1e3 / n, proved / crc);
  }
  return 0;
}
