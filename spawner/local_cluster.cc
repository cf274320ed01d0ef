#include "spawner/local_cluster.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/hex.h"
#include "core/temp_dir.h"
#include "monitor/power_benchmark.h"
#include "monitor/power_cache.h"
#include "net/random.h"

namespace aiac::spawner {

namespace asio = net::asio;
namespace fs = std::filesystem;

LocalCluster::LocalCluster(size_t daemons, size_t supernodes, std::string bin_dir,
                           std::string log_level, Logger log)
    : daemons_(daemons),
      supernodes_(std::max<size_t>(1, supernodes)),
      bin_dir_(std::move(bin_dir)),
      log_level_(std::move(log_level)),
      log_(std::move(log)),
      key_(Hex(net::RandomBytes(16))),
      signing_(runtime::SigningKey::Generate()),
      authority_(Ed25519Key::Generate()) {}

LocalCluster::~LocalCluster() { Stop(); }

namespace {

// Long enough for any run; the authority dies with the run's directory anyway.
int64_t LocalExpiry() { return net::UnixNow() + 30 * 24 * 3600; }

}  // namespace

Result<std::shared_ptr<const net::NodeIdentity>> LocalCluster::SpawnerIdentity() const {
  if (!authority_.ok()) return authority_.status();
  AIAC_ASSIGN_OR_RETURN(Ed25519Key key, Ed25519Key::Generate());
  AIAC_ASSIGN_OR_RETURN(net::Certificate cert,
                        net::Certify(*authority_, "spawner-local", proto::Role::SPAWNER,
                                     key.PublicKey(), LocalExpiry()));
  return net::MakeNodeIdentity(std::move(key), std::move(cert),
                               net::Trust({authority_->PublicKey()}));
}

Status LocalCluster::WriteIdentity(const std::string& id, proto::Role role) const {
  if (!authority_.ok()) return authority_.status();
  return net::WriteNewIdentity(*authority_, id, role, LocalExpiry(), dir_ + "/" + id + ".key",
                               dir_ + "/" + id + ".cert");
}

Result<std::pair<std::string, std::string>> LocalCluster::SignPlugin(
    std::string_view sha256) const {
  if (!signing_.ok()) return signing_.status();
  return std::make_pair(signing_->Sign(sha256), signing_->PublicKey());
}

namespace {

// This host's power for local daemons: measured once (200 ms) and kept for this user's later
// local runs in UserTempDir()/power, like a daemon's DATA/power (monitor/power_cache.h).
double LocalPower(const Logger& log) {
  const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
  auto dir = UserTempDir();
  if (!dir.ok())
    log->warn("local cluster: the measured power is not kept: {}", dir.status().message());
  const std::string path = dir.ok() ? *dir + "/power" : "";
  if (dir.ok()) {
    if (auto cached = monitor::ReadCachedPower(path, monitor::ThisHostName(), cores))
      return *cached;
  }
  const double power = monitor::MeasurePowerMedian();
  if (!dir.ok()) return power;
  if (Status kept = monitor::WriteCachedPower(path, {power, monitor::ThisHostName(), cores});
      !kept.ok()) {
    log->warn("local cluster: power {:.2f} not cached: {}", power, kept.message());
  }
  return power;
}

}  // namespace

size_t RemoveStaleLocalDirs(const std::string& root, const Logger& log) {
  size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("aiac-local-", 0) != 0) continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::geteuid()) {
      continue;
    }
    std::ifstream in(entry.path() / "owner.pid");
    long pid = 0;
    if (!(in >> pid) || pid <= 0) continue;  // not ours to judge: no owner recorded
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // owner alive
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
    if (!rm) {
      ++removed;
      log->info("removed {}: left by run {} that was killed", entry.path().string(), pid);
    }
  }
  return removed;
}

