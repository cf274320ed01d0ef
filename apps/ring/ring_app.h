// The ring app as a plugin: the RingTask state machine behind the app API. Parameters:
// rounds (positive integer). Needs at least 2 tasks; has no synchronous mode (one token).
#pragma once

#include "app/app.h"

namespace aiac::ring {

class RingApp final : public app::App {
 public:
  std::string_view name() const override { return "ring"; }
  Result<app::JobPlan> Prepare(const app::JobParams& params) override;
  Result<std::unique_ptr<app::Task>> MakeTask(const app::JobParams& params, uint32_t task,
                                              std::string_view slice) override;
  Result<app::GatherReport> Gather(const app::JobParams& params,
                                   const std::vector<std::string>& slices) override;
};

}  // namespace aiac::ring
