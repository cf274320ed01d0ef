#include "net/job_status.h"

#include <cmath>

#include "core/names.h"
#include "core/printable.h"

namespace aiac::net {

void ToProto(const JobStatus& j, proto::JobStatus::Builder out) {
  out.setId(j.id);
  out.setApp(j.app);
  out.setSpawnerId(j.spawner_id);
  out.setSpawnerAddress(j.spawner_address);
  out.setTasks(j.tasks);
  out.setDaemons(j.daemons);
  out.setStartedUnix(j.started_unix);
  out.setPhase(j.phase);
  out.setMinIteration(j.min_iteration);
  out.setMaxIteration(j.max_iteration);
  out.setMaxChange(j.max_change);
  out.setFailures(j.failures);
  out.setReplacements(j.replacements);
  out.setMoves(j.moves);
  out.setEtaSeconds(j.eta_seconds);
  out.setSupernodeId(j.supernode);
  auto tasks = out.initTaskList(static_cast<unsigned>(j.task_list.size()));
  for (size_t i = 0; i < j.task_list.size(); ++i) {
    const TaskStatus& t = j.task_list[i];
    auto b = tasks[static_cast<unsigned>(i)];
    b.setTask(t.task);
    b.setDaemonId(t.daemon);
    b.setIteration(t.iteration);
    b.setChange(t.change);
    b.setIncarnation(t.incarnation);
    b.setCheckpoints(t.checkpoints);
    b.setReportAgeMs(t.report_age_ms);
  }
}

Result<JobStatus> FromProto(proto::JobStatus::Reader in) {
  JobStatus j;
  j.id = in.getId().cStr();
  j.app = in.getApp().cStr();
  j.phase = in.getPhase().cStr();
  AIAC_RETURN_IF_ERROR(CheckName("job id", j.id));
  AIAC_RETURN_IF_ERROR(CheckName("app name", j.app));
  AIAC_RETURN_IF_ERROR(CheckName("job phase", j.phase));
  // Filled in by super-nodes: names, or empty before the first one did.
  j.spawner_id = in.getSpawnerId().cStr();
  j.spawner_address = in.getSpawnerAddress().cStr();
  j.supernode = in.getSupernodeId().cStr();
  for (const auto* field : {&j.spawner_id, &j.supernode}) {
    if (!field->empty()) AIAC_RETURN_IF_ERROR(CheckName("node id", *field));
  }
  if (j.spawner_address.size() > kMaxNameBytes) {
    return InvalidArgument("job " + Printable(j.id) + ": spawner address is too long");
  }
  j.tasks = in.getTasks();
  j.daemons = in.getDaemons();
  j.started_unix = in.getStartedUnix();
  j.min_iteration = in.getMinIteration();
  j.max_iteration = in.getMaxIteration();
  j.max_change = in.getMaxChange();
  j.failures = in.getFailures();
  j.replacements = in.getReplacements();
  j.moves = in.getMoves();
  j.eta_seconds = in.getEtaSeconds();
  if (!std::isfinite(j.max_change) || !std::isfinite(j.eta_seconds)) {
    return InvalidArgument("job " + Printable(j.id) + ": a figure of its status is not finite");
  }
  auto tasks = in.getTaskList();
  if (tasks.size() > kMaxStatusTasks) {
    return InvalidArgument("job " + Printable(j.id) + ": status lists " +
                           std::to_string(tasks.size()) + " tasks, more than " +
                           std::to_string(kMaxStatusTasks));
  }
  j.task_list.reserve(tasks.size());
  for (auto t : tasks) {
    TaskStatus s;
    s.task = t.getTask();
    s.daemon = t.getDaemonId().cStr();
    if (!s.daemon.empty()) AIAC_RETURN_IF_ERROR(CheckName("daemon id", s.daemon));
    s.iteration = t.getIteration();
    s.change = t.getChange();
    if (!std::isfinite(s.change)) {
      return InvalidArgument("job " + Printable(j.id) + ": a task's change is not finite");
    }
    s.incarnation = t.getIncarnation();
    s.checkpoints = t.getCheckpoints();
    s.report_age_ms = t.getReportAgeMs();
    j.task_list.push_back(std::move(s));
  }
  return j;
}

}  // namespace aiac::net
