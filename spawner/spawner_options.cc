#include "spawner/spawner_options.h"

#include "core/config.h"
#include "net/net_config.h"

namespace aiac::spawner {

Status LoadSpawnerOptions(const std::string& path, SpawnerOptions& o) {
  auto file = ConfigFile::Load(path);
  if (!file.ok()) return file.status();
  std::string one;
  std::vector<std::string> list;
  file->Get("supernode", one);
  file->Get("supernodes", list);
  file->GetPositive("wait_daemons_ms", o.wait_daemons_ms);
  file->Get("spares", o.spares);
  file->GetPositive("progress_ms", o.progress_ms);
  file->GetPositive("failure_timeout_ms", o.failure_timeout_ms);
  file->GetPositive("setup_timeout_ms", o.setup_timeout_ms);
  file->Get("local_log_level", o.local_log_level);
  file->Get("plugin_dir", o.plugin_dir);
  file->GetPath("signing_key_file", o.signing_key_file);
  file->Get("log_level", o.log_level);
  net::ReadNetOptions(*file, o.net);
  AIAC_RETURN_IF_ERROR(file->Finish());
  if (!one.empty() && !list.empty()) {
    return InvalidArgument(path + ": give either 'supernode' or 'supernodes', not both");
  }
  if (!one.empty()) o.supernodes = {one};
  if (!list.empty()) o.supernodes = list;
  if (o.spares < 0) return InvalidArgument(path + ": option 'spares' must not be negative");
  return Status::Ok();
}

}  // namespace aiac::spawner
