// The commands an operator runs against a deployment that is up, asking a super-node as a
// spawner would (its credentials: the options of conf/spawner.toml):
//   `aiac-spawner status [--supernode HOST:PORT] [--config F] [--json] [--job ID]`: the daemons
//   and running jobs the super-node and its peers know (federation_status.h);
//   `aiac-spawner cancel ID [--supernode ...]`: ends a running job started anywhere, as Ctrl-C at
//   its spawner would (status aborted, last iterate written, daemons released).
// Exit 0 on an answer, 1 when no super-node answered, refused the credentials, or knows no such
// job, 2 on a usage error; every error is one line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "core/options.h"
#include "spawner/spawner_options.h"

namespace aiac::spawner {

struct AskArgs {
  std::string config;
  SpawnerOptions options;
  std::shared_ptr<OptionSet> declared;
};

struct StatusArgs : AskArgs {
  bool json = false;
  std::string job;  // one job's tasks
};

struct CancelArgs : AskArgs {
  std::string job;
};

CLI::App* AddStatusCommand(CLI::App& app, StatusArgs& args);
int StatusCommand(StatusArgs& args);
CLI::App* AddCancelCommand(CLI::App& app, CancelArgs& args);
int CancelCommand(CancelArgs& args);

}  // namespace aiac::spawner
