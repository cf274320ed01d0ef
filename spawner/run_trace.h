// `run --trace FILE`: the run as a Chrome trace (the JSON "Trace Event Format"), to open in
// Perfetto (ui.perfetto.dev) or chrome://tracing: one track per task, with a slice per stretch
// between two of its reports (named by the iterations it covers, its local change as an
// argument), instants for checkpoint copies acknowledged, item moves and the loss of its daemon,
// and a slice from the loss to the task running again. Times are microseconds since the run
// started. Events are kept in memory (at most kMaxEvents, then the rest are counted and left
// out) and written when the run ends.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace aiac::spawner {

struct HistoryEntry;

class RunTrace {
 public:
  static constexpr size_t kMaxEvents = 1000000;

  // Checks that `path` can be written (creates it), so a bad path fails before the run.
  static Result<std::unique_ptr<RunTrace>> Create(const std::string& path);

  // `seconds` since the run started.
  void Add(const HistoryEntry& e, double seconds);
  // The run's phases as slices of a "job" track.
  void Phase(const std::string& name, double start_s, double end_s);
  // Writes the file; an error when it cannot.
  Status Write(const std::string& job_id);
  const std::string& path() const { return path_; }
  size_t dropped() const { return dropped_; }

 private:
  explicit RunTrace(std::string path) : path_(std::move(path)) {}
  void Push(nlohmann::json event);
  struct Track {
    bool named = false;
    double last_report_s = -1;  // < 0: none since it started or resumed
    uint64_t last_iteration = 0;
    uint64_t checkpoints = 0;
    double lost_at_s = -1;
  };
  Track& TrackOf(size_t task);

  std::string path_;
  std::vector<nlohmann::json> events_;
  std::vector<Track> tracks_;
  size_t dropped_ = 0;
};

}  // namespace aiac::spawner
