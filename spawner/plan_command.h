// `aiac-spawner plan ring|distpm|balance --input F.json`: the migration and load-balancing planners
// offline, JSON in, JSON on stdout; bad input exits 2 with one line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace aiac::spawner {

struct PlanArgs {
  std::string input;
  CLI::App* ring = nullptr;
  CLI::App* distpm = nullptr;
  CLI::App* balance = nullptr;
};

CLI::App* AddPlanCommand(CLI::App& app, PlanArgs& args);
int PlanCommand(const PlanArgs& args);

}  // namespace aiac::spawner
