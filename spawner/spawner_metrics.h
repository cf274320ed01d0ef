// What a spawner's `--metrics` adds to the network's (docs/operations.md, "Metrics"): the losses
// it detected, the replacements it made, how long each replaced task took to resume, and the
// items live balancing moved. The figures the run's summary ends with.
#pragma once

#include "core/metrics.h"

namespace aiac::spawner {

struct SpawnerMetrics {
  metrics::Counter& failures_detected;
  metrics::Counter& replacements;
  metrics::Histogram& resume_seconds;
  metrics::Counter& items_moved;

  static SpawnerMetrics& Get();
};

}  // namespace aiac::spawner
