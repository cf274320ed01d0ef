#include "daemon/daemon_options.h"

#include "core/config.h"
#include "net/net_config.h"
#include "runtime/code_signing.h"

namespace aiac::daemon {

Status LoadDaemonOptions(const std::string& path, DaemonOptions& o) {
  auto file = ConfigFile::Load(path);
  if (!file.ok()) return file.status();
  file->Get("id", o.id);
  file->Get("supernodes", o.supernodes);
  file->Get("listen", o.listen);
  file->Get("cluster", o.cluster);
  file->Get("power", o.power);
  file->Get("cores", o.cores);
  file->Get("data_dir", o.data_dir);
  file->GetPositive("heartbeat_ms", o.heartbeat_ms);
  file->GetPositive("progress_ms", o.progress_ms);
  file->Get("trusted_keys", o.trusted_keys);
  file->Get("log_level", o.log_level);
  net::ReadNetOptions(*file, o.net);
  net::ReadServerLimits(*file, o.limits);
  AIAC_RETURN_IF_ERROR(file->Finish());
  if (o.power < 0) return InvalidArgument(path + ": option 'power' must not be negative");
  if (o.cores < 0) return InvalidArgument(path + ": option 'cores' must not be negative");
  for (const auto& key : o.trusted_keys) {
    if (auto raw = runtime::ParsePublicKey(key); !raw.ok()) {
      return InvalidArgument(path + ": option 'trusted_keys': " + raw.status().message());
    }
  }
  return Status::Ok();
}

}  // namespace aiac::daemon
