#include "net/federation_status.h"

#include <cmath>
#include <ctime>
#include <map>

#include "core/printable.h"

namespace aiac::net {

namespace {

std::string Text(capnp::Text::Reader t) { return Printable(t.cStr(), 128, false); }

DaemonRow ReadDaemon(proto::DaemonInfo::Reader d, bool lost) {
  DaemonRow row;
  row.id = Text(d.getId());
  row.address = Text(d.getAddress());
  row.cluster = Text(d.getCluster());
  row.power = std::isfinite(d.getPower()) ? d.getPower() : 0;
  row.cores = d.getCores();
  const bool busy = d.getState() == proto::DaemonState::BUSY;
  row.state = DaemonStateName(lost, busy, d.getRunning());
  if (busy || lost) row.job = Text(d.getJob());
  row.heartbeat_age_s = static_cast<double>(d.getHeartbeatAgeMs()) / 1000;
  row.version = Text(d.getVersion());
  row.supernode = Text(d.getOwner());
  return row;
}

}  // namespace

const char* DaemonStateName(bool lost, bool busy, bool running) {
  return lost ? "lost" : !busy ? "free" : running ? "busy" : "granted";
}

std::string IsoTime(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "";
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &local);
  return buf;
}

FederationStatus ReadStatusReport(proto::StatusReport::Reader r) {
  FederationStatus s;
  s.supernode = Text(r.getSupernodeId());
  for (auto p : r.getPeers()) s.peers.push_back(Text(p));
  for (auto j : r.getJobs()) {
    if (auto job = net::FromProto(j); job.ok()) {
      job->spawner_address = Printable(job->spawner_address, 128, false);
      s.jobs.push_back(std::move(*job));
    }
  }
  // Which task each daemon runs, from the jobs' rows.
  std::map<std::pair<std::string, std::string>, uint32_t> task_of;
  for (const auto& job : s.jobs) {
    for (const auto& t : job.task_list) task_of[{job.id, t.daemon}] = t.task;
  }
  for (auto d : r.getDaemons()) s.daemons.push_back(ReadDaemon(d, false));
  for (auto d : r.getLost()) s.daemons.push_back(ReadDaemon(d, true));
  for (auto& row : s.daemons) {
    if (row.state != "busy" && row.state != "granted") continue;
    if (auto it = task_of.find({row.job, row.id}); it != task_of.end()) row.task = it->second;
  }
  return s;
}

nlohmann::json ToJson(const JobStatus& j) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : j.task_list) {
    tasks.push_back(
        {{"task", t.task},
         {"daemon", t.daemon},
         {"iteration", t.iteration},
         {"change", t.change},
         {"incarnation", t.incarnation},
         {"checkpoints", t.checkpoints},
         {"report_age_s", t.report_age_ms < 0 ? nlohmann::json(nullptr)
                                              : nlohmann::json(t.report_age_ms / 1000.0)}});
  }
  return {{"id", j.id},
          {"app", j.app},
          {"spawner", j.spawner_id},
          {"spawner_address", j.spawner_address},
          {"supernode", j.supernode},
          {"tasks", j.tasks},
          {"daemons", j.daemons},
          {"started", IsoTime(j.started_unix)},
          {"started_unix", j.started_unix},
          {"phase", j.phase},
          {"iterations", {j.min_iteration, j.max_iteration}},
          {"max_change", j.max_change},
          {"failures", j.failures},
          {"replacements", j.replacements},
          {"moves", j.moves},
          {"eta_s", j.eta_seconds < 0 ? nlohmann::json(nullptr) : nlohmann::json(j.eta_seconds)},
          {"task_list", std::move(tasks)}};
}

nlohmann::json ToJson(const FederationStatus& s) {
  nlohmann::json daemons = nlohmann::json::array();
  for (const auto& d : s.daemons) {
    daemons.push_back({{"id", d.id},
                       {"address", d.address},
                       {"cluster", d.cluster},
                       {"power", d.power},
                       {"cores", d.cores},
                       {"state", d.state},
                       {"job", d.job.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.job)},
                       {"task", d.task < 0 ? nlohmann::json(nullptr) : nlohmann::json(d.task)},
                       {"heartbeat_age_s", d.heartbeat_age_s},
                       {"version", d.version},
                       {"supernode", d.supernode}});
  }
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& j : s.jobs) jobs.push_back(ToJson(j));
  return {{"supernode", s.supernode},
          {"peers", s.peers},
          {"daemons", std::move(daemons)},
          {"jobs", std::move(jobs)}};
}

}  // namespace aiac::net
