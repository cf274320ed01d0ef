#include "supernode/supernode_options.h"

#include "core/config.h"
#include "net/net_config.h"

namespace aiac::supernode {

Status LoadSupernodeOptions(const std::string& path, SupernodeOptions& o) {
  auto file = ConfigFile::Load(path);
  if (!file.ok()) return file.status();
  file->Get("id", o.id);
  file->Get("listen", o.listen);
  file->Get("peers", o.peers);
  file->Get("data_dir", o.data_dir);
  file->GetPositive("failure_timeout_ms", o.failure_timeout_ms);
  file->GetPositive("digest_interval_ms", o.digest_interval_ms);
  file->GetPositive("grant_lease_ms", o.grant_lease_ms);
  file->GetPositive("forward_timeout_ms", o.forward_timeout_ms);
  file->Get("log_level", o.log_level);
  net::ReadNetOptions(*file, o.net);
  net::ReadServerLimits(*file, o.limits);
  return file->Finish();
}

}  // namespace aiac::supernode
