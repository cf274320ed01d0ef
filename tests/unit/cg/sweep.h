// One synchronous sweep of in-process CG tasks, for the CG unit tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "app/app.h"
#include "support/test_support.h"

namespace aiac::cg {

// One iteration of every task, each value delivered at once. Whether all are locally converged.
inline bool Sweep(std::vector<std::unique_ptr<app::Task>>& tasks) {
  bool all = true;
  for (uint32_t l = 0; l < tasks.size(); ++l) {
    EXPECT_TRUE(tasks[l]->Iterate().ok());
    for (auto& out : tasks[l]->TakeOutgoing()) EXPECT_OK(tasks[out.to]->Absorb(l, out.bytes));
    all = all && tasks[l]->LocallyConverged();
  }
  return all;
}

}  // namespace aiac::cg
