// aiac-options-doc SECTION: prints the options table of SECTION as markdown, from the same
// declarations the programs read their files and flags with. tools/options_tables.py puts the
// tables into docs/ (--write) and checks that they are there unchanged (--check, a ctest).
//
// Sections: common (every program's network options), listening (the caps of a listening
// side), supernode, daemon, spawner (their own options), job (a job file's keys), cg (the CG
// app's [params]), swarm (the load generator's, tools/swarm.cc).
#include <cstdio>
#include <string>

#include "apps/cg/cg_params.h"
#include "daemon/daemon_options.h"
#include "spawner/job_spec.h"
#include "spawner/spawner_options.h"
#include "supernode/supernode_options.h"
#include "tools/swarm_options.h"

namespace {

using namespace aiac;

// The table of `section` from the options `Declare` binds to a default `Options`.
template <class Options, void (*Declare)(OptionSet&, Options&)>
std::string Table(const std::string& section) {
  Options options;
  OptionSet set;
  Declare(set, options);
  return set.MarkdownTable(section);
}

std::string CgTable() {
  std::string table = "| param | default | meaning |\n|---|---|---|\n";
  for (const auto& doc : cg::CgParamDocs()) {
    table += std::string("| `") + doc.key + "` | " + doc.fallback + " | " + doc.meaning + " |\n";
  }
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string section = argc == 2 ? argv[1] : "";
  std::string table;
  if (section == "common" || section == "listening" || section == "daemon") {
    // The daemon declares the common and listening options too, with the same defaults.
    table = Table<daemon::DaemonOptions, daemon::DeclareDaemonOptions>(section);
  } else if (section == "supernode") {
    table = Table<supernode::SupernodeOptions, supernode::DeclareSupernodeOptions>(section);
  } else if (section == "spawner") {
    table = Table<spawner::SpawnerOptions, spawner::DeclareSpawnerOptions>(section);
  } else if (section == "job") {
    table = Table<spawner::JobSpec, spawner::DeclareJobOptions>(section);
  } else if (section == "cg") {
    table = CgTable();
  } else if (section == "swarm") {
    table = Table<tools::SwarmOptions, tools::DeclareSwarmOptions>(section);
  } else {
    std::fprintf(
        stderr, "usage: aiac-options-doc common|listening|supernode|daemon|spawner|job|cg|swarm\n");
    return 2;
  }
  std::fputs(table.c_str(), stdout);
  return 0;
}
