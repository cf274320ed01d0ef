// aiac-spawner: runs a user's job on daemons (run), and answers planning questions offline.
#include <CLI/CLI.hpp>

#include "spawner/keygen_command.h"
#include "spawner/map_command.h"
#include "spawner/plan_command.h"
#include "spawner/run_command.h"

int main(int argc, char** argv) {
  CLI::App app{"aiac spawner: run jobs on aiac daemons"};
  app.require_subcommand(1);
  aiac::spawner::RunArgs run_args;
  CLI::App* run = aiac::spawner::AddRunCommand(app, run_args);
  aiac::spawner::MapArgs map_args;
  CLI::App* map = aiac::spawner::AddMapCommand(app, map_args);
  aiac::spawner::PlanArgs plan_args;
  CLI::App* plan = aiac::spawner::AddPlanCommand(app, plan_args);
  aiac::spawner::KeygenArgs keygen_args;
  CLI::App* keygen = aiac::spawner::AddKeygenCommand(app, keygen_args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (run->parsed()) return aiac::spawner::RunCommand(run_args);
  if (map->parsed()) return aiac::spawner::MapCommand(map_args);
  if (plan->parsed()) return aiac::spawner::PlanCommand(plan_args);
  if (keygen->parsed()) return aiac::spawner::KeygenCommand(keygen_args);
  return 2;
}
