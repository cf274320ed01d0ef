#include "spawner/run_trace.h"

#include <fstream>

#include "spawner/supervisor.h"

namespace aiac::spawner {
namespace {

constexpr int kJobTrack = 0;  // tid of the phases; task t is tid t + 1

int64_t Micros(double seconds) { return static_cast<int64_t>(seconds * 1e6); }

}  // namespace

Result<std::unique_ptr<RunTrace>> RunTrace::Create(const std::string& path) {
  std::ofstream probe(path, std::ios::trunc);
  if (!probe) return InvalidArgument("--trace: cannot write " + path);
  return std::unique_ptr<RunTrace>(new RunTrace(path));
}

void RunTrace::Push(nlohmann::json event) {
  if (events_.size() >= kMaxEvents) {
    ++dropped_;
    return;
  }
  event["pid"] = 1;
  events_.push_back(std::move(event));
}

RunTrace::Track& RunTrace::TrackOf(size_t task) {
  if (tracks_.size() <= task) tracks_.resize(task + 1);
  Track& t = tracks_[task];
  if (!t.named) {
    t.named = true;
    const int tid = static_cast<int>(task) + 1;
    Push({{"ph", "M"},
          {"name", "thread_name"},
          {"tid", tid},
          {"args", {{"name", "task " + std::to_string(task)}}}});
    Push({{"ph", "M"},
          {"name", "thread_sort_index"},
          {"tid", tid},
          {"args", {{"sort_index", tid}}}});
  }
  return t;
}

void RunTrace::Add(const HistoryEntry& e, double seconds) {
  Track& t = TrackOf(e.task);
  const int tid = static_cast<int>(e.task) + 1;
  const int64_t ts = Micros(seconds);
  switch (e.kind) {
    case HistoryEntry::Kind::kReport:
      if (t.last_report_s >= 0 && e.iteration > t.last_iteration) {
        Push({{"ph", "X"},
              {"name", "iterations " + std::to_string(t.last_iteration + 1) + ".." +
                           std::to_string(e.iteration)},
              {"cat", "iterate"},
              {"tid", tid},
              {"ts", Micros(t.last_report_s)},
              {"dur", std::max<int64_t>(0, ts - Micros(t.last_report_s))},
              {"args",
               {{"iterations", e.iteration - t.last_iteration},
                {"change", e.change},
                {"daemon", e.daemon},
                {"incarnation", e.incarnation}}}});
      }
      if (t.last_report_s < 0 || e.iteration > t.last_iteration) {
        t.last_report_s = seconds;
        t.last_iteration = e.iteration;
      }
      if (e.checkpoints > t.checkpoints) {
        Push({{"ph", "i"},
              {"s", "t"},
              {"name", "checkpoint"},
              {"cat", "checkpoint"},
              {"tid", tid},
              {"ts", ts},
              {"args", {{"copies", e.checkpoints}, {"iteration", e.iteration}}}});
        t.checkpoints = e.checkpoints;
      }
      break;
    case HistoryEntry::Kind::kFailure:
      Push({{"ph", "i"},
            {"s", "t"},
            {"name", "daemon lost"},
            {"cat", "failure"},
            {"tid", tid},
            {"ts", ts},
            {"args", {{"daemon", e.daemon}, {"incarnation", e.incarnation}}}});
      t.lost_at_s = seconds;
      t.last_report_s = -1;
      break;
    case HistoryEntry::Kind::kResumed:
      if (t.lost_at_s >= 0) {
        Push({{"ph", "X"},
              {"name", "replacing"},
              {"cat", "failure"},
              {"tid", tid},
              {"ts", Micros(t.lost_at_s)},
              {"dur", std::max<int64_t>(0, ts - Micros(t.lost_at_s))},
              {"args", {{"daemon", e.daemon}, {"restored_iteration", e.iteration}}}});
      }
      t.lost_at_s = -1;
      t.last_report_s = seconds;
      t.last_iteration = e.iteration;
      t.checkpoints = e.checkpoints;
      break;
    case HistoryEntry::Kind::kMove:
      Push({{"ph", "i"},
            {"s", "t"},
            {"name", "items moved"},
            {"cat", "move"},
            {"tid", tid},
            {"ts", ts},
            {"args", {{"items", e.count}}}});
      break;
  }
}

void RunTrace::Phase(const std::string& name, double start_s, double end_s) {
  if (end_s <= start_s) return;
  Push({{"ph", "X"},
        {"name", name},
        {"cat", "phase"},
        {"tid", kJobTrack},
        {"ts", Micros(start_s)},
        {"dur", Micros(end_s) - Micros(start_s)}});
}

Status RunTrace::Write(const std::string& job_id) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", 1},
                    {"tid", kJobTrack},
                    {"args", {{"name", "job " + job_id}}}});
  events.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", 1},
                    {"tid", kJobTrack},
                    {"args", {{"name", "phases"}}}});
  for (auto& e : events_) events.push_back(std::move(e));
  events_.clear();
  nlohmann::json doc = {{"traceEvents", std::move(events)},
                        {"displayTimeUnit", "ms"},
                        {"otherData", {{"job", job_id}, {"dropped_events", dropped_}}}};
  std::ofstream out(path_, std::ios::trunc);
  out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  out.close();
  if (!out) return Unavailable("--trace: cannot write " + path_);
  return Status::Ok();
}

}  // namespace aiac::spawner
