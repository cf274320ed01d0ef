#include "spawner/run_summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "spawner/log_view.h"

namespace aiac::spawner {

const char* RunStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kConverged:
      return "converged";
    case RunStatus::kFailed:
      return "failed";
    case RunStatus::kDiverged:
      return "diverged";
    case RunStatus::kAborted:
      return "aborted";
  }
  return "failed";
}

namespace {

// "iterations": the least and most any task computed, and each task's.
nlohmann::json IterationsJson(const std::vector<TaskOutcome>& tasks) {
  uint64_t lo = 0, hi = 0;
  if (!tasks.empty()) {
    auto [mn, mx] = std::minmax_element(
        tasks.begin(), tasks.end(),
        [](const TaskOutcome& a, const TaskOutcome& b) { return a.iterations < b.iterations; });
    lo = mn->iterations;
    hi = mx->iterations;
  }
  nlohmann::json j = {{"min", lo}, {"max", hi}, {"per_task", nlohmann::json::array()}};
  for (const auto& t : tasks) j["per_task"].push_back(t.iterations);
  return j;
}

// "per_task" and "checkpoints".
void AddTasks(const std::vector<TaskOutcome>& tasks, nlohmann::json& j) {
  j["per_task"] = nlohmann::json::array();
  uint64_t written = 0, bytes = 0;
  for (const auto& t : tasks) {
    j["per_task"].push_back({{"task", t.task},
                             {"daemon", t.daemon},
                             {"address", t.address},
                             {"iterations", t.iterations},
                             {"profile", ProfileJson(t.profile)}});
    written += t.checkpoints;
    bytes += t.checkpoint_bytes;
  }
  j["checkpoints"] = {{"written", written}, {"bytes", bytes}};
}

nlohmann::json ReplacementsJson(const std::vector<Replacement>& replacements) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : replacements) {
    j.push_back({{"task", r.task},
                 {"failed", r.failed},
                 {"daemon", r.daemon},
                 {"restored_iteration", r.restored_iteration},
                 {"seconds_to_resume", r.seconds_to_resume}});
  }
  return j;
}

nlohmann::json AppCrashesJson(const std::vector<AppCrashReport>& crashes) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : crashes) {
    j.push_back({{"task", c.task},
                 {"daemon", c.daemon},
                 {"iteration", c.iteration},
                 {"cause", c.cause},
                 {"stderr", c.stderr_tail}});
  }
  return j;
}

nlohmann::json LinksJson(const std::vector<LinkFigure>& links) {
  nlohmann::json j = nlohmann::json::array();
  for (const LinkFigure& l : links) {
    j.push_back({{"from", l.from},
                 {"to", l.to},
                 {"latency_ms", 1e3 * l.alpha},
                 {"mbps", l.seconds_per_byte > 0 ? nlohmann::json(8e-6 / l.seconds_per_byte)
                                                 : nlohmann::json()},
                 {"samples", l.samples}});
  }
  return j;
}

nlohmann::json BalancingJson(const BalancingStats& b) {
  return {{"mode", b.mode},
          {"migration", b.migration},
          {"checks", b.checks},
          {"redistributions", b.redistributions},
          {"moves", b.moves},
          {"abandoned", b.abandoned},
          {"items_moved", b.items_moved},
          {"items_between_clusters", b.items_between_clusters},
          {"seconds_moving", b.seconds_moving},
          {"planned_seconds", b.planned_seconds},
          {"coordinators", b.coordinators},
          {"relayed_reports", b.relayed_reports},
          {"predicted_gain", b.predicted_gain},
          {"observed_gain", b.observed_gain}};
}

}  // namespace

