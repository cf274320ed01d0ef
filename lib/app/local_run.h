// An app's tasks run in one process, with in-memory links: how an app author tests an app
// without a cluster (part of the installed SDK, docs/app-api.md "Testing an app in one process").
// It calls the hooks as the runtime does, from one thread: Prepare, MakeTask for every task,
// iterations until every task stayed locally converged while the values sent before arrived,
// then Gather; a
// kUnconverged result tightens every task's test 10x and goes on, as the runtime does.
//
// Asynchronous mode picks the next task to iterate at random and delivers each value after a
// random delay (only the newest value of each sender counts, as on the network); synchronous mode
// iterates every task once per round on its dependencies' values of the round before. With
// `restore_every`, every so many iterations a task is saved (SaveState), thrown away and made
// again from its checkpoint (MakeTask, RestoreState, Tighten to the job's tightening so far),
// then fed its neighbours' newest values again: what a replacement after a failure does.
// Deterministic for a seed. No threads, no I/O but what the app does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/app.h"
#include "core/status.h"

namespace aiac::app {

struct LocalRunOptions {
  uint32_t tasks = 4;
  std::map<std::string, std::string> params;  // the job's [params]
  std::string base_dir = ".";                 // where relative paths in params start
  bool sync = false;
  uint64_t seed = 1;
  uint32_t max_delay = 3;      // async: a value arrives 0..max_delay task steps after it left
  uint64_t restore_every = 0;  // > 0: each task is restored from its checkpoint this often
  uint64_t max_iterations = 1000000;  // per task: reached, the run fails (it does not converge)
  // Lines the app writes to JobParams::logger; default: standard error.
  std::function<void(LogLevel, std::string_view)> log;
};

struct LocalRunResult {
  GatherReport report;
  std::vector<uint64_t> iterations;  // per task
  uint64_t restores = 0;
  uint64_t tightenings = 0;
};

// Runs `app`'s job as described above. An error is a hook's own (prefixed with the hook's name
// and the task), or the bound on iterations.
Result<LocalRunResult> RunLocally(App& app, const LocalRunOptions& options);

}  // namespace aiac::app
