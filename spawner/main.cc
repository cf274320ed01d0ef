// aiac-spawner: runs a user's job on daemons (run), and answers planning questions offline.
#include <CLI/CLI.hpp>
#include <string>

#include "core/huge_pages.h"
#include "core/usage_error.h"
#include "net/version.h"
#include "spawner/authority_commands.h"
#include "spawner/keygen_command.h"
#include "spawner/map_command.h"
#include "spawner/new_app_command.h"
#include "spawner/plan_command.h"
#include "spawner/plot_command.h"
#include "spawner/run_command.h"
#include "spawner/sign_command.h"
#include "spawner/status_command.h"

int main(int argc, char** argv) {
  // Before anything is opened: the matrix an app reads in Prepare, and the local daemons
  // started here, get their large arrays in huge pages.
  aiac::ReexecWithHugePageMalloc(argv);
  CLI::App app{"aiac spawner: run jobs on aiac daemons"};
  app.set_version_flag("--version", aiac::net::VersionLine("aiac-spawner"));
  app.require_subcommand(1);
  aiac::spawner::RunArgs run_args;
  CLI::App* run = aiac::spawner::AddRunCommand(app, run_args);
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "run") continue;
    run_args.argv.assign(argv + i + 1, argv + argc);  // kept for `resume`
    break;
  }
  aiac::spawner::ResumeArgs resume_args;
  CLI::App* resume = aiac::spawner::AddResumeCommand(app, resume_args);
  aiac::spawner::MapArgs map_args;
  CLI::App* map = aiac::spawner::AddMapCommand(app, map_args);
  aiac::spawner::PlanArgs plan_args;
  CLI::App* plan = aiac::spawner::AddPlanCommand(app, plan_args);
  aiac::spawner::KeygenArgs keygen_args;
  CLI::App* keygen = aiac::spawner::AddKeygenCommand(app, keygen_args);
  aiac::spawner::CertifyArgs certify_args;
  CLI::App* certify = aiac::spawner::AddCertifyCommand(app, certify_args);
  aiac::spawner::EnrollTokenArgs enroll_args;
  CLI::App* enroll = aiac::spawner::AddEnrollTokenCommand(app, enroll_args);
  aiac::spawner::RevokeArgs revoke_args;
  CLI::App* revoke = aiac::spawner::AddRevokeCommand(app, revoke_args);
  aiac::spawner::SignArgs sign_args;
  CLI::App* sign = aiac::spawner::AddSignCommand(app, sign_args);
  aiac::spawner::StatusArgs status_args;
  CLI::App* status = aiac::spawner::AddStatusCommand(app, status_args);
  aiac::spawner::CancelArgs cancel_args;
  CLI::App* cancel = aiac::spawner::AddCancelCommand(app, cancel_args);
  aiac::spawner::PlotArgs plot_args;
  CLI::App* plot_cmd = aiac::spawner::AddPlotCommand(app, plot_args);
  aiac::spawner::NewAppArgs new_app_args;
  CLI::App* new_app = aiac::spawner::AddNewAppCommand(app, new_app_args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return aiac::UsageError(app, e, argc, argv);  // 0 for --help, --version; else 2
  }
  if (run->parsed()) return aiac::spawner::RunCommand(run_args);
  if (resume->parsed()) return aiac::spawner::ResumeCommand(resume_args);
  if (map->parsed()) return aiac::spawner::MapCommand(map_args);
  if (plan->parsed()) return aiac::spawner::PlanCommand(plan_args);
  if (keygen->parsed()) return aiac::spawner::KeygenCommand(keygen_args);
  if (certify->parsed()) return aiac::spawner::CertifyCommand(certify_args);
  if (enroll->parsed()) return aiac::spawner::EnrollTokenCommand(enroll_args);
  if (revoke->parsed()) return aiac::spawner::RevokeCommand(revoke_args);
  if (sign->parsed()) return aiac::spawner::SignCommand(sign_args);
  if (status->parsed()) return aiac::spawner::StatusCommand(status_args);
  if (cancel->parsed()) return aiac::spawner::CancelCommand(cancel_args);
  if (plot_cmd->parsed()) return aiac::spawner::PlotCommand(plot_args);
  if (new_app->parsed()) return aiac::spawner::NewAppCommand(new_app_args);
  return 2;
}
