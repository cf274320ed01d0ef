// The course of each job registered with this super-node, for the web page's chart: per task,
// points (seconds since the job registered here, iteration, local change) from the JobStatus its
// spawner sends at most once a second, and the moments the job's failure, replacement and move
// counts rose. Bounded: a task's series past kMaxPoints keeps every other point (the whole run
// at half the resolution), only the first kMaxTasks tasks are charted, and at most kMaxEvents
// marks are kept. Logic only; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "net/job_status.h"

namespace aiac::supernode {

class JobHistory {
 public:
  static constexpr size_t kMaxPoints = 600;
  static constexpr size_t kMaxTasks = 64;
  static constexpr size_t kMaxEvents = 500;

  // Adds `job`'s figures at `seconds` (any monotonic clock, in seconds).
  void Record(const net::JobStatus& job, double seconds);
  void Forget(const std::string& id);
  bool Has(const std::string& id) const { return jobs_.count(id) != 0; }

  // {"job", "tasks": [{"task", "points": [[t, iteration, change], ...]}], "events": [{"t",
  // "kind" (failure | replacement | move), "count"}]}; null when `id` is not recorded here.
  nlohmann::json ToJson(const std::string& id) const;

 private:
  struct Point {
    double t;
    uint64_t iteration;
    double change;
  };
  struct Event {
    double t;
    const char* kind;
    uint64_t count;  // the job's count after it rose
  };
  struct Course {
    double first_seen = 0;
    uint32_t failures = 0, replacements = 0;
    uint64_t moves = 0;
    std::map<uint32_t, std::vector<Point>> tasks;
    std::vector<Event> events;
  };
  std::map<std::string, Course> jobs_;
};

}  // namespace aiac::supernode
