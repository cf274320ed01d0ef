// aiac-emulate: lays a platform file out on this host (docs/emulation.md, "OS-level
// emulation"), one network namespace and CPU cgroup per node, links through a user-space switch,
// so that any program (aiac's daemons, MPI ranks) can run as a node of it.
#include <CLI/CLI.hpp>
#include <thread>

#include "core/usage_error.h"
#include "emulate/emulate_commands.h"
#include "net/version.h"

int main(int argc, char** argv) {
  using namespace aiac::emulate;
  CLI::App app{"aiac-emulate: a platform file's nodes and links, on this host, for any program"};
  app.set_version_flag("--version", aiac::net::VersionLine("aiac-emulate"));
  app.require_subcommand(1);

  auto* up = app.add_subcommand("up", "Build the platform's nodes and links and start them");
  std::string platform_file;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  uint64_t seed = 1;
  up->add_option("platform", platform_file, "Platform file (conf/platforms/*.toml)")->required();
  up->add_option("--cores", cores, "Host cores to share among the nodes. Default: all of them")
      ->check(CLI::Range(1, 4096));
  up->add_option("--seed", seed, "Seed of the background loads' draws. Default: 1");

  auto* down = app.add_subcommand("down", "Remove a platform (idempotent)");
  std::string down_what;
  bool all = false;
  down->add_option("platform", down_what, "Platform name or platform file");
  down->add_flag("--all", all, "Remove every platform aiac-emulate made");

  auto* exec = app.add_subcommand("exec", "Run a command as a node: NODE -- CMD [ARGS...]");
  std::string node, platform;
  exec->add_option("node", node, "Node id (\"<cluster>-<k>\") or address")->required();
  exec->add_option("--platform", platform, "Platform name; needed when several are up");
  exec->prefix_command();

  // Parsed by hand (below): a launcher's words must reach the node untouched.
  app.add_subcommand("rsh",
                     "As ssh, for launchers (Open MPI's plm_rsh_agent): [-options] HOST "
                     "COMMAND... runs COMMAND as that node");

  auto* cpu = app.add_subcommand(
      "cpu", "Set a node's CPU quota to FACTOR times its share while the platform is up");
  double factor = 1;
  cpu->add_option("node", node, "Node id (\"<cluster>-<k>\") or address")->required();
  cpu->add_option("factor", factor, "Times the node's share from the platform file (1: restore)")
      ->required();
  cpu->add_option("--platform", platform, "Platform name; needed when several are up");

  auto* hostfile = app.add_subcommand("hostfile", "Print an MPI hostfile of the platform's nodes");
  std::string hostfile_platform;
  hostfile->add_option("platform", hostfile_platform, "Platform name; needed when several are up");

  auto* status = app.add_subcommand("status", "Show the platforms that are up");
  std::string status_platform;
  status->add_option("platform", status_platform, "Only this platform");

  auto* burn = app.add_subcommand("burn", "Spin for SECONDS and print the CPU share received");
  double seconds = 2;
  burn->add_option("seconds", seconds, "Wall seconds to spin. Default: 2");

  // Internal: the processes `up` starts.
  auto* sw = app.add_subcommand("switch", "")->group("");
  std::string state_dir;
  sw->add_option("dir", state_dir)->required();
  auto* load = app.add_subcommand("load", "")->group("");
  uint64_t load_seed = 1;
  load->add_option("dir", state_dir)->required();
  load->add_option("node", node)->required();
  load->add_option("seed", load_seed)->required();

  if (argc >= 2 && std::string_view(argv[1]) == "rsh")
    return Rsh(std::vector<std::string>(argv + 2, argv + argc));
  // `exec NODE -- CMD...`: what follows "--" is the command, whatever it looks like.
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      command.assign(argv + i + 1, argv + argc);
      argc = i;
      break;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return aiac::UsageError(app, e, argc, argv);
  }
  if (*up) return Up(platform_file, cores, seed);
  if (*down) {
    if (!all && down_what.empty()) {
      std::fprintf(stderr, "aiac-emulate: down needs a platform name or file, or --all\n");
      return 2;
    }
    return Down(down_what, all);
  }
  if (*exec) {
    if (command.empty()) command = exec->remaining();
    return Exec(platform, node, command);
  }
  if (*cpu) return SetCpu(platform, node, factor);
  if (*hostfile) return PrintHostfile(hostfile_platform);
  if (*status) return PrintStatus(status_platform);
  if (*burn) return Burn(seconds);
  if (*sw) return RunSwitch(state_dir, 3);
  if (*load) return RunLoad(state_dir, node, load_seed);
  return 2;
}
