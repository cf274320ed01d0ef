// A job file (TOML): which app, how many tasks, its parameters.
//
//   name = "ring-demo"      # job name (letters, digits, '-', '_')
//   app = "ring"            # the app to run
//   tasks = 4               # task count; with --local N it may be left out (= N)
//   timeout_s = 300         # the run fails if it has not finished by then
//   plugin = "libx.so"      # the app's plugin file (default: the installed plugin of `app`)
//   backups = 2             # daemons keeping each task's checkpoints (0: no checkpoints)
//   checkpoint_seconds = 1  # a checkpoint at least this often (0: not by time)
//   checkpoint_every = 0    # and every this many iterations (0: not by iterations)
//   memory_mb = 32768       # each task's app process: address space limit (0: none)
//   cpu_seconds = 0         # ... CPU time limit (0: none)
//   app_stall_seconds = 300 # ... a call into the app longer than this: hung (0: no limit)
//   value_log_mb = 256      # --sync: MiB of sent values kept per neighbour, to replace it
//   orphan_seconds = 300    # tasks run on this long when the spawner is lost (resume)
//   spawner_timeout_s = 30  # a spawner silent this long counts as lost (0: only a closed link)
//   [params]                # app parameters, passed to every task as text
//   rounds = 1000
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "core/options.h"
#include "core/status.h"

namespace aiac::spawner {

// Longest timeout_s accepted: 30 days.
inline constexpr double kMaxTimeoutSeconds = 30 * 24 * 3600;

struct JobSpec {
  std::string name;
  std::string app;
  uint32_t tasks = 0;  // 0: not given
  std::chrono::duration<double> timeout{300};
  std::string plugin;  // relative to the job file's folder
  uint32_t backups = 2;
  std::chrono::duration<double> checkpoint_period{1};  // 0: not by time
  uint64_t checkpoint_every = 0;                       // iterations; 0: not by iterations
  // Limits on each task's app process (daemon/app_child.h): address space, CPU time (0: none),
  // and how long one call into the app may take before it counts as hung (0: no limit).
  uint64_t memory_mb = 32768;
  uint64_t cpu_seconds = 0;
  std::chrono::duration<double> app_stall{300};
  // Synchronous runs: MiB of the values a task sent that it keeps for each receiver, so that a
  // lost receiver can be restored from its checkpoint (daemon/value_log.h); 0: none, and a lost
  // daemon ends a synchronous run.
  uint64_t value_log_mb = 256;
  // When the spawner's link drops, the tasks run on this long, waiting for `aiac-spawner
  // resume` (daemon/task_host.h Orphan); 0: they end at once.
  uint64_t orphan_seconds = 300;
  // A spawner silent this long (its SpawnerAlive every second missing) counts as lost for the
  // orphan wait although its link is open; 0: only a closed link counts.
  uint64_t spawner_timeout_s = 30;
  std::string base_dir;  // the job file's directory
  std::string text;      // the job file as read: the state keeps it, a resumed run reads this copy
  std::map<std::string, std::string> params;
};

// The shortest spawner_timeout_s but 0: three of the spawner's one-a-second SpawnerAlive.
inline constexpr uint64_t kMinSpawnerTimeoutSeconds = 3;

// Declares the job file's keys (its [params] are the app's), bound to `job`.
void DeclareJobOptions(OptionSet& set, JobSpec& job);

// Reads and checks a job file; every problem is one line naming the file and the key.
Result<JobSpec> LoadJobSpec(const std::string& path);
// The same for `text` taken as the content of the job file `path` (its copy in a spawner's state):
// relative paths are from path's folder, whether or not the file is still there.
Result<JobSpec> LoadJobSpecText(const std::string& path, const std::string& text);

}  // namespace aiac::spawner
