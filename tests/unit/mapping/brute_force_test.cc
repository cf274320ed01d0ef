// On tiny instances, every injective mapping is tried to find the optimal ET(App); each
// algorithm must be valid and no better than the optimum, and how far it is from it is printed.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "mapping/mapper.h"
#include "mapping_fixtures.h"
#include "model/et_model.h"

namespace aiac::mapping {
namespace {

double OptimalEt(const model::Platform& p, const model::Tig& t) {
  std::vector<int> free;
  for (int n = 0; n < static_cast<int>(p.nodes().size()); ++n)
    if (p.nodes()[n].free) free.push_back(n);
  std::vector<int> at(t.size(), -1);
  std::vector<bool> used(p.nodes().size(), false);
  double best = 1e300;
  std::function<void(size_t)> go = [&](size_t i) {
    if (i == t.size()) {
      best = std::min(best, model::AppTime(p, t, at));
      return;
    }
    for (int n : free) {
      if (used[n]) continue;
      used[n] = true;
      at[i] = n;
      go(i + 1);
      used[n] = false;
    }
    at[i] = -1;
  };
  go(0);
  return best;
}

TEST(BruteForceTest, AlgorithmsAgainstTheOptimum) {
  std::mt19937 rng(2024);
  const char* algos[] = {"maheve", "default", "aiac-qm", "f-ec"};
  double ratio_sum[4] = {0, 0, 0, 0};
  int optimal_hits[4] = {0, 0, 0, 0};
  const int trials = 150;
  for (int trial = 0; trial < trials; ++trial) {
    auto inst = testing::RandomInstance(rng, 1 + trial % 3, 3, 2 + trial % 4, 2);
    const double opt = OptimalEt(inst.platform, inst.tig);
    for (int a = 0; a < 4; ++a) {
      auto mapper = MakeMapper(algos[a], 0.1);
      ASSERT_TRUE(mapper.ok());
      auto m = (*mapper)->Map(inst.platform, inst.tig);
      const double et = model::AppTime(inst.platform, inst.tig, m.placement.node_of_task());
      ASSERT_GE(et, opt - 1e-9) << algos[a] << " beat the exhaustive optimum, trial " << trial;
      ratio_sum[a] += et / opt;
      optimal_hits[a] += et <= opt + 1e-9;
    }
  }
  // The instances are the same every run (seeded), so these are regression bounds: each
  // algorithm's mean ET(App) against the optimum measured when this test was written (maheve
  // 1.347, default 1.868, aiac-qm 1.043, f-ec 1.294; optimal on 83, 54, 123, 102 of 150), with
  // a margin. A change that makes an algorithm map worse fails here.
  const double worst_mean[4] = {1.45, 2.0, 1.10, 1.40};
  const int least_optimal[4] = {70, 40, 110, 90};
  for (int a = 0; a < 4; ++a) {
    std::printf("%-8s mean ET(App)/optimum %.3f, optimal on %d of %d instances\n", algos[a],
                ratio_sum[a] / trials, optimal_hits[a], trials);
    EXPECT_LE(ratio_sum[a] / trials, worst_mean[a]) << algos[a];
    EXPECT_GE(optimal_hits[a], least_optimal[a]) << algos[a];
  }
  // MAHEVE maps better than the order the super-node hands daemons out in (the paper's claim).
  EXPECT_LT(ratio_sum[0], ratio_sum[1]);
}

}  // namespace
}  // namespace aiac::mapping
