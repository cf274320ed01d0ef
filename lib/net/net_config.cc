#include "net/net_config.h"

namespace aiac::net {

void ReadNetOptions(ConfigFile& file, NetOptions& options) {
  file.Get("cluster_key", options.cluster_key);
  int64_t max_frame = static_cast<int64_t>(options.limits.max_frame_bytes);
  file.GetPositive("max_frame_bytes", max_frame);
  options.limits.max_frame_bytes = static_cast<size_t>(max_frame);
  int64_t hs = options.handshake_timeout.count();
  file.GetPositive("handshake_timeout_ms", hs);
  options.handshake_timeout = std::chrono::milliseconds(hs);
}

Status CheckNetOptions(const NetOptions& options) {
  if (options.cluster_key.empty()) {
    return InvalidArgument("cluster_key is not set (put it in the config file)");
  }
  if (options.limits.max_frame_bytes < 1024) {
    return InvalidArgument("max_frame_bytes must be at least 1024");
  }
  return Status::Ok();
}

}  // namespace aiac::net
