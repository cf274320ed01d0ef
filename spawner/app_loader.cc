#include "spawner/app_loader.h"

#include <filesystem>

#include "core/read_file.h"
#include "core/sha256.h"
#include "runtime/app_log.h"
#include "runtime/plugin_signature.h"
#include "spawner/child_process.h"

namespace aiac::spawner {

std::string DefaultPluginDir() {
  return (std::filesystem::path(SelfDirectory()).parent_path() / "plugins").string();
}

Result<LoadedApp> LoadAndPrepare(const JobSpec& job, const std::string& plugin_dir,
                                 bool shared_files, Logger log) {
  LoadedApp out;
  out.path = job.plugin.empty() ? plugin_dir + "/libaiac_app_" + job.app + ".so" : job.plugin;
  if (!std::filesystem::exists(out.path)) {
    if (job.plugin.empty()) {
      return InvalidArgument("unknown app '" + job.app + "' (no plugin " + out.path + ")");
    }
    return NotFound("plugin " + out.path + " does not exist");
  }
  auto bytes = ReadWholeFile(out.path);
  if (!bytes.ok()) return bytes.status();
  out.bytes = std::move(*bytes);
  out.sha256 = Sha256(out.bytes);
  // The publisher's signature, when it ships one beside the plugin: sent to the daemons as it is.
  if (const std::string sig = runtime::SignaturePathFor(out.path); std::filesystem::exists(sig)) {
    AIAC_ASSIGN_OR_RETURN(const runtime::PluginSignature s,
                          runtime::ReadSignatureFor(sig, out.sha256));
    out.signature = s.signature;
    out.signer = s.public_key;
  }
  auto plugin = runtime::Plugin::Load(out.path);
  if (!plugin.ok()) return plugin.status();
  out.plugin = *plugin;
  out.app = out.plugin->NewApp();
  if (out.app->name() != job.app) {
    return InvalidArgument("plugin " + out.path + " holds app '" + std::string(out.app->name()) +
                           "', not '" + job.app + "'");
  }
  out.params.values = job.params;
  out.params.tasks = job.tasks;
  out.params.base_dir = job.base_dir;
  out.params.shared_files = shared_files;
  out.params.logger = runtime::MakeAppLog(std::move(log), "job " + job.name + " (app)");
  auto plan = out.app->Prepare(out.params);
  if (!plan.ok()) return plan.status();
  if (plan->graph.size() != job.tasks || plan->slices.size() != job.tasks) {
    return Internal("app " + job.app + " planned " + std::to_string(plan->graph.size()) +
                    " tasks, not " + std::to_string(job.tasks));
  }
  out.plan = std::move(*plan);
  return out;
}

}  // namespace aiac::spawner
