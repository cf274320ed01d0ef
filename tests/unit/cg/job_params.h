// The job parameters the CG unit tests build their apps from.
#pragma once

#include <map>
#include <string>

#include "app/app.h"

namespace aiac::cg {

inline app::JobParams Params(std::map<std::string, std::string> values, uint32_t tasks,
                             std::string base = "") {
  app::JobParams p;
  p.values = std::move(values);
  p.tasks = tasks;
  p.base_dir = std::move(base);
  return p;
}

}  // namespace aiac::cg
