// `aiac-spawner run JOB.toml [--supernode HOST:PORT | --local N] [--json OUT.json]`.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace aiac::spawner {

struct RunArgs {
  std::string job_file;
  std::string config;
  std::string supernode;
  int local = 0;
  std::string json;
  std::string log_level;
  std::string mapping = "maheve";
  bool sync = false;
};

// Adds the `run` subcommand to `app`, filling `args`.
CLI::App* AddRunCommand(CLI::App& app, RunArgs& args);
// Runs it; returns the process exit code (0 succeeded, 1 failed, 2 bad input, 130 interrupted).
int RunCommand(const RunArgs& args);

}  // namespace aiac::spawner