nlohmann::json ToJson(const RunSummary& s) {
  nlohmann::json j;
  j["job"] = s.job;
  j["job_id"] = s.job_id;
  j["app"] = s.app;
  j["status"] = RunStatusName(s.status);
  if (!s.error.empty()) j["error"] = s.error;
  j["mode"] = s.mode;
  j["tasks"] = s.tasks;
  j["daemons"] = s.daemons;
  j["mapping"] = s.mapping;
  j["wall_seconds"] = s.wall_seconds;
  j["setup_seconds"] = s.setup_seconds;
  j["compute_seconds"] = s.compute_seconds;
  j["detection_seconds"] =
      s.detection_seconds >= 0 ? nlohmann::json(s.detection_seconds) : nlohmann::json(nullptr);
  j["spawner_cpu_seconds"] = s.spawner_cpu_seconds;
  j["phases"] = {{"read", s.phases.read},
                 {"prepare", s.phases.prepare},
                 {"assign", s.phases.assign},
                 {"iterate", s.phases.iterate},
                 {"gather", s.phases.gather}};
  j["iterations"] = IterationsJson(s.per_task);
  j["residual"] = s.residual >= 0 ? nlohmann::json(s.residual) : nlohmann::json(nullptr);
  j["output"] = s.output.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.output);
  AddTasks(s.per_task, j);
  j["failures"] = s.failures;
  j["replacements"] = ReplacementsJson(s.replacements);
  j["app_crashes"] = AppCrashesJson(s.app_crashes);
  j["supernode_failovers"] = s.supernode_failovers;
  j["spawner_restarts"] = s.spawner_restarts;
  j["tightenings"] = s.tightenings;
  j["links"] = LinksJson(s.links);
  j["balancing"] = BalancingJson(s.balancing);
  j["partial"] = !s.succeeded() && !s.output.empty();
  if (!s.notes.empty()) j["notes"] = s.notes;
  j["result"] = s.result;
  return j;
}

std::string ToText(const RunSummary& s) {
  std::ostringstream out;
  auto j = ToJson(s);
  out << "job " << s.job << " (" << s.app << ", " << s.mode << "): " << RunStatusName(s.status)
      << " in " << s.wall_seconds << " s on " << s.tasks << " tasks / " << s.daemons
      << " daemons, iterations " << j["iterations"]["min"] << ".." << j["iterations"]["max"];
  if (s.residual >= 0) out << ", residual " << s.residual;
  if (s.failures > 0)
    out << ", " << s.failures << " daemons lost, " << s.replacements.size() << " replaced";
  if (!s.app_crashes.empty()) out << ", " << s.app_crashes.size() << " app crashes";
  if (s.supernode_failovers > 0) out << ", " << s.supernode_failovers << " super-node fail-overs";
  if (s.spawner_restarts > 0) out << ", " << s.spawner_restarts << " spawner restarts";
  if (j["checkpoints"]["written"].get<uint64_t>() > 0) {
    out << ", " << j["checkpoints"]["written"] << " checkpoints ("
        << j["checkpoints"]["bytes"].get<uint64_t>() / 1024 << " KiB)";
  }
  if (s.tightenings > 0) out << ", local tests tightened " << s.tightenings << " times";
  if (s.balancing.redistributions > 0) {
    out << ", balancing (" << s.balancing.mode << ") moved " << s.balancing.items_moved
        << " items in " << s.balancing.redistributions << " redistributions";
    if (s.balancing.items_between_clusters > 0) {
      out << " (" << s.balancing.items_between_clusters << " between clusters, "
          << s.balancing.migration << ")";
    }
  }
  if (!s.output.empty())
    out << (s.succeeded() ? ", solution in " : ", last (partial) result in ") << s.output;
  if (!s.result.empty()) out << ", result " << s.result.dump();
  char phases[160];
  std::snprintf(phases, sizeof phases,
                ", phases read %.2f / prepare %.2f / assign %.2f / iterate %.2f / gather %.2f s",
                s.phases.read, s.phases.prepare, s.phases.assign, s.phases.iterate,
                s.phases.gather);
  out << phases;
  for (const auto& note : s.notes) out << "\nnote: " << note;
  if (!s.error.empty()) out << "\nerror: " << s.error;
  return out.str();
}

}  // namespace aiac::spawner
