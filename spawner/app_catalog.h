// What the spawner knows of each app it can run: how to check the job's parameters before any
// daemon is used, which tasks each task sends to, and how to check the gathered result.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "spawner/job_spec.h"
#include "spawner/run_summary.h"

namespace aiac::spawner {

class AppDriver {
 public:
  virtual ~AppDriver() = default;
  // Parameter problems, as one line.
  virtual Status Validate(const JobSpec& job) const = 0;
  // The tasks `task` sends dependency data to.
  virtual std::vector<uint32_t> Neighbours(uint32_t task, uint32_t count) const = 0;
  // Checks the gathered results; fills the summary's `result` object.
  virtual Status Check(const JobSpec& job, const std::vector<TaskOutcome>& tasks,
                       nlohmann::json& result) const = 0;
};

// The driver for `job.app`, or InvalidArgument naming the known apps.
Result<std::unique_ptr<AppDriver>> FindApp(const std::string& app);

}  // namespace aiac::spawner
