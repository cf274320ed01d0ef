// aiac-emulate's user-space link emulator (docs/emulation.md), for kernels without netem: it
// holds the TUN device of every node of a platform (each opened inside its node's network
// namespace), reads the IPv4 packets a node sends, and writes each into its destination node's
// device after the pair's latency and at the pair's rate (emulation/link_queue.h, one queue per
// ordered pair of nodes; the figures of the pair's clusters, PlatformFile::Between). Packets to
// an address outside the platform, and packets that are not IPv4, are dropped. The host's own
// port (a port of no cluster) is not part of the platform: its packets pass without delay.
//
// One io_context thread; everything runs on it.
#pragma once

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/logging.h"
#include "core/status.h"
#include "emulation/link_queue.h"
#include "emulation/platform_file.h"

namespace aiac::emulate {

// Opens the TUN device `device` (made persistent by `ip tuntap add`) from inside the network
// namespace `netns` (the caller's own when empty); the device's file descriptor, owned by the
// caller. The calling thread is back in its own namespace on return.
Result<int> OpenTunIn(const std::string& netns, const std::string& device);

class TunSwitch {
 public:
  struct Port {
    std::string node_id;
    std::string cluster;  // empty for the host's port
    std::string address;  // dotted IPv4
    int fd = -1;          // the node's TUN device; the switch takes it
  };
  struct Counters {
    uint64_t delivered = 0;
    uint64_t dropped_full = 0;      // the pair's queue was full
    uint64_t dropped_unrouted = 0;  // not IPv4, or to an address outside the platform
  };

  TunSwitch(boost::asio::io_context& io, const emulation::PlatformFile& platform,
            std::vector<Port> ports, Logger log);
  ~TunSwitch();

  // Starts reading every port and delivering; returns at once.
  void Start();
  // Stops reading and drops what waits; the io_context then runs out of work.
  void Stop();
  const Counters& counters() const { return counters_; }

 private:
  struct Pending {
    double at;     // seconds since start_
    uint64_t seq;  // FIFO among equal times
    size_t to;
    std::vector<uint8_t> packet;
    bool operator>(const Pending& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  boost::asio::awaitable<void> Read(size_t port);
  boost::asio::awaitable<void> Deliver();
  void Route(size_t from, const uint8_t* packet, size_t size);
  emulation::LinkQueue& Queue(size_t from, size_t to);
  double Now() const;

  boost::asio::io_context& io_;
  emulation::PlatformFile platform_;
  std::vector<Port> ports_;
  std::vector<std::unique_ptr<boost::asio::posix::stream_descriptor>> streams_;
  std::unordered_map<uint32_t, size_t> by_address_;
  std::unordered_map<uint64_t, emulation::LinkQueue> queues_;  // key: from << 32 | to
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  boost::asio::steady_timer timer_;
  double armed_for_ = 0;
  uint64_t seq_ = 0;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point start_;
  Counters counters_;
  Logger log_;
};

}  // namespace aiac::emulate
