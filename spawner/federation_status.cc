#include "spawner/federation_status.h"

#include <cstdio>

#include "spawner/text_table.h"

namespace aiac::spawner {

namespace {

std::string Fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string SecondsText(double s) { return s < 0 ? "-" : Fixed(s, "%.1fs"); }

}  // namespace

using net::IsoTime;

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
  // A spawner-lost job's figures are the last its spawner reported.
  const std::string phase = j.phase == net::kSpawnerLostPhase
                                ? "its spawner is lost: the tasks run on where they are, waiting "
                                  "for `aiac-spawner resume` (until the job's orphan_seconds); "
                                  "last reported"
                                : j.phase;
  std::string out =
      "job " + j.id + " (app " + j.app + ") of spawner " + j.spawner_id + "@" + j.spawner_address +
      " at super-node " + j.supernode + ", started " + IsoTime(j.started_unix) + ": " + phase +
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
