#include "spawner/spawner_metrics.h"

namespace aiac::spawner {

SpawnerMetrics& SpawnerMetrics::Get() {
  auto& r = metrics::Registry::Process();
  static SpawnerMetrics* m = new SpawnerMetrics{
      r.GetCounter("aiac_failures_detected_total",
                   "Task daemons lost (unreachable, disconnected or silent) while the job ran"),
      r.GetCounter("aiac_replacements_total", "Tasks moved to another daemon after a loss"),
      r.GetHistogram("aiac_resume_seconds",
                     "From a task daemon's loss to its task running again elsewhere (seconds)",
                     {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120}),
      r.GetCounter("aiac_items_moved_total", "Data items live balancing moved between tasks")};
  return *m;
}

}  // namespace aiac::spawner
