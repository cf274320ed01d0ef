// Finding and loading a job's app plugin at the spawner, and preparing the job with it before
// any daemon is used. The plugin file is `plugin` from the job file, else
// PLUGIN_DIR/libaiac_app_<app>.so (PLUGIN_DIR: the spawner's `plugin_dir` option, by default
// the plugins/ folder next to the spawner's bin/ folder); its signature, when the publisher
// signed it, PLUGIN.sig beside it (runtime/plugin_signature.h).
#pragma once

#include <memory>
#include <string>

#include "app/app.h"
#include "core/logging.h"
#include "core/status.h"
#include "runtime/plugin.h"
#include "spawner/job_spec.h"

namespace aiac::spawner {

struct LoadedApp {
  std::string path;    // the plugin file
  std::string bytes;   // its content, sent to daemons that lack it
  std::string sha256;  // raw 32 bytes
  // Ed25519 over sha256: the publisher's (PLUGIN.sig beside the plugin), or made at submit with
  // --sign-with, or by a --local cluster's own key; empty when unsigned.
  std::string signature;
  std::string signer;                       // the public key (32 raw bytes) that made `signature`
  std::shared_ptr<runtime::Plugin> plugin;  // keeps the code loaded
  std::unique_ptr<app::App> app;            // prepared, kept for Gather
  app::JobParams params;
  app::JobPlan plan;
};

std::string DefaultPluginDir();

// Loads the plugin, checks the app's name, and runs Prepare (parameters, input files, TIG).
// `shared_files`: the daemons will see this host's files (app::JobParams::shared_files). The
// app's log lines (JobParams::logger) go to `log` (nowhere when null).
Result<LoadedApp> LoadAndPrepare(const JobSpec& job, const std::string& plugin_dir,
                                 bool shared_files = false, Logger log = nullptr);

}  // namespace aiac::spawner
