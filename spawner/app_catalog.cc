#include "spawner/app_catalog.h"

#include <charconv>
#include <cstring>

#include "apps/ring/ring_task.h"

namespace aiac::spawner {
namespace {

class RingDriver final : public AppDriver {
 public:
  Status Validate(const JobSpec& job) const override {
    if (job.tasks < 2) return InvalidArgument("ring: needs at least 2 tasks");
    return Rounds(job).status();
  }

  std::vector<uint32_t> Neighbours(uint32_t task, uint32_t count) const override {
    return {(task + 1) % count};
  }

  Status Check(const JobSpec& job, const std::vector<TaskOutcome>& tasks,
               nlohmann::json& result) const override {
    const uint64_t rounds = *Rounds(job);
    const uint64_t expected = apps::RingTask::Expected(job.tasks, rounds);
    uint64_t value = 0;
    if (!tasks.empty() && tasks[0].data.size() == 8) std::memcpy(&value, tasks[0].data.data(), 8);
    result = {{"value", value}, {"expected", expected}, {"rounds", rounds}};
    if (value != expected) {
      return Internal("ring: task 0 ended with " + std::to_string(value) + ", expected " +
                      std::to_string(expected));
    }
    for (const auto& t : tasks) {
      if (t.iterations != rounds) {
        return Internal("ring: task " + std::to_string(t.task) + " handled " +
                        std::to_string(t.iterations) + " tokens, expected " +
                        std::to_string(rounds));
      }
    }
    return Status::Ok();
  }

 private:
  static Result<uint64_t> Rounds(const JobSpec& job) {
    auto it = job.params.find("rounds");
    if (it == job.params.end()) return InvalidArgument("ring: params.rounds is missing");
    uint64_t v = 0;
    const std::string& s = it->second;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v == 0) {
      return InvalidArgument("ring: params.rounds must be a positive integer, not '" + s + "'");
    }
    return v;
  }
};

}  // namespace

Result<std::unique_ptr<AppDriver>> FindApp(const std::string& app) {
  if (app == "ring") return std::unique_ptr<AppDriver>(new RingDriver());
  return InvalidArgument("unknown app '" + app + "' (known apps: ring)");
}

}  // namespace aiac::spawner
