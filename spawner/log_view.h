// `run --log-view`: after the summary, where each task's time went and what it exchanged, in the
// spirit of PETSc's -log_view (docs/user-guide.md, "Where the time went"). From the
// runtime's own counters (runtime::TaskProfile), added up over the daemons a task ran on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/task_runner.h"
#include "spawner/run_summary.h"

namespace aiac::spawner {

// A row per task and a total: seconds computing, waiting for values, in checkpoints and in
// moves (each with its share of the four), messages and bytes sent and received.
std::string LogViewText(const RunSummary& summary);

// The summary's per_task[].profile: compute_s, wait_s, checkpoint_s, move_s, messages_sent,
// bytes_sent, messages_received, bytes_received.
nlohmann::json ProfileJson(const runtime::TaskProfile& profile);

}  // namespace aiac::spawner
