#include "net/net_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/hex.h"
#include "core/private_file.h"
#include "net/random.h"
#include "net/tls.h"

namespace aiac::net {

namespace {

constexpr const char* kHowToMakeOne =
    "make one with `aiac-spawner keygen --out cluster.key` and set cluster_key_file = "
    "\"cluster.key\"";

}  // namespace

void DeclareNetOptions(OptionSet& set, NetOptions& o) {
  set.Section("common");
  set.Path("cluster_key_file", o.cluster_key_file,
           "file holding the platform's shared secret (mode 600); the TLS key is derived from it")
      .Default("`cluster.key` in the shipped configs");
  set.Text("cluster_key", o.cluster_key, "the secret inline instead (not both); at least 16 bytes")
      .NoFlag();
  set.Integer("max_frame_bytes", o.limits.max_frame_bytes, 1, ConfigFile::kMaxPositive,
              "largest frame accepted from an authenticated peer; larger messages are sent in "
              "parts");
  set.Integer("max_message_bytes", o.limits.max_message_bytes, 1, ConfigFile::kMaxPositive,
              "largest message reassembled from parts (also bounded by the memory the process may "
              "use)");
  set.Duration("handshake_timeout_ms", o.handshake_timeout,
               "longest a connect plus handshake may take");
  set.Integer("memory_budget_mb", o.memory_budget_mb, 0, ConfigFile::kMaxPositive,
              "MiB this process may hold for what peers declared they would send (messages in "
              "parts, task and plugin data, large frames being read), all connections together; "
              "0 = half the memory available at start, at least 256");
}

void DeclareServerLimits(OptionSet& set, ServerLimits& limits) {
  set.Section("listening");
  set.Integer("max_connections", limits.max_connections, 1, ConfigFile::kMaxPositive,
              "connections open at once (capped by the descriptor limit minus 64)");
  set.Integer("max_handshakes", limits.max_handshakes, 1, ConfigFile::kMaxPositive,
              "handshakes in progress at once");
  set.Integer("max_handshakes_per_address", limits.max_handshakes_per_address, 1,
              ConfigFile::kMaxPositive, "handshakes in progress at once from one IP address");
  set.Duration("stalled_handshake_ms", limits.stalled_handshake,
               "a handshake pending this long is closed to admit a newcomer when a handshake cap "
               "is reached");
}

double KeyEntropyBits(std::string_view key) {
  std::array<size_t, 256> count{};
  for (unsigned char c : key) ++count[c];
  double bits = 0;
  for (size_t n : count) {
    if (n == 0) continue;
    const double p = static_cast<double>(n) / static_cast<double>(key.size());
    bits -= static_cast<double>(n) * std::log2(p);
  }
  return bits;
}

Status CheckClusterKey(std::string_view key) {
  if (key.empty()) {
    return InvalidArgument(std::string("cluster_key is not set: ") + kHowToMakeOne);
  }
  if (key == kPlaceholderKey) {
    return InvalidArgument(std::string("cluster_key is the shipped placeholder: ") + kHowToMakeOne);
  }
  if (key.size() < kMinKeyBytes) {
    return InvalidArgument("cluster_key is " + std::to_string(key.size()) +
                           " bytes, shorter than " + std::to_string(kMinKeyBytes) + ": " +
                           kHowToMakeOne);
  }
  if (const double bits = KeyEntropyBits(key); bits < kMinKeyEntropyBits) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", bits);
    return InvalidArgument(std::string("cluster_key is not random (about ") + text +
                           " bits of entropy, at least " + std::to_string(kMinKeyEntropyBits) +
                           " needed): " + kHowToMakeOne);
  }
  return Status::Ok();
}

Result<std::string> ReadKeyFile(const std::string& path) {
  AIAC_RETURN_IF_ERROR(CheckPrivateFile("cluster_key_file", path));
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return IoError("cannot read cluster_key_file " + path);
  const auto first = line.find_first_not_of(" \t\r");
  const auto last = line.find_last_not_of(" \t\r");
  if (first == std::string::npos) return InvalidArgument("cluster_key_file " + path + " is empty");
  return line.substr(first, last - first + 1);
}

Status FinishNetOptions(NetOptions& options) {
  if (!options.cluster_key_file.empty()) {
    if (!options.cluster_key.empty()) {
      return InvalidArgument("set cluster_key or cluster_key_file, not both");
    }
    AIAC_ASSIGN_OR_RETURN(auto key, ReadKeyFile(options.cluster_key_file));
    options.cluster_key = std::move(key);
  }
  AIAC_RETURN_IF_ERROR(CheckClusterKey(options.cluster_key));
  if (options.limits.max_frame_bytes < 1024) {
    return InvalidArgument("max_frame_bytes must be at least 1024");
  }
  auto tls = TlsContext::Make(options.cluster_key);
  if (!tls.ok()) return tls.status();
  options.tls = *tls;
  if (!options.budget) {
    const uint64_t mb = std::min<uint64_t>(options.memory_budget_mb, uint64_t{1} << 40);
    options.budget = std::make_shared<MemoryBudget>(mb > 0 ? mb << 20 : DefaultMemoryBudgetBytes());
  }
  return Status::Ok();
}

std::string NewClusterKey() { return Hex(RandomBytes(32)); }

}  // namespace aiac::net
