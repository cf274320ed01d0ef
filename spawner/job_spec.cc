#include "spawner/job_spec.h"

#include <charconv>
#include <filesystem>

#include "core/config.h"
#include "core/read_file.h"

namespace aiac::spawner {
namespace {

bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

// The job's [params], each as text for the app: strings as they are, integers whole, other
// numbers as the shortest text that reads back to the same double, booleans as true or false.
Status ReadParams(const std::string& path, const toml::table& params,
                  std::map<std::string, std::string>& out) {
  for (const auto& [pk, pv] : params) {
    std::string text;
    if (auto s = pv.value_exact<std::string>()) {
      text = *s;
    } else if (auto i = pv.value_exact<int64_t>()) {
      text = std::to_string(*i);
    } else if (auto d = pv.value_exact<double>()) {
      text = NumberText(*d);
    } else if (auto b = pv.value_exact<bool>()) {
      text = *b ? "true" : "false";
    } else {
      return InvalidArgument(path + ": 'params." + std::string(pk.str()) +
                             "' must be a string, number or boolean");
    }
    out[std::string(pk.str())] = std::move(text);
  }
  return Status::Ok();
}

}  // namespace

void DeclareJobOptions(OptionSet& set, JobSpec& job) {
  set.Section("job");
  set.WithoutFlags();
  set.Text("name", job.name, "the job's name: 1-64 letters, digits, '-' or '_' (required)");
  set.Text("app", job.app, "the app to run (required)");
  set.Integer("tasks", job.tasks, 1, 1000000, "task count; with `--local N` it may be left out")
      .Default("N of `--local N`");
  set.Duration("timeout_s", job.timeout, 0.001, kMaxTimeoutSeconds,
               "the run fails if it has not finished by then");
  set.Path("plugin", job.plugin, "the app's plugin file, relative to the job file")
      .Default("the installed plugin of `app`");
  set.Integer("backups", job.backups, 0, 16,
              "daemons keeping each task's checkpoints (0: no checkpoints)");
  set.Duration("checkpoint_seconds", job.checkpoint_period, 0, 86400,
               "a checkpoint at least this often (0: not by time)");
  set.Integer("checkpoint_every", job.checkpoint_every, 0, 1000000000,
              "and one every this many iterations (0: not by iterations)");
  set.Integer("memory_mb", job.memory_mb, 0, 1 << 30,
              "the address space each task's app process may use, in MiB; past it allocations "
              "fail, which ends the task as an app crash (0: no limit)");
  set.Integer("cpu_seconds", job.cpu_seconds, 0, 1000000000,
              "the CPU time each task's app process may use on one daemon; past it the process "
              "is killed (SIGXCPU), an app crash (0: no limit)");
  set.Duration("app_stall_seconds", job.app_stall, 0, 86400,
               "one call into the app (an iteration, building the task, a checkpoint's state) "
               "taking longer than this counts as hung: the app's process is killed, an app "
               "crash (0: no limit)");
  set.Integer("value_log_mb", job.value_log_mb, 0, 1 << 30,
              "synchronous runs (`--sync`): the values each task keeps of what it sent to each "
              "neighbour since that neighbour's newest checkpoint, in MiB, so that a lost "
              "neighbour can be restored from it; past it the oldest go, and a replacement that "
              "needs them ends the run (0: none kept; a lost daemon ends a synchronous run)");
  set.Integer("orphan_seconds", job.orphan_seconds, 0, 7 * 24 * 3600,
              "when the spawner is lost, each task runs on and checkpoints this long, waiting "
              "for `aiac-spawner resume` to take the job over, then ends and its daemon is free "
              "again (0: the tasks end at once)");
  set.Integer("spawner_timeout_s", job.spawner_timeout_s, 0, 7 * 24 * 3600,
              "a spawner that sends its tasks' daemons nothing this long (suspended, its host "
              "asleep or cut off) counts as lost although its link is open: the tasks run on "
              "for `orphan_seconds`, go on under it if it speaks again meanwhile, and end then "
              "(0: only a closed link counts; else at least 3, the spawner speaks every second)");
}

Result<JobSpec> LoadJobSpec(const std::string& path) {
  if (!std::filesystem::exists(path)) return NotFound("job file " + path + " does not exist");
  AIAC_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path));
  return LoadJobSpecText(path, text);
}

Result<JobSpec> LoadJobSpecText(const std::string& path, const std::string& text) {
  AIAC_ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::ParseAs(text, path));
  JobSpec job;
  job.text = text;
  OptionSet set;
  DeclareJobOptions(set, job);
  if (const toml::table* params = file.GetTable("params")) {
    AIAC_RETURN_IF_ERROR(ReadParams(path, *params, job.params));
  }
  AIAC_RETURN_IF_ERROR(set.Read(file));
  if (job.name.empty()) return InvalidArgument(path + ": 'name' is missing");
  if (!ValidName(job.name)) {
    return InvalidArgument(path + ": option 'name' must be 1-64 letters, digits, '-' or '_'");
  }
  if (job.app.empty()) return InvalidArgument(path + ": 'app' is missing");
  if (job.spawner_timeout_s > 0 && job.spawner_timeout_s < kMinSpawnerTimeoutSeconds) {
    return InvalidArgument(path + ": option 'spawner_timeout_s' must be 0 or at least " +
                           std::to_string(kMinSpawnerTimeoutSeconds) +
                           " (the spawner speaks every second)");
  }
  if (file.Has("plugin") && job.plugin.empty()) {
    return InvalidArgument(path + ": option 'plugin' must be a file name");
  }
  job.base_dir = std::filesystem::absolute(path).parent_path().string();
  return job;
}

}  // namespace aiac::spawner
