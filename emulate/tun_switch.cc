#include "emulate/tun_switch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

namespace aiac::emulate {

namespace asio = boost::asio;

namespace {

std::optional<uint32_t> ParseAddress(const std::string& dotted) {
  in_addr a{};
  if (inet_pton(AF_INET, dotted.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

}  // namespace

Result<int> OpenTunIn(const std::string& netns, const std::string& device) {
  int own = -1;
  if (!netns.empty()) {
    own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (own < 0)
      return IoError(std::string("cannot open /proc/self/ns/net: ") + std::strerror(errno));
    const std::string path = "/run/netns/" + netns;
    const int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0 || setns(target, CLONE_NEWNET) != 0) {
      const std::string why = std::strerror(errno);
      if (target >= 0) close(target);
      close(own);
      return Unavailable("cannot enter " + path + ": " + why);
    }
    close(target);
  }
  const int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  std::string why;
  if (fd < 0) {
    why = std::string("cannot open /dev/net/tun: ") + std::strerror(errno);
  } else {
    ifreq request{};
    request.ifr_flags = IFF_TUN | IFF_NO_PI;
    std::strncpy(request.ifr_name, device.c_str(), IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &request) != 0) {
      why = "cannot attach to " + device + (netns.empty() ? "" : " in " + netns) + ": " +
            std::strerror(errno);
    }
  }
  bool back = true;
  if (own >= 0) {
    back = setns(own, CLONE_NEWNET) == 0;
    close(own);
  }
  if (!why.empty() || !back) {
    if (fd >= 0) close(fd);
    return Unavailable(why.empty() ? "cannot return to the switch's own namespace" : why);
  }
  return fd;
}

TunSwitch::TunSwitch(asio::io_context& io, const emulation::PlatformFile& platform,
                     std::vector<Port> ports, Logger log)
    : io_(io), platform_(platform), ports_(std::move(ports)), timer_(io), log_(std::move(log)) {
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (auto a = ParseAddress(ports_[i].address)) by_address_[*a] = i;
    streams_.push_back(std::make_unique<asio::posix::stream_descriptor>(io_, ports_[i].fd));
  }
}

TunSwitch::~TunSwitch() = default;

double TunSwitch::Now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void TunSwitch::Start() {
  start_ = std::chrono::steady_clock::now();
  armed_for_ = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < ports_.size(); ++i) asio::co_spawn(io_, Read(i), asio::detached);
  asio::co_spawn(io_, Deliver(), asio::detached);
}

void TunSwitch::Stop() {
  stopped_ = true;
  for (auto& s : streams_) {
    boost::system::error_code ignored;
    s->close(ignored);
  }
  timer_.cancel();
}

asio::awaitable<void> TunSwitch::Read(size_t port) {
  std::vector<uint8_t> buffer(65536);
  for (;;) {
    auto [ec, n] = co_await streams_[port]->async_read_some(asio::buffer(buffer),
                                                            asio::as_tuple(asio::use_awaitable));
    if (stopped_) co_return;
    if (ec) {
      log_->error("node {}: reading its TUN device failed ({}); its link is down",
                  ports_[port].node_id, ec.message());
      co_return;
    }
    Route(port, buffer.data(), n);
  }
}

void TunSwitch::Route(size_t from, const uint8_t* packet, size_t size) {
  if (size < 20 || (packet[0] >> 4) != 4) {
    ++counters_.dropped_unrouted;
    return;
  }
  const uint32_t destination = (uint32_t{packet[16]} << 24) | (uint32_t{packet[17]} << 16) |
                               (uint32_t{packet[18]} << 8) | uint32_t{packet[19]};
  const auto it = by_address_.find(destination);
  if (it == by_address_.end() || it->second == from) {
    ++counters_.dropped_unrouted;
    return;
  }
  const size_t to = it->second;
  const std::optional<double> at = Queue(from, to).Admit(Now(), size);
  if (!at) {
    ++counters_.dropped_full;
    return;
  }
  pending_.push({*at, seq_++, to, std::vector<uint8_t>(packet, packet + size)});
  if (*at < armed_for_) timer_.cancel();  // Deliver re-arms for the earlier packet
}

emulation::LinkQueue& TunSwitch::Queue(size_t from, size_t to) {
  const uint64_t key = (uint64_t{from} << 32) | to;
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    emulation::LinkFigures figures{0, 1e12};  // to or from the host: no delay
    if (!ports_[from].cluster.empty() && !ports_[to].cluster.empty()) {
      const auto link = platform_.Between(ports_[from].cluster, ports_[to].cluster);
      figures = {link.latency_ms / 1000, link.bandwidth_mbps * 1e6 / 8};
    }
    it = queues_.emplace(key, emulation::LinkQueue(figures)).first;
  }
  return it->second;
}

asio::awaitable<void> TunSwitch::Deliver() {
  for (;;) {
    if (pending_.empty()) {
      armed_for_ = std::numeric_limits<double>::infinity();
      timer_.expires_at(asio::steady_timer::time_point::max());
    } else {
      armed_for_ = pending_.top().at;
      timer_.expires_at(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(armed_for_)));
    }
    co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (stopped_) co_return;
    const double now = Now();
    while (!pending_.empty() && pending_.top().at <= now) {
      const Pending& p = pending_.top();
      // A TUN device takes a whole packet or nothing; a full one (EAGAIN) loses it, as a link
      // does.
      if (write(ports_[p.to].fd, p.packet.data(), p.packet.size()) ==
          static_cast<ssize_t>(p.packet.size())) {
        ++counters_.delivered;
      } else {
        ++counters_.dropped_full;
      }
      pending_.pop();
    }
  }
}

}  // namespace aiac::emulate