Status LocalCluster::WriteConfigs() {
  RemoveStaleLocalDirs(TempRoot(), log_);
  AIAC_ASSIGN_OR_RETURN(auto dir, MakeTempDir("aiac-local"));
  dir_ = std::move(dir);
  {
    std::ofstream owner(dir_ + "/owner.pid");
    owner << ::getpid() << "\n";
    if (!owner) return IoError("cannot write " + dir_ + "/owner.pid");
  }
  if (!authority_.ok()) return authority_.status();
  std::ofstream conf(dir_ + "/cluster.toml");
  conf << "cluster_key = \"" << key_ << "\"\nauthority_keys = [\"" << authority_->PublicHex()
       << "\"]\n";
  conf.close();
  if (!conf) return IoError("cannot write " + dir_ + "/cluster.toml");
  fs::permissions(dir_ + "/cluster.toml", fs::perms::owner_read | fs::perms::owner_write);
  return Status::Ok();
}

std::vector<std::string> LocalCluster::ChildArgs(const std::string& binary, const std::string& id,
                                                 const std::string& host) const {
  return {bin_dir_ + "/" + binary,
          "--config",
          dir_ + "/cluster.toml",
          "--listen",
          host + ":0",
          "--id",
          id,
          "--data",
          dir_ + "/" + id,
          "--log-level",
          log_level_,
          "--log-format",
          log_format_,
          "--identity-key-file",
          dir_ + "/" + id + ".key",
          "--certificate-file",
          dir_ + "/" + id + ".cert"};
}

net::awaitable<Result<std::string>> LocalCluster::StartSupernode(
    size_t k, const std::vector<std::string>& peers, std::chrono::milliseconds timeout) {
  const std::string id = "sn-local-" + std::to_string(k);
  const std::string ready = dir_ + "/" + id + ".addr";
  if (Status s = WriteIdentity(id, proto::Role::SUPERNODE); !s.ok()) co_return s;
  const bool os = emulation_ && emulation_->os;
  std::vector<std::string> argv =
      ChildArgs("aiac-supernode", id, os ? emulation_->os->host_address : "127.0.0.1");
  argv.insert(argv.end(), {"--ready-file", ready});
  // Linking from the later to the earlier ones links every pair once.
  for (const auto& peer : peers) {
    argv.push_back("--peer");
    argv.push_back(peer);
  }
  auto sn = ChildProcess::Spawn(argv);
  if (!sn.ok()) co_return sn.status();
  children_.emplace_back("super-node " + id, std::move(*sn));
  auto& child = children_.back().second;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string address;
  while (address.empty()) {
    if (auto code = child.Poll()) {
      co_return Unavailable("local super-node " + id + " exited with " + std::to_string(*code));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      co_return Timeout("local super-node " + id + " did not start within " +
                        std::to_string(timeout.count()) + " ms");
    }
    std::ifstream in(ready);
    std::getline(in, address);
    if (address.empty()) {
      timer.expires_after(std::chrono::milliseconds(20));
      co_await timer.async_wait(net::use_nothrow);
    }
  }
  co_return address;
}

