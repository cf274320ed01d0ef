#include "net/net_config.h"

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

void ReadNetOptions(ConfigFile& file, NetOptions& options) {
  file.Get("cluster_key", options.cluster_key);
  file.GetPath("cluster_key_file", options.cluster_key_file);
  int64_t max_frame = static_cast<int64_t>(options.limits.max_frame_bytes);
  file.GetPositive("max_frame_bytes", max_frame);
  options.limits.max_frame_bytes = static_cast<size_t>(max_frame);
  auto max_message = static_cast<int64_t>(options.limits.max_message_bytes);
  file.GetPositive("max_message_bytes", max_message);
  options.limits.max_message_bytes = static_cast<uint64_t>(max_message);
  int64_t hs = options.handshake_timeout.count();
  file.GetPositive("handshake_timeout_ms", hs);
  options.handshake_timeout = std::chrono::milliseconds(hs);
}

void ReadServerLimits(ConfigFile& file, ServerLimits& limits) {
  for (auto [key, field] :
       {std::pair{"max_connections", &limits.max_connections},
        std::pair{"max_handshakes", &limits.max_handshakes},
        std::pair{"max_handshakes_per_address", &limits.max_handshakes_per_address}}) {
    int64_t value = static_cast<int64_t>(*field);
    file.GetPositive(key, value);
    *field = static_cast<size_t>(value);
  }
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
    auto key = ReadKeyFile(options.cluster_key_file);
    if (!key.ok()) return key.status();
    options.cluster_key = std::move(*key);
  }
  AIAC_RETURN_IF_ERROR(CheckClusterKey(options.cluster_key));
  if (options.limits.max_frame_bytes < 1024) {
    return InvalidArgument("max_frame_bytes must be at least 1024");
  }
  auto tls = TlsContext::Make(options.cluster_key);
  if (!tls.ok()) return tls.status();
  options.tls = *tls;
  return Status::Ok();
}

std::string NewClusterKey() { return Hex(RandomBytes(32)); }

}  // namespace aiac::net
