// The synthetic adaptive app (docs/balancing.md) as a plugin: each task holds a set of the
// workload's items (workload.h) and advances every one of them a step per iteration until each
// has taken `iterations` steps; the tasks do not depend on each other. The run is right when
// the gathered items are every item exactly once, each finished (`result.checksum`, `result.items`
// in the summary), and with verify = true their checksum is the one the spawner computes on its
// own (`result.expected_checksum`).
//
// Job parameters ([params]): items (20000), iterations (60), base_cost (400), phase_iterations
// (10), hot_fraction (0.25), hot_factor (4), seed (1), verify (false), item_bytes (0); see
// WorkloadSpec. Needs items >= tasks.
#pragma once

#include "app/app.h"
#include "apps/synthetic/workload.h"

namespace aiac::synthetic {

Result<WorkloadSpec> ParseWorkloadSpec(const app::JobParams& params);

class SyntheticApp final : public app::App {
 public:
  std::string_view name() const override { return "synthetic"; }
  Result<app::JobPlan> Prepare(const app::JobParams& params) override;
  // Items in proportion to the daemons' powers.
  Result<std::optional<app::JobPlan>> Reweigh(const app::JobParams& params,
                                              const std::vector<double>& task_powers) override;
  Result<std::unique_ptr<app::Task>> MakeTask(const app::JobParams& params, uint32_t task,
                                              std::string_view slice) override;
  Result<app::GatherReport> Gather(const app::JobParams& params,
                                   const std::vector<std::string>& slices) override;

 private:
  app::JobPlan Plan(const WorkloadSpec& spec, const std::vector<ItemRanges>& split) const;
};

// One task over the items of `ranges`, exposed for tests.
std::unique_ptr<app::Task> NewSyntheticTask(const WorkloadSpec& spec, const ItemRanges& ranges);

}  // namespace aiac::synthetic