Status LocalCluster::StartDaemons(const std::vector<std::string>& supernodes) {
  if (!signing_.ok()) return signing_.status();
  // Every local daemon runs on this host: one measurement for all, rather than each daemon
  // measuring while the others start (which spread identical daemons over 2.5-4.0 GFlop/s and
  // skewed the mapping for nothing). (Emulated nodes take their powers from the platform.)
  const std::string power = emulation_ ? std::string("1") : std::to_string(LocalPower(log_));
  for (size_t i = 1; i <= daemons_; ++i) {
    // (Appended, not "d" + ...: g++ 12 warns falsely of an overlapping copy there.)
    const std::string id =
        emulation_ ? emulation_->node_ids[i - 1] : std::string("d").append(std::to_string(i));
    AIAC_RETURN_IF_ERROR(WriteIdentity(id, proto::Role::DAEMON));
    const LocalEmulation::OsNode* os_node =
        emulation_ && emulation_->os ? &emulation_->os->nodes.at(id) : nullptr;
    std::vector<std::string> argv;
    if (os_node) {
      // Run as the node: aiac-emulate enters its namespace and cgroup, then becomes the daemon.
      argv = {bin_dir_ + "/aiac-emulate", "exec", "--platform", emulation_->os->platform, id, "--"};
      const std::vector<std::string> daemon = ChildArgs("aiac-daemon", id, os_node->address);
      argv.insert(argv.end(), daemon.begin(), daemon.end());
      argv.insert(argv.end(), {"--power", std::to_string(os_node->power), "--cluster",
                               os_node->cluster, "--app-isolation", app_isolation_});
    } else {
      argv = ChildArgs("aiac-daemon", id);
      argv.insert(argv.end(), {"--power", power, "--app-isolation", app_isolation_});
    }
    if (trusted_keys_.empty()) {
      argv.insert(argv.end(), {"--trusted-key", signing_->PublicHex()});
    } else {
      for (const std::string& key : trusted_keys_) argv.insert(argv.end(), {"--trusted-key", key});
    }
    if (emulation_ && !os_node) {
      for (std::string arg :
           {std::string("--emulate"), emulation_->platform_path, std::string("--emulate-slowdown"),
            std::to_string(emulation_->slowdown), std::string("--emulate-seed"),
            std::to_string(emulation_->seed)}) {
        argv.push_back(std::move(arg));
      }
    }
    // Each daemon lists every super-node, starting with a different one.
    for (size_t k = 0; k < supernodes.size(); ++k) {
      argv.push_back("--supernode");
      argv.push_back(supernodes[(i - 1 + k) % supernodes.size()]);
    }
    AIAC_ASSIGN_OR_RETURN(ChildProcess d, ChildProcess::Spawn(argv));
    children_.emplace_back("daemon " + id, std::move(d));
  }
  return Status::Ok();
}

net::awaitable<Result<std::vector<Endpoint>>> LocalCluster::Start(
    std::chrono::milliseconds timeout) {
  if (Status s = WriteConfigs(); !s.ok()) co_return s;
  std::vector<std::string> addresses;
  std::vector<Endpoint> endpoints;
  for (size_t k = 1; k <= supernodes_; ++k) {
    auto address = co_await StartSupernode(k, addresses, timeout);
    if (!address.ok()) co_return address.status();
    auto endpoint = ParseEndpoint(*address);
    if (!endpoint.ok()) co_return endpoint.status();
    addresses.push_back(*address);
    endpoints.push_back(*endpoint);
  }
  if (Status s = StartDaemons(addresses); !s.ok()) co_return s;
  std::string list;
  for (const auto& a : addresses) list += (list.empty() ? "" : ", ") + a;
  log_->info("local cluster: {} at {}, {} daemons, data in {}",
             supernodes_ == 1 ? "super-node" : "super-nodes", list, daemons_, dir_);
  co_return endpoints;
}

void LocalCluster::Reap() {
  size_t supernodes_gone = 0;
  for (size_t i = 0; i < children_.size(); ++i) {
    auto& [name, child] = children_[i];
    if (!reaped_.count(name)) {
      auto code = child.Poll();
      if (!code) continue;
      reaped_.insert(name);
      log_->warn("local cluster: {} exited with {}", name, *code);
    }
    if (i < supernodes_) ++supernodes_gone;
  }
  if (supernodes_gone == supernodes_ && !all_supernodes_gone_) {
    all_supernodes_gone_ = true;
    log_->error("local cluster: every super-node is gone; the run goes on with the daemons it has");
  }
}

bool LocalCluster::Kill(const std::string& id) {
  for (auto& [name, child] : children_) {
    if (name != "daemon " + id || reaped_.count(name)) continue;
    child.Signal(SIGKILL);
    return true;
  }
  return false;
}

void LocalCluster::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // Daemons first (all signalled, then reaped: one grace period, not N), the super-nodes last,
  // so no daemon sees its super-node vanish and warns about it.
  for (size_t i = supernodes_; i < children_.size(); ++i) children_[i].second.Signal(SIGTERM);
  for (size_t i = supernodes_; i < children_.size(); ++i) children_[i].second.Stop();
  for (size_t i = 0; i < std::min(supernodes_, children_.size()); ++i)
    children_[i].second.Signal(SIGTERM);
  children_.clear();  // each child's destructor stops and reaps it
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace aiac::spawner
