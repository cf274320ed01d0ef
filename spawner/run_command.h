// `aiac-spawner run JOB.toml [--supernode HOST:PORT ... | --local N [--local-supernodes K]]
// [--json OUT.json]`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "spawner/spawner_options.h"

namespace aiac::spawner {

struct RunArgs {
  std::string job_file;
  std::string config;
  // The spawner's options (spawner_options.h): their flags, then the config file under them.
  SpawnerOptions options;
  std::shared_ptr<OptionSet> declared;
  int local = 0;         // --local N; -1: --local without N (as many as --platform has nodes)
  std::string platform;  // --platform P.toml: an emulated platform, with --local
  double slowdown =
      0;  // --slowdown S (with --platform); 0: nodes / cores x the largest power, at least 1
  uint64_t platform_seed = 0;  // --platform-seed X (with --platform); 0: --kill-seed, else 1
  // --emulation (with --platform): "in-process" (the daemons stretch their own iterations and
  // frames) or "os" (each daemon runs inside the node of the platform `aiac-emulate up` made)
  std::string emulation = "in-process";
  bool shuffle_nodes =
      false;  // --shuffle-nodes (with --platform): daemons start in a seeded random order
  int local_supernodes = 1;
  std::string json;
  bool quiet = false;     // --quiet: no progress line
  std::string history;    // --history FILE: the convergence history as CSV (run_history.h)
  bool log_view = false;  // --log-view: where each task's time went (log_view.h)
  std::string trace;      // --trace FILE: a Chrome trace of the run (run_trace.h)
  std::string mapping = "maheve";
  bool sync = false;
  std::string balance = "dp";        // --balance dp|dm|off (live balancing, docs/balancing.md)
  std::string split = "power";       // --split power|equal|sm|sp (the tasks' shares before the run)
  std::string migration = "distpm";  // --migration distpm|greedy|spawner (how moved items travel)
  double kill_every = 0;             // fault injection: seconds between kills (0: none)
  uint32_t kill_count = 1;
  uint64_t kill_seed = 0;  // 0: from the clock
  // --state DIR: where the job's state goes (spawner/job_state.h); empty: under the job file's
  // folder, .aiac/jobs/JOB-ID (none with --local, whose daemons end with the spawner).
  std::string state;
  bool detach = false;            // --detach: print the job's id and go on in the background
  std::vector<std::string> argv;  // the arguments after "run", as given (stored for resume)
  // `resume`: the job file as the lost spawner read it (its state's copy), read in place of
  // job_file's content; empty: the file is read.
  std::string job_text;
};

// `aiac-spawner resume DIR [--json OUT] [--quiet] [--detach]`: takes over the job whose spawner
// was lost, from its state directory.
struct ResumeArgs {
  std::string dir;
  std::string json;
  bool quiet = false;
  bool detach = false;
};

// Adds the `run` subcommand to `app`, filling `args`.
CLI::App* AddRunCommand(CLI::App& app, RunArgs& args);
// Runs it; returns the process exit code (0 succeeded, 1 failed, 2 bad input, 130 interrupted).
// Reads the config file into args.options first.
int RunCommand(RunArgs& args);
CLI::App* AddResumeCommand(CLI::App& app, ResumeArgs& args);
// 0 when the job converged (or had ended already), 1 when it failed or cannot be resumed, 2 when
// DIR is not a job's state.
int ResumeCommand(const ResumeArgs& args);

}  // namespace aiac::spawner
