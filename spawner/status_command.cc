#include "spawner/status_command.h"

#include <cstdio>

#include "core/printable.h"
#include "net/net_config.h"
#include "spawner/federation_status.h"
#include "spawner/supernode_query.h"

namespace aiac::spawner {

namespace {

// How long a super-node has to answer once reached.
constexpr std::chrono::seconds kAnswerTime{10};

void DeclareAsk(CLI::App& cmd, AskArgs& args) {
  cmd.add_option("--config", args.config,
                 "spawner options file, for the super-nodes and the credentials (see "
                 "conf/spawner.toml)");
  args.declared = std::make_shared<OptionSet>();
  DeclareSpawnerOptions(*args.declared, args.options);
  args.declared->AddFlags(cmd);
}

int Fail(const std::string& why, int code) {
  std::fprintf(stderr, "aiac-spawner: %s\n", why.c_str());
  return code;
}

// The options loaded and finished, and the super-nodes parsed; 2 and a line when they are bad.
int Prepare(AskArgs& args, std::vector<Endpoint>& supernodes) {
  if (Status s = args.declared->Load(args.config); !s.ok()) return Fail(s.message(), 2);
  if (Status s = net::FinishNetOptions(args.options.net, proto::Role::SPAWNER); !s.ok())
    return Fail(s.message(), 2);
  for (const auto& text : args.options.supernodes) {
    auto ep = ParseEndpoint(text);
    if (!ep.ok()) return Fail(ep.status().message(), 2);
    supernodes.push_back(*ep);
  }
  return 0;
}

}  // namespace

CLI::App* AddStatusCommand(CLI::App& app, StatusArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "status", "list the daemons and running jobs a super-node and its peers know");
  DeclareAsk(*cmd, args);
  cmd->add_flag("--json", args.json, "print a JSON object instead of tables");
  cmd->add_option("--job", args.job, "show this running job's tasks");
  return cmd;
}

int StatusCommand(StatusArgs& args) {
  std::vector<Endpoint> supernodes;
  if (int bad = Prepare(args, supernodes); bad != 0) return bad;
  auto answer = AskSupernode(
      supernodes, args.options.net, SpawnerId(args.options.net),
      [](proto::Envelope::Builder e) { e.initStatusQuery().setRequestId(1); },
      [](proto::Envelope::Reader e) { return e.isStatusReport(); }, kAnswerTime);
  if (!answer.ok()) return Fail(answer.status().message(), 1);
  const FederationStatus status = ReadStatusReport(answer->message->root().getStatusReport());
  if (!args.job.empty()) {
    for (const auto& job : status.jobs) {
      if (job.id != args.job) continue;
      if (args.json) {
        std::printf("%s\n", ToJson(job).dump(2).c_str());
      } else {
        std::printf("%s", ToText(job).c_str());
      }
      return 0;
    }
    return Fail("no running job " + args.job + " is known to super-node " + status.supernode, 1);
  }
  if (args.json) {
    std::printf("%s\n", ToJson(status).dump(2).c_str());
  } else {
    std::printf("%s", ToText(status).c_str());
  }
  return 0;
}

CLI::App* AddCancelCommand(CLI::App& app, CancelArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "cancel", "end a running job, wherever its spawner is, as Ctrl-C there would");
  cmd->add_option("job", args.job, "the job's id (as `status` lists it)")->required();
  DeclareAsk(*cmd, args);
  return cmd;
}

int CancelCommand(CancelArgs& args) {
  std::vector<Endpoint> supernodes;
  if (int bad = Prepare(args, supernodes); bad != 0) return bad;
  auto answer = AskSupernode(
      supernodes, args.options.net, SpawnerId(args.options.net),
      [&](proto::Envelope::Builder e) {
        auto c = e.initCancelJob();
        c.setRequestId(1);
        c.setJob(args.job);
      },
      [](proto::Envelope::Reader e) { return e.isCancelAnswer(); }, kAnswerTime);
  if (!answer.ok()) return Fail(answer.status().message(), 1);
  auto a = answer->message->root().getCancelAnswer();
  if (a.getError().size() > 0) return Fail(Printable(a.getError().cStr(), 300, false), 1);
  std::printf("job %s: its spawner was told to stop it (super-node %s)\n", args.job.c_str(),
              Printable(a.getSupernodeId().cStr(), 128, false).c_str());
  return 0;
}

}  // namespace aiac::spawner
