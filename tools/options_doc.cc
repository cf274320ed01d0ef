// aiac-options-doc SECTION: prints the options table of SECTION as markdown, from the same
// declarations the programs read their files and flags with. tools/options_tables.py puts the
// tables into docs/ (--write) and checks that they are there unchanged (--check, a ctest).
//
// Sections: common (every program's network options), listening (the caps of a listening
// side), supernode, daemon, spawner (their own options), job (a job file's keys), cg (the CG
// app's [params]).
#include <cstdio>
#include <string>

#include "apps/cg/cg_params.h"
#include "daemon/daemon_options.h"
#include "spawner/job_spec.h"
#include "spawner/spawner_options.h"
#include "supernode/supernode_options.h"

int main(int argc, char** argv) {
  using namespace aiac;
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: aiac-options-doc common|listening|supernode|daemon|spawner|job|cg\n");
    return 2;
  }
  const std::string section = argv[1];
  if (section == "cg") {
    std::string table = "| param | default | meaning |\n|---|---|---|\n";
    for (const auto& doc : cg::CgParamDocs()) {
      table += std::string("| `") + doc.key + "` | " + doc.fallback + " | " + doc.meaning + " |\n";
    }
    std::fputs(table.c_str(), stdout);
    return 0;
  }
  // The daemon declares the common and listening options too, with the same defaults.
  daemon::DaemonOptions daemon_options;
  OptionSet daemon_set("aiac-daemon");
  daemon::DeclareDaemonOptions(daemon_set, daemon_options);
  supernode::SupernodeOptions supernode_options;
  OptionSet supernode_set("aiac-supernode");
  supernode::DeclareSupernodeOptions(supernode_set, supernode_options);
  spawner::SpawnerOptions spawner_options;
  OptionSet spawner_set("aiac-spawner run");
  spawner::DeclareSpawnerOptions(spawner_set, spawner_options);
  spawner::JobSpec job;
  OptionSet job_set("job file");
  spawner::DeclareJobOptions(job_set, job);

  const OptionSet* set = section == "supernode" ? &supernode_set
                         : section == "spawner" ? &spawner_set
                         : section == "job"     ? &job_set
                                                : &daemon_set;
  if (section != "common" && section != "listening" && section != "daemon" && set == &daemon_set) {
    std::fprintf(stderr, "aiac-options-doc: unknown section '%s'\n", section.c_str());
    return 2;
  }
  std::fputs(set->MarkdownTable(section).c_str(), stdout);
  return 0;
}
