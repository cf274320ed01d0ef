#include "spawner/federation_status.h"

#include <cmath>
#include <ctime>
#include <map>

#include "core/printable.h"
#include "spawner/text_table.h"

namespace aiac::spawner {

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
  row.state = lost ? "lost" : !busy ? "free" : d.getRunning() ? "busy" : "granted";
  if (busy || lost) row.job = Text(d.getJob());
  row.heartbeat_age_s = static_cast<double>(d.getHeartbeatAgeMs()) / 1000;
  row.version = Text(d.getVersion());
  row.supernode = Text(d.getOwner());
  return row;
}

// "2026-11-26T18:40:12+0000", in local time.
std::string IsoTime(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "";
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &local);
  return buf;
}

std::string Fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string SecondsText(double s) { return s < 0 ? "-" : Fixed(s, "%.1fs"); }

}  // namespace

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

nlohmann::json ToJson(const net::JobStatus& j) {
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

std::string ToText(const FederationStatus& s) {
  std::string peers;
  for (const auto& p : s.peers) peers += (peers.empty() ? "" : ", ") + p;
  std::string out = "super-node " + s.supernode + (peers.empty() ? "" : ", peers " + peers) + ": " +
                    std::to_string(s.daemons.size()) + " daemons, " +
                    std::to_string(s.jobs.size()) +
                    (s.jobs.size() == 1 ? " running job\n" : " running jobs\n");
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : s.daemons) {
    rows.push_back({d.id, d.address, d.cluster, Fixed(d.power, "%.2f"), std::to_string(d.cores),
                    d.state, d.job.empty() ? "-" : d.job, d.task < 0 ? "-" : std::to_string(d.task),
                    SecondsText(d.heartbeat_age_s), d.version.empty() ? "-" : d.version,
                    d.supernode});
  }
  out += AlignedTable({"DAEMON", "ADDRESS", "CLUSTER", "POWER", "CORES", "STATE", "JOB", "TASK",
                       "HEARTBEAT", "VERSION", "SUPERNODE"},
                      rows);
  if (s.jobs.empty()) return out;
  rows.clear();
  for (const auto& j : s.jobs) {
    rows.push_back({j.id, j.app, j.spawner_id + "@" + j.spawner_address, std::to_string(j.tasks),
                    std::to_string(j.daemons), IsoTime(j.started_unix), j.phase,
                    std::to_string(j.min_iteration) + ".." + std::to_string(j.max_iteration),
                    Fixed(j.max_change, "%.3e"), std::to_string(j.failures),
                    std::to_string(j.replacements), std::to_string(j.moves),
                    SecondsText(j.eta_seconds)});
  }
  out += "\n" + AlignedTable({"JOB", "APP", "SPAWNER", "TASKS", "DAEMONS", "STARTED", "PHASE",
                              "ITERATIONS", "CHANGE", "FAILURES", "REPLACED", "MOVES", "ETA"},
                             rows);
  return out;
}

std::string ToText(const net::JobStatus& j) {
  std::string out =
      "job " + j.id + " (app " + j.app + ") of spawner " + j.spawner_id + "@" + j.spawner_address +
      " at super-node " + j.supernode + ", started " + IsoTime(j.started_unix) + ": " + j.phase +
      ", iterations " + std::to_string(j.min_iteration) + ".." + std::to_string(j.max_iteration) +
      ", max local change " + Fixed(j.max_change, "%.3e") + ", failures " +
      std::to_string(j.failures) + ", replacements " + std::to_string(j.replacements) + ", moves " +
      std::to_string(j.moves) + ", eta " + SecondsText(j.eta_seconds) + "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : j.task_list) {
    rows.push_back({std::to_string(t.task), t.daemon, std::to_string(t.iteration),
                    Fixed(t.change, "%.3e"), std::to_string(t.incarnation),
                    std::to_string(t.checkpoints),
                    t.report_age_ms < 0 ? "-" : SecondsText(t.report_age_ms / 1000.0)});
  }
  out += AlignedTable(
      {"TASK", "DAEMON", "ITERATION", "CHANGE", "INCARNATION", "CHECKPOINTS", "LAST REPORT"}, rows);
  return out;
}

}  // namespace aiac::spawner
